"""synthcity preset (implementations spec §4; V5, V7, V12, B2, O1-O4, O10)."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.accounting import summed_increments
from pategan_audit.components.logistic import LogisticFit
from pategan_audit.implementations import create


def fit(df, **kw):
    kw.setdefault("num_teachers", 3)
    kw.setdefault("max_iter", 2)
    kw.setdefault("epsilon", 1e6)
    return create("synthcity", **kw).fit(df, label="y")


def test_defaults_are_the_inner_class_as_benchmarked():
    cfg = create("synthcity").config
    assert (cfg.lam, cfg.num_moments, cfg.batch_size, cfg.generator_n_iter, cfg.max_iter) == (1e-3, 100, 200, 10, 10_000)
    assert (cfg.partition, cfg.accountant, cfg.teacher_model, cfg.reseed_each_fit) == (
        "resample_each_iteration", "synthcity", "logistic_refit", False)


def test_v5_seen_rows_grow_with_iterations(toy):
    one = fit(toy, max_iter=1)
    many = fit(toy, max_iter=8)
    n_fit = min(200, len(toy) // 3)
    assert all(len(r) == n_fit for r in one.trace.teacher_rows)
    assert all(len(r) > 2 * n_fit for r in many.trace.teacher_rows)  # V5: towards N
    fixed = fit(toy, max_iter=8, partition="disjoint")
    assert all(len(r) <= len(toy) // 3 for r in fixed.trace.teacher_rows)
    pooled = np.concatenate([sorted(r) for r in fixed.trace.teacher_rows])
    assert len(np.unique(pooled)) == len(pooled)  # disjoint across teachers


@pytest.mark.parametrize("accountant", ["synthcity", "paper"])
def test_v7_accountant_is_charged_only_for_uncharged_free_batches(toy, accountant):
    """α after training = Σ of the accountant kind's increments over the *charged* queries (O4)."""
    m = fit(toy, lam=1.0, accountant=accountant, max_iter=2)
    votes = np.concatenate(m.trace.votes)
    charged = np.concatenate(m.trace.extra["charged"])
    expected = summed_increments(accountant, n1=votes[charged], num_teachers=3, lam=1.0, num_moments=100)
    np.testing.assert_allclose(m.trace.alpha[-1], expected, rtol=1e-9)
    assert m.accountant.kind == accountant


def test_o4_majority_batches_are_zeroed_and_not_charged(toy):
    m = fit(toy, max_iter=3)  # λ = 1e-3: noise of scale 1000, about half of all batches are "majority 1"
    skipped = sum(m.trace.extra["skipped_batches"])
    charged = np.concatenate(m.trace.extra["charged"])
    labels = np.concatenate(m.trace.labels)
    assert skipped > 0 and (~charged).sum() == skipped * m.batch_size_
    assert (labels[~charged] == 0).all()
    assert m.accountant.num_queries == charged.sum()
    off = fit(toy, max_iter=3, skip_majority_batches=False)
    assert np.concatenate(off.trace.extra["charged"]).all() and sum(off.trace.extra["skipped_batches"]) == 0


@pytest.mark.parametrize("delta", [1e-5, 1e-2])
def test_o10_user_delta_is_ignored(toy, delta):
    assert fit(toy, delta=delta, max_iter=1).trace.extra["delta"] == pytest.approx(len(toy) ** -1.5)
    assert fit(toy, delta=delta, max_iter=1, ignore_user_delta=False).trace.extra["delta"] == delta


def test_o2_reseeding_makes_the_seed_irrelevant(toy):
    a = fit(toy, seed=1, reseed_each_fit=True).sample(50, seed=3)
    b = fit(toy, seed=2, reseed_each_fit=True).sample(50, seed=3)
    c = fit(toy, seed=2).sample(50, seed=3)
    assert a.equals(b) and not a.equals(c)


def test_o1_student_reads_real_rows(toy):
    assert len(fit(toy).trace.extra["student_rows"]) > 0
    assert len(fit(toy, student_reads_real=False).trace.extra["student_rows"]) == 0


def test_b2_logistic_teachers_are_new_every_iteration(toy):
    fits = []
    m = create("synthcity", num_teachers=3, max_iter=3, epsilon=1e6)
    m.callbacks.append(lambda model, it: fits.append(model.teachers.fit))
    m.fit(toy, label="y")
    assert all(isinstance(f, LogisticFit) for f in fits) and len({id(f) for f in fits}) == 3


def test_v12_outputs_stay_within_training_min_max(toy):
    s = fit(toy).sample(400, seed=0)
    for c in ["x1", "x2", "count"]:
        assert s[c].min() >= toy[c].min() and s[c].max() <= toy[c].max()
    assert list(s.dtypes) == list(toy.dtypes)


def test_o3_without_conditional_vectors(toy):
    m = fit(toy, conditional_sampler="none")
    assert m.cond_sampler.width == 0 and m.sample(20).shape == (20, 5)
    assert fit(toy).cond_sampler.width > 0


def test_released_runs_full_epochs_and_fits_teachers_on_whole_blocks(toy):
    m = fit(toy, harness=False, max_iter=1)
    batches = int(np.ceil(int(0.8 * len(toy)) / 200))
    assert m._queries_per_iteration() == 10 * batches * 200
    assert all(len(r) == len(toy) // 3 for r in m.trace.teacher_rows)  # all m rows of the block
