"""fit_many("updated", ...) batched (replicas.updated.UpdatedStep) against one-by-one fits."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit import datasets
from pategan_audit.components.logistic import LogisticFit
from pategan_audit.components.teachers import NeuralTeachers
from pategan_audit.implementations import create, fit_many
from pategan_audit.implementations.many import BATCHED, batched_support
from pategan_audit.replicas import updated as family

SEEDS = [0, 1, 2]
# Float tolerances. The stacked networks run R replicas through batched kernels (bmm/baddbmm over
# the replica axis, element-wise maps over R·n values) whose summation order and SIMD tail
# handling can differ from a single fit's kernels by ~1 ulp per operation (e.g. torch.sigmoid
# computes the last values of a tensor that is not a multiple of the vector width with a scalar
# path). Over <= 20 RMSProp/Adam steps at lr 1e-4 the observed differences are <= 3e-9 on float32
# weights of magnitude ~0.01-1; 1e-6 leaves a wide margin and is still far below one step's change
# (lr 1e-4). Logistic teachers: the exact solver stops at a gradient of 1e-10·max(1, m), i.e. the
# coefficients of two runs on inputs differing by float32 rounding agree to ~1e-7 (observed <= 3e-8).
NET_ATOL = 1e-6
COEF_ATOL = 1e-6


@pytest.fixture(scope="module")
def cervical() -> pd.DataFrame:
    return datasets.load("cervical_cancer", subsample=200).train.reset_index(drop=True)


@pytest.fixture(scope="module")
def worst() -> pd.DataFrame:
    return datasets.worst_case("in")


def _params(m) -> list[torch.Tensor]:
    ps = list(m.gen_net.parameters()) + list(m.student.parameters())
    if m.config.teacher_model == "neural_persistent":
        ps += list(m.teachers.net.parameters())
    return [p.detach() for p in ps]


def assert_same_fit(a, b) -> None:
    """``a`` (from fit_many) fitted as ``b`` (a single fit with the same seed and table)."""
    assert a.trace.iterations == b.trace.iterations
    np.testing.assert_allclose(a.trace.eps_hat, b.trace.eps_hat, rtol=0, atol=1e-12)
    assert len(a.trace.alpha) == len(b.trace.alpha)
    for x, y in zip(a.trace.alpha, b.trace.alpha):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)
    for key in ("votes", "noise", "labels"):
        xs, ys = getattr(a.trace, key), getattr(b.trace, key)
        assert len(xs) == len(ys) == (a.trace.iterations if a.config.record else 0)
        for x, y in zip(xs, ys):
            np.testing.assert_array_equal(x, y)
    assert a.trace.teacher_rows == b.trace.teacher_rows
    assert a.trace.extra["teacher_refits"] == b.trace.extra["teacher_refits"]
    for p, q in zip(_params(a), _params(b)):
        torch.testing.assert_close(p, q, rtol=0, atol=NET_ATOL)
    if a.config.teacher_model == "logistic_refit":
        assert isinstance(a.teachers.fit, LogisticFit) and a.teachers.fit.num_models == b.teachers.fit.num_models
        torch.testing.assert_close(a.teachers.fit.coef, b.teachers.fit.coef, rtol=0, atol=COEF_ATOL)
        torch.testing.assert_close(a.teachers.fit.intercept, b.teachers.fit.intercept, rtol=0, atol=COEF_ATOL)
    # every stream was drawn from exactly as in the single fit (a stopped replica draws no more)
    for g in ("train_gen", "noise_gen", "init_gen"):
        assert torch.equal(getattr(a, g).get_state(), getattr(b, g).get_state()), g
    sa, sb = a.sample(50, seed=7), b.sample(50, seed=7)
    assert list(sa.columns) == list(sb.columns)
    np.testing.assert_allclose(sa.to_numpy(float), sb.to_numpy(float), rtol=0, atol=1e-4)
    assert a.fitted_ and a.trace.extra["batched"] is True


def check(data, seeds=SEEDS, **kw) -> list:
    frames = data if isinstance(data, list) else [data] * len(seeds)
    many = fit_many("updated", data, seeds=seeds, **kw)
    singles = [create("updated", seed=s, **kw).fit(df) for s, df in zip(seeds, frames)]
    for a, b in zip(many, singles):
        assert_same_fit(a, b)
    return many


def test_registered_and_supported():
    assert BATCHED["updated"] == "pategan_audit.replicas.updated"
    assert batched_support("updated")
    for kw in ({"teacher_model": "neural_persistent"}, {"partition": "disjoint"}, {"hyperparameters": "paper"}):
        assert family.supports(create("updated", **kw).config)


def test_cervical_capped_at_max_iter(cervical):
    many = check(cervical, num_teachers=3, max_iter=8)
    assert [m.trace.iterations for m in many] == [8, 8, 8]
    # hooks after the fit read the written-back teachers: k rows of the last refit
    m = many[0]
    assert m.teachers.fit.num_models == 3
    with torch.no_grad():
        n1 = m.teachers.votes(m._fakes(m.fixed_latent(5, 0)))
    assert n1.shape == (5,) and int(n1.max()) <= 3
    ce = m.teacher_cross_entropy([np.arange(4)], m.fixed_latent(6, 1))
    assert ce.shape == (3, 1) and np.isfinite(ce).all()
    assert "ms" in m.opt_student.state[next(m.student.parameters())]


def test_cervical_stops_by_accountant(cervical, monkeypatch):
    monkeypatch.setattr(family, "_CHUNK_VALUES", 1)  # the teachers' fakes generated one replica at a time
    kw = dict(num_teachers=3, lam=0.005, max_iter=40)
    single = create("updated", seed=0, **kw).fit(cervical)
    assert single.trace.iterations < 20 and single.trace.eps_hat[-1] >= 1.0  # the accountant stops it
    check(cervical, **kw)


def test_worst_case_replicas_stop_at_different_iterations(worst):
    """Data-dependent accountant: replicas of one stack stop at different iterations; a stopped
    replica is written back and dropped while the others go on."""
    kw = dict(num_teachers=2, lam=0.05, accountant="paper", laplace_scale_convention="inverse_lambda",
              epsilon=1.39, max_iter=20)
    many = check(worst, seeds=[0, 1, 3], **kw)
    its = [m.trace.iterations for m in many]
    assert len(set(its)) > 1 and max(its) < 20


def test_worst_case_capped(worst):
    check(worst, num_teachers=2, max_iter=12)


def test_worst_case_safe_stopping_two_noise_unrecorded(worst):
    """Per-replica release rule and stopping rule; ``record=False`` as the audit's shadow models."""
    kw = dict(num_teachers=2, lam=0.05, accountant="paper", laplace_scale_convention="inverse_lambda", epsilon=1.39,
              max_iter=20, stopping="safe", vote_mechanism="two_noise_argmax")
    many = check(worst, **kw)
    assert all(m.trace.eps_hat[-1] <= 1.39 for m in many)
    check(worst, num_teachers=2, max_iter=5, record=False, bounds="public", public_bounds={c: (0.0, 1.0) for c in "ABC"})


@pytest.mark.parametrize("kw", [
    dict(partition="disjoint"),
    dict(teacher_model="neural_persistent"),
    dict(hyperparameters="paper"),
    dict(hyperparameters="paper", teacher_model="neural_persistent", partition="disjoint"),
], ids=["disjoint", "neural", "paper", "paper-neural-disjoint"])
def test_switches(cervical, kw):
    many = check(cervical, num_teachers=3, max_iter=4, **kw)
    if kw.get("teacher_model") == "neural_persistent":
        assert isinstance(many[0].teachers, NeuralTeachers) and many[0].teachers.net.num_models == 3


def test_different_tables(cervical, worst):
    """Two row counts in one call: the replicas are grouped by shape and each group stacked."""
    check([cervical, cervical.iloc[:150].reset_index(drop=True), cervical], num_teachers=3, max_iter=5)
    check([worst, datasets.worst_case("out"), worst], num_teachers=2, max_iter=5)


def test_batched_false_matches_batched(worst):
    kw = dict(num_teachers=2, max_iter=6)
    a = fit_many("updated", worst, seeds=SEEDS, **kw)
    b = fit_many("updated", worst, seeds=SEEDS, batched=False, **kw)
    assert all(m.trace.extra["batched"] is False for m in b)
    for x, y in zip(a, b):
        y.trace.extra["batched"] = True  # the only intended difference
        assert_same_fit(x, y)
