"""updated preset (implementations spec §3; V4, V11, V15, B1, B3)."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.components.logistic import LogisticFit
from pategan_audit.components.teachers import NeuralTeachers
from pategan_audit.implementations import create

from .conftest import toy_bounds


def fit(df, **kw):
    kw.setdefault("num_teachers", 3)
    kw.setdefault("max_iter", 3)
    return create("updated", **kw).fit(df, label="y")


def test_defaults_are_as_benchmarked():
    cfg = create("updated").config
    assert (cfg.lam, cfg.num_moments, cfg.batch_size, cfg.max_iter) == (1e-3, 20, 64, 10_000)  # spec §3.6, paper §5
    assert (cfg.accountant, cfg.partition, cfg.teacher_model, cfg.laplace_scale_convention) == (
        "updated", "last_block", "logistic_refit", "scale_lambda")


def test_v4_every_teacher_sees_the_last_block(toy):
    m = fit(toy)
    N, k = len(toy), 3
    rows = m.trace.teacher_rows
    assert all(r == set(m.blocks_[-1].tolist()) for r in rows)
    assert len(set().union(*rows)) == N // k  # blocks 0..k-2 and the remainder are never seen
    fixed = fit(toy, partition="disjoint")
    assert [fixed.trace.teacher_rows[t] for t in range(k)] == [set(b.tolist()) for b in fixed.blocks_]


def test_v11_bounds_from_data_or_public(toy):
    m = fit(toy)
    assert m.trace.bounds == toy_bounds(toy)
    wide = {c: (lo - 10.0, hi + 10.0) for c, (lo, hi) in toy_bounds(toy).items()}
    p = fit(toy, bounds="public", public_bounds=wide)
    assert p.trace.bounds == wide
    s = p.sample(300, seed=1)
    assert all(s[c].between(lo, hi).all() for c, (lo, hi) in wide.items())


def test_v15_scale_lambda_labels_are_the_majority(toy):
    """V15 'how to test': at λ = 1e-3 with scale λ the label is the majority vote whenever
    |n1 - k/2| >= 0.5 (k odd: always)."""
    m = fit(toy, max_iter=4)
    votes, labels = np.concatenate(m.trace.votes), np.concatenate(m.trace.labels)
    np.testing.assert_array_equal(labels, (votes > 1.5).astype(int))
    assert np.abs(np.concatenate(m.trace.noise)).max() < 0.1
    inverse = fit(toy, max_iter=4, laplace_scale_convention="inverse_lambda")
    v, lab = np.concatenate(inverse.trace.votes), np.concatenate(inverse.trace.labels)
    assert 0.3 < np.mean(lab != (v > 1.5)) < 0.7  # noise of scale 1000: near coin flips


def test_b1_logistic_teachers_are_new_every_iteration(toy):
    fits = []
    m = create("updated", num_teachers=3, max_iter=4)
    m.callbacks.append(lambda model, it: fits.append(model.teachers.fit))
    m.fit(toy, label="y")
    assert len(fits) == 4 and all(isinstance(f, LogisticFit) for f in fits)
    assert len({id(f) for f in fits}) == 4 and m.trace.extra["teacher_refits"] == 4
    persistent = []
    n = create("updated", num_teachers=3, max_iter=3, teacher_model="neural_persistent")
    n.callbacks.append(lambda model, it: persistent.append(model.teachers))
    n.fit(toy, label="y")
    assert isinstance(persistent[0], NeuralTeachers) and all(t is persistent[0] for t in persistent)


def test_b3_released_output_stays_in_unit_interval(toy):
    raw = fit(toy, inverse_transform=False).sample(200, seed=0)
    assert raw.to_numpy().min() > 0 and raw.to_numpy().max() < 1
    out = fit(toy).sample(200, seed=0)
    assert list(out.dtypes) == list(toy.dtypes)  # harness: inverse transform + rounding (protocols A.1)
    assert out["count"].between(3, 39).all() and out["count"].max() > 1


def test_vote_independent_stopping_runs_158_iterations(toy):
    """spec §8.2: λ = 1e-3, n_s = 1, B = 64, L = 20, δ = 1e-5, ε = 1 -> ε̂ = 0.578334 after one
    iteration and exactly 158 iterations (every query costs U_l)."""
    m = create("updated", num_teachers=2, max_iter=None, record=False).fit(toy, label="y")
    assert m.batch_size_ == 64
    assert m.trace.eps_hat[0] == pytest.approx(0.578334, abs=5e-7)
    assert m.trace.iterations == 158
    assert m.trace.eps_hat[-2] < 1.0 <= m.trace.eps_hat[-1]  # overshoot by one iteration (spec §0.4)


def test_harness_batch_is_capped_by_partition_size(toy):
    assert fit(toy, num_teachers=10).batch_size_ == min(64, len(toy) // 10)
    assert fit(toy, num_teachers=10, harness=False).batch_size_ == 64
