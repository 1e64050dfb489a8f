"""fit_many for original and turing equals one fit per seed (replicas/wgan.py).

Tolerance for network weights: the batched path multiplies [R, n, in] @ [R, in, out]
(baddbmm) where a single fit uses nn.Linear (addmm with the transposed weight); float32
rounding of a few ulps per product (~1e-7 relative) moves the weights by at most ~1e-6 after
a few Adam steps (lr 1e-4; measured <= 1e-6 here); 1e-5 leaves room while still failing for any
replica mix-up (weights of different seeds differ by ~1e-1). Everything discrete (rows,
indicator-label flips, blocks, iterations) must be equal; samples agree up to that rounding
(integer columns are rounded by the harness: equal unless a value sits at a .5 edge).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.components.networks import Mlp
from pategan_audit.implementations import create, fit_many
from pategan_audit.implementations.many import batched_support
from pategan_audit.replicas.wgan import StackedMlp, signature

from ..implementations.conftest import make_toy

WEIGHT_TOL = 1e-5


def _params(model):
    return list(model.G.parameters()) + list(model.D.parameters())


def assert_same_fit(batched, single, *, weight_tol=WEIGHT_TOL):
    tb, ts = batched.trace, single.trace
    assert batched.fitted_ and tb.extra["batched"] is True
    assert tb.iterations == ts.iterations
    assert tb.teacher_rows == ts.teacher_rows
    np.testing.assert_array_equal(tb.extra["label_flips"], ts.extra["label_flips"])
    for key in ("sigma", "num_teachers", "batch_size", "gp_weight", "z_dim", "max_iter", "num_critics"):
        assert tb.extra[key] == ts.extra[key]
    assert ("blocks" in tb.extra) == ("blocks" in ts.extra)
    for a, b in zip(tb.extra.get("blocks", []), ts.extra.get("blocks", [])):
        np.testing.assert_array_equal(a, b)
    assert tb.bounds == ts.bounds
    for p, q in zip(_params(batched), _params(single), strict=True):
        assert p.shape == q.shape
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=weight_tol, rtol=0)
    for opt in ("opt_G", "opt_D"):  # Adam moments written back too
        sb, ss = getattr(batched, opt).state, getattr(single, opt).state
        assert len(sb) == len(ss)
        for p, q in zip(getattr(batched, opt).param_groups[0]["params"], getattr(single, opt).param_groups[0]["params"]):
            for key in ss[q]:
                np.testing.assert_allclose(sb[p][key].numpy(), ss[q][key].numpy(), atol=weight_tol, rtol=1e-4)
    a, b = batched.sample(50), single.sample(50)
    assert list(a.columns) == list(b.columns)
    np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), atol=1e-3)


def check(name, data, seeds, label=None, **kw):
    many = fit_many(name, data, seeds=seeds, label=label, **kw)
    frames = data if isinstance(data, list) else [data] * len(seeds)
    for s, df, m in zip(seeds, frames, many):
        assert_same_fit(m, create(name, seed=s, **kw).fit(df, label=label))
    return many


CASES = {
    "original": {"max_iter": 6},
    "original-conditional-own": {"max_iter": 5, "conditional": True, "critic_batch_source": "own_partition"},
    "original-released-paper": {"max_iter": 4, "harness": False, "hyperparameters": "paper",
                                "conditional": True},
    "turing": {"max_iter": 5},
    "turing-own": {"max_iter": 4, "critic_batch_source": "own_partition", "integer_decode": "truncate"},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_many_equals_single_fits(case):
    name = case.split("-")[0]
    kw = CASES[case]
    assert batched_support(name, **kw)
    check(name, make_toy(100), [0, 1, 2], label="y", **kw)  # 100 rows: the paper batch (64) fits uncapped


@pytest.mark.parametrize("name", ["original", "turing"])
def test_tables_of_different_sizes_form_groups(name):
    """D and D' of an audit: replicas with 60 and 59 rows are stacked in two groups."""
    toy = make_toy(60)
    frames = [toy, toy.iloc[1:], toy, toy.iloc[1:]]
    kw = {"max_iter": 4, "critic_batch_source": "own_partition", "num_teachers": 3}
    if name == "original":
        kw["conditional"] = True
    many = check(name, frames, [5, 6, 7, 8], label="y", **kw)
    sigs = [signature(m) for m in many]
    assert sigs[0] == sigs[2] != sigs[1] == sigs[3]


def test_tiny_table_zero_latent_width():
    """d < 4: z_dim = 0, the generator's first layer has no inputs (output from the biases)."""
    tiny = pd.DataFrame(np.random.default_rng(0).integers(0, 2, (5, 3)), columns=list("abc"))
    many = check("original", tiny, [0, 1], max_iter=4)
    assert many[0].z_dim_ == 0
    check("turing", tiny, [3, 4], max_iter=3)


@pytest.mark.parametrize("name", ["original", "turing"])
def test_batched_equals_unbatched(name):
    toy = make_toy(60)
    a = fit_many(name, toy, seeds=[0, 1, 2], max_iter=4)
    b = fit_many(name, toy, seeds=[0, 1, 2], max_iter=4, batched=False)
    assert [m.trace.extra["batched"] for m in a] == [True] * 3
    assert [m.trace.extra["batched"] for m in b] == [False] * 3
    for x, y in zip(a, b):
        assert x.trace.teacher_rows == y.trace.teacher_rows
        np.testing.assert_array_equal(x.trace.extra["label_flips"], y.trace.extra["label_flips"])
        for p, q in zip(_params(x), _params(y)):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=WEIGHT_TOL, rtol=0)


def test_hooks_after_batched_fit():
    """critic_score and progress callbacks work on batched replicas; chunks give the same fits."""
    toy = make_toy(60)
    done = []
    many = fit_many("original", toy, seeds=[0, 1, 2], max_iter=3, max_replicas=2, progress=done.append)
    assert done == [1, 2, 3]
    single = create("original", seed=1, max_iter=3).fit(toy)
    np.testing.assert_allclose(many[1].critic_score(toy.iloc[:10]), single.critic_score(toy.iloc[:10]), atol=1e-4)
    assert many[1].trace.iterations == 3


def test_stacked_mlp_matches_replicas():
    gens = [torch.Generator().manual_seed(s) for s in range(3)]
    mlps = [Mlp([4, 5, 5, 2], "tanh", "sigmoid", generator=g) for g in gens]
    stacked = StackedMlp(mlps)
    x = torch.randn(3, 7, 4)
    out = stacked(x)
    for r, m in enumerate(mlps):
        torch.testing.assert_close(out[r], m(x[r]))
    with torch.no_grad():
        for p in stacked.parameters():
            p.add_(1.0)
    stacked.write_back(1, mlps[1])
    torch.testing.assert_close(stacked(x)[1], mlps[1](x[1]))


def test_one_stacked_mlp_is_the_mlp_bitwise():
    """R = 1 keeps nn.Linear's parameters and kernels: outputs and gradients bit for bit."""
    mlp = Mlp([4, 5, 5, 2], "tanh", "sigmoid", generator=torch.Generator().manual_seed(0))
    stacked = StackedMlp([mlp])
    assert [tuple(p.shape) for p in stacked.parameters()] == [(5, 4), (5, 5), (2, 5), (5,), (5,), (2,)]
    x = torch.randn(1, 37, 4)
    out = stacked(x)
    assert out.shape == (1, 37, 2) and torch.equal(out[0], mlp(x[0]))
    lins = [mod for mod in mlp.net if isinstance(mod, torch.nn.Linear)]
    mine = torch.autograd.grad(out.square().mean(), [*stacked.weight, *stacked.bias])
    theirs = torch.autograd.grad(mlp(x[0]).square().mean(), [*(lin.weight for lin in lins), *(lin.bias for lin in lins)])
    assert len(mine) == len(theirs) == 6 and all(torch.equal(a, b) for a, b in zip(mine, theirs))
