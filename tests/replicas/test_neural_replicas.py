"""fit_many for borealis, smartnoise and corrected equals one fit per seed (replicas/neural.py).

A single fit is the replica step at R = 1 (``test_neural_one_step.py`` holds it to the
straightforward single-fit loop, bit for bit); here R > 1 replicas are held to it.
Tolerance for network weights: a stacked replica multiplies [R, n, in] @ [R, in, out] (bmm)
where one network multiplies [n, in] @ [1, in, out] (broadcast matmul), and smartnoise's stacked
LayerNorm applies its affine step separately; float32 rounding of a few ulps per step (1e-7 relative) grows
through a few Adam steps (lr 1e-4) to at most ~1e-7 absolute here; 1e-5 leaves room while
still failing for any replica mix-up (weights of different seeds differ by ~1e-1).
Everything discrete (rows, votes, noise, labels, accountant, iterations) must be equal.
"""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.implementations import create, fit_many
from pategan_audit.replicas.neural import NeuralStep

from ..implementations.conftest import make_toy, toy_bounds

WEIGHT_TOL = 1e-5


def _nets(model):
    return [model.gen_net, model.student, model.teachers.net]


def assert_same_fit(batched, single, *, weight_tol=WEIGHT_TOL):
    tb, ts = batched.trace, single.trace
    assert tb.iterations == ts.iterations
    assert tb.teacher_rows == ts.teacher_rows
    np.testing.assert_allclose(tb.eps_hat, ts.eps_hat, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.array(tb.alpha), np.array(ts.alpha), rtol=1e-12, atol=1e-300)
    for key in ("votes", "noise", "labels"):
        a, b = getattr(tb, key), getattr(ts, key)
        assert len(a) == len(b)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    for nb, ns in zip(_nets(batched), _nets(single)):
        for p, q in zip(nb.parameters(), ns.parameters()):
            assert p.shape == q.shape
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=weight_tol, rtol=0)
    a, b = batched.sample(40).to_numpy(float), single.sample(40).to_numpy(float)
    np.testing.assert_allclose(a, b, atol=1e-3)  # integer columns are rounded: equal unless at a .5 edge


CASES = {
    "borealis": {"num_teachers": 3, "max_iter": 4},
    "borealis-conditional": {"num_teachers": 3, "max_iter": 4, "conditional": True, "generation_noise": "uniform"},
    "smartnoise": {"num_teachers": 3, "max_iter": 4},
    "smartnoise-paper": {"num_teachers": 3, "max_iter": 4, "hyperparameters": "paper"},
    "corrected": {"num_teachers": 3, "max_iter": 4},
    "corrected-dependent": {"num_teachers": 3, "max_iter": 4, "charging": "data_dependent", "teacher_hidden": (4,)},
    "corrected-replace_one": {"num_teachers": 3, "max_iter": 4, "neighbours": "replace_one"},
}


def test_corrected_small_and_empty_blocks_equal_single_fits():
    """Independent assignment with many teachers on few rows: blocks of random width (padded in
    the stacked sampler), blocks smaller than B (with-replacement fill) and empty blocks (real
    term weighted 0) all occur, and each replica still equals its single fit."""
    toy = make_toy(24)
    kw = dict(num_teachers=9, max_iter=3, batch_size=3, public_bounds=toy_bounds(toy))
    seeds = list(range(8))
    models = fit_many("corrected", toy, seeds=seeds, label="y", **kw)
    singles = [create("corrected", seed=s, **kw).fit(toy, label="y") for s in seeds]
    sizes = [[len(b) for b in m.blocks_] for m in singles]
    assert any(0 in z for z in sizes) and any(min(z) < 3 for z in sizes), sizes
    assert len({max(z) for z in sizes}) > 1, "tables of different widths must be stacked for this test to mean something"
    for m, s in zip(models, singles):
        assert_same_fit(m, s)
        np.testing.assert_array_equal(m.seen_matrix(), s.seen_matrix())
        empty = [t for t, b in enumerate(s.blocks_) if len(b) == 0]
        assert not s.seen_matrix()[empty].any()  # an empty teacher consumed no real row


@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_many_equals_single_fits(case):
    name = case.split("-")[0]
    toy = make_toy(120)
    kw = dict(CASES[case])
    if name == "corrected":
        kw["public_bounds"] = toy_bounds(toy)
    seeds = [3, 11, 4]
    models = fit_many(name, toy, seeds=seeds, label="y", **kw)
    assert all(m.trace.extra["batched"] for m in models)
    for s, m in zip(seeds, models):
        assert_same_fit(m, create(name, seed=s, **kw).fit(toy, label="y"))


def test_replicas_with_different_tables_and_budget_stops():
    """Two table sizes (two stacked groups) and a budget that stops replicas at different
    iterations (data-dependent borealis accountant at a large λ): each equals its single fit."""
    tables = [make_toy(90, seed=1), make_toy(120, seed=2), make_toy(90, seed=3), make_toy(120, seed=4)]
    kw = dict(num_teachers=3, max_iter=60, lam=0.05, epsilon=3.0)
    seeds = [0, 1, 2, 3]
    models = fit_many("borealis", tables, seeds=seeds, label="y", max_replicas=3, **kw)
    singles = [create("borealis", seed=s, **kw).fit(t, label="y") for s, t in zip(seeds, tables)]
    iters = [m.trace.iterations for m in singles]
    assert min(iters) < 60, "the budget must stop the run before the cap for this test to mean something"
    for m, s in zip(models, singles):
        assert_same_fit(m, s, weight_tol=1e-4)


def test_smartnoise_refuses_below_accountant_floor_like_a_single_fit():
    toy = make_toy(60)
    with pytest.raises(ValueError, match="refuses to train"):
        fit_many("smartnoise", toy, seeds=[0, 1], label="y", num_teachers=2, epsilon=0.01)


def test_signature_separates_shapes():
    a = create("borealis", num_teachers=3, max_iter=1)
    b = create("borealis", num_teachers=3, max_iter=1)
    a.begin_fit(a._accept(make_toy(90), "y"), "y")
    b.begin_fit(b._accept(make_toy(120), "y"), "y")
    assert NeuralStep.signature(a) != NeuralStep.signature(b)
