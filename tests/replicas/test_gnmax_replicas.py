"""fit_many for gnmax equals one fit per seed (replicas/gnmax.py).

As for the other presets (tests/replicas/test_neural_replicas.py), everything discrete must be
equal: rows consumed, votes, noise, labels, answered counts, the RDP curve, ε̂, iterations.
Networks and samples are equal up to float rounding, with a looser tolerance than the other
presets' 1e-5: gnmax takes 1,000 Adam steps (lr 1e-3) and Adam divides each gradient by its own
running scale, so a gradient of almost nothing (a saturated sigmoid output) still moves a weight
by up to lr per step in a direction set by its last bits. The ~1e-7 difference of a batched
product from a single one (shape-dependent MKL kernels) then grows to ~1e-4 in a few generator
weights (measured: 1.8e-4 for seed 3 on the 60-row toy; a one-ulp nudge of a single fit's
initial student weights moves them by 1.7e-6). 1e-3 still fails for any replica mix-up (weights
of different seeds differ by ~1e-1).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit.implementations import batched_support, create, fit_many
from pategan_audit.replicas.gnmax import GNMaxStep

from ..implementations.conftest import make_toy, toy_bounds

WEIGHT_TOL = 1e-3


def _nets(model):
    return [model.gen_net, model.student, model.teachers.net]


def assert_same_gnmax_fit(batched, single):
    assert batched.trace.extra["batched"] is True
    tb, ts = batched.trace, single.trace
    assert tb.iterations == ts.iterations
    assert tb.eps_hat == ts.eps_hat
    np.testing.assert_array_equal(np.array(tb.alpha), np.array(ts.alpha))
    assert tb.teacher_rows == ts.teacher_rows
    np.testing.assert_array_equal(batched.seen_matrix(), single.seen_matrix())
    assert tb.extra["answered"] == ts.extra["answered"]
    assert batched.accountant.num_queries == single.accountant.num_queries
    for key in ("votes", "noise", "labels"):
        a, b = getattr(tb, key), getattr(ts, key)
        assert len(a) == len(b)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    for a, b in zip(tb.extra.get("charged", []), ts.extra.get("charged", [])):
        np.testing.assert_array_equal(a, b)
    assert [len(r) for r in batched.replay_rows_] == [len(r) for r in single.replay_rows_]
    for x, y in zip(batched.replay_labels_, single.replay_labels_):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    for nb, ns in zip(_nets(batched), _nets(single)):
        for p, q in zip(nb.parameters(), ns.parameters()):
            assert p.shape == q.shape
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=WEIGHT_TOL, rtol=0)
    with torch.no_grad():  # released rows in the model's [0, 1] space, same latent codes
        a = batched._generate(64, torch.Generator().manual_seed(0)).numpy()
        b = single._generate(64, torch.Generator().manual_seed(0)).numpy()
    np.testing.assert_allclose(a, b, atol=WEIGHT_TOL, rtol=0)


def _compare(toy, seeds, **kw):
    kw.setdefault("public_bounds", toy_bounds(toy))
    models = fit_many("gnmax", toy, seeds=seeds, label="y", **kw)
    singles = [create("gnmax", seed=s, **kw).fit(toy, label="y") for s in seeds]
    for m, s in zip(models, singles):
        assert_same_gnmax_fit(m, s)
    return models, singles


def test_gnmax_is_batched_in_the_default_analysis_only():
    assert batched_support("gnmax")
    assert not batched_support("gnmax", analysis="data_dependent")


def test_default_settings_equal_single_fits():
    """The preset's defaults (k, σ and the number of iterations from N, ε, δ; 1,000 generator
    steps) on a small table, with the per-query records; two seeds (a replica mix-up needs two)."""
    toy = make_toy(60)
    _, singles = _compare(toy, [3, 11], record=True)
    assert singles[0].trace.extra["steps_per_iteration"] * singles[0].trace.iterations >= 1000


def test_tiny_table_rule_equals_single_fits():
    """A 5-row table (the audit's Querybased game): k = N = 5 teachers, one iteration of 16
    queries, 1,000 generator steps on the replay buffer; two seeds."""
    toy = make_toy(5)
    _, singles = _compare(toy, [0, 3], record=True)
    assert all(s.num_teachers_ == 5 and s.trace.iterations == 1 for s in singles)


def test_students_that_start_at_different_iterations_equal_single_fits():
    """Several iterations, and replicas whose first answered query comes at different iterations
    (0, 1 and 3 here): their students start then, each group with its own Adam step count."""
    toy = make_toy(60)
    kw = dict(planned_queries=24, query_batch=2, generator_steps=24, threshold=0.9, num_teachers=12, record=True)
    _, singles = _compare(toy, [0, 1, 5, 2], **kw)
    first = [next(i for i, a in enumerate(s.trace.extra["answered"]) if a > 0) for s in singles]
    assert len(set(first)) >= 3, first
    assert all(s.trace.iterations > 5 for s in singles)


def test_different_tables_are_stacked_apart():
    tables = [make_toy(40, seed=1), make_toy(60, seed=2), make_toy(40, seed=3)]
    bounds = toy_bounds(make_toy(60, seed=2))
    kw = dict(public_bounds=bounds, planned_queries=32, query_batch=8, generator_steps=16, num_teachers=4)
    seeds = [0, 1, 2]
    models = fit_many("gnmax", tables, seeds=seeds, label="y", max_replicas=2, **kw)
    for m, s, t in zip(models, seeds, tables):
        assert_same_gnmax_fit(m, create("gnmax", seed=s, **kw).fit(t, label="y"))


def test_signature_separates_plans():
    toy = make_toy(60)
    a = create("gnmax", public_bounds=toy_bounds(toy), planned_queries=32)
    b = create("gnmax", public_bounds=toy_bounds(toy), planned_queries=64)
    for m in (a, b):
        m.begin_fit(m._accept(toy, "y"), "y")
    assert GNMaxStep.signature(a) != GNMaxStep.signature(b)


def test_audit_factory_fit_many_equals_its_single_fits():
    from pategan_audit.auditing.settings import PresetFactory

    toy = make_toy(5)
    factory = PresetFactory("gnmax", overrides={"public_bounds": toy_bounds(toy)})
    assert factory.batched()
    models = factory.fit_many(toy, seeds=[7, 8], label="y")
    for seed, m in zip([7, 8], models):
        assert_same_gnmax_fit(m, factory(seed).fit(toy, label="y"))


@pytest.mark.parametrize("analysis", ["data_dependent"])
def test_unbatched_analysis_still_falls_back(analysis):
    toy = make_toy(40)
    kw = dict(public_bounds=toy_bounds(toy), planned_queries=16, query_batch=8, generator_steps=4, analysis=analysis)
    models = fit_many("gnmax", toy, seeds=[0], label="y", **kw)
    assert models[0].trace.extra["batched"] is False
