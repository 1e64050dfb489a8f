"""``fit_many("synthcity", ...)``: the batched replicas equal one-by-one fits (pategan_audit.replicas.synthcity)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pategan_audit.implementations import create, fit_many
from pategan_audit.implementations.many import batched_support
from pategan_audit.replicas import synthcity as batched_synthcity
from pategan_audit.replicas.synthcity import SynthcityStep, clip_per_replica

from ..implementations.conftest import CERVICAL

# Network weights: the stacked replicas run the same float32 operations as a single fit, but a
# batched matrix product over R > 1 replicas may sum in another order than the single fit's 2-D
# product, so weights differ by float32 rounding (measured <= 3e-8 after a few iterations; bitwise
# equal for R = 1). Adam normalises each step to at most ~lr = 1e-4 per weight, so a tenth of one
# step bounds what rounding can add over these short runs while any real error (a wrong draw, mask
# or gradient) moves weights by whole steps (a 0.1 % error in the conditional loss: ~1.6e-4 after 3
# iterations). Over long runs (not these) a pre-activation within rounding of a ReLU kink can flip
# and move some weights by up to ~one step (seen once: 7e-5 after 10 full-Cervical iterations).
WEIGHT_ATOL = 1e-5
# The teachers are re-fitted by the batched solver to a 1e-10 relative gradient tolerance; above 64
# features its float32/float64 switch is shared by the batch, so the coefficients agree to that
# tolerance (measured ~2e-8 on features of order 1), not bitwise.
COEF_ATOL = 1e-6


def tiny(n: int = 5) -> pd.DataFrame:
    """A binary and a real-valued column."""
    return pd.DataFrame({"b": [0, 1, 0, 1, 1][:n], "x": [0.5, 1.7, -0.3, 2.2, 0.9][:n]})


@pytest.fixture(scope="module")
def cervical_small() -> pd.DataFrame:
    return pd.read_csv(CERVICAL).sample(201, random_state=0).reset_index(drop=True)


def _params(m) -> list[tuple[str, torch.Tensor]]:
    return [("gen." + n, p) for n, p in m.gen_net.named_parameters()] + [("student." + n, p) for n, p in m.student.named_parameters()]


def assert_same_fit(a, b) -> None:
    """``a`` from fit_many, ``b`` from a single fit with the same seed and table."""
    ta, tb = a.trace, b.trace
    assert a.fitted_ and a.trace.extra["batched"]
    assert ta.iterations == tb.iterations
    # the accountant: release_votes charges all replicas with one [R, k+1] @ [k+1, L] product, which
    # sums in another order than a single fit's per-batch product (differences ~1e-16 relative)
    assert len(ta.alpha) == len(tb.alpha)
    np.testing.assert_allclose(ta.eps_hat, tb.eps_hat, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.array(ta.alpha), np.array(tb.alpha), rtol=1e-12, atol=1e-300)
    for key in ("votes", "noise", "labels"):
        xs, ys = getattr(ta, key), getattr(tb, key)
        assert len(xs) == len(ys) and all(np.array_equal(x, y) for x, y in zip(xs, ys)), key
    assert all(np.array_equal(x, y) for x, y in zip(ta.extra["charged"], tb.extra["charged"]))
    assert ta.extra["skipped_batches"] == tb.extra["skipped_batches"]
    assert ta.teacher_rows == tb.teacher_rows
    assert ta.extra["student_rows"] == tb.extra["student_rows"]
    assert ta.extra["best_order"] == tb.extra["best_order"]
    assert all(np.array_equal(x, y) for x, y in zip(a.first_seen_subsets(), b.first_seen_subsets()))
    assert a.accountant.num_queries == b.accountant.num_queries
    for (name, p), (_, q) in zip(_params(a), _params(b)):
        torch.testing.assert_close(p, q, atol=WEIGHT_ATOL, rtol=0, msg=name)
    if a.config.teacher_model == "logistic_refit":
        torch.testing.assert_close(a.teachers.fit.coef, b.teachers.fit.coef, atol=COEF_ATOL, rtol=0)
        torch.testing.assert_close(a.teachers.fit.intercept, b.teachers.fit.intercept, atol=COEF_ATOL, rtol=0)
    else:
        for p, q in zip(a.teachers.net.parameters(), b.teachers.net.parameters()):
            torch.testing.assert_close(p, q, atol=WEIGHT_ATOL, rtol=0)
            torch.testing.assert_close(a.teachers.optimizer.state[p]["exp_avg_sq"], b.teachers.optimizer.state[q]["exp_avg_sq"],
                                       atol=1e-8, rtol=1e-4)
    # the same random streams afterwards: the optimiser state and the streams were left as a single fit leaves them
    assert torch.equal(a.train_gen.get_state(), b.train_gen.get_state())
    assert torch.equal(a.noise_gen.get_state(), b.noise_gen.get_state())
    for p, q in zip(a.gen_net.parameters(), b.gen_net.parameters()):
        sa, sb = a.opt_generator.state[p], b.opt_generator.state[q]
        torch.testing.assert_close(sa["exp_avg"], sb["exp_avg"], atol=WEIGHT_ATOL, rtol=0)
        assert float(sa["step"]) == float(sb["step"])
    sa, sb = a.sample(50, seed=7), b.sample(50, seed=7)
    assert list(sa.columns) == list(sb.columns) and (sa.dtypes == sb.dtypes).all()
    np.testing.assert_allclose(sa.to_numpy(dtype=float), sb.to_numpy(dtype=float), rtol=1e-4, atol=1e-4)


def check(frames, seeds, **overrides):
    many = fit_many("synthcity", frames, seeds=seeds, **overrides)
    for m, s, df in zip(many, seeds, frames):
        assert_same_fit(m, create("synthcity", seed=s, **overrides).fit(df))
    return many


def test_cervical_replicas_with_different_tables_match_single_fits(cervical_small):
    # 201 and 200 rows stack together (same encoded width and batch: padded rows); a third table
    # encodes differently and forms its own group
    other = cervical_small.drop(index=[5]).reset_index(drop=True)
    frames = [cervical_small, cervical_small.iloc[:200], other, cervical_small]
    models = [create("synthcity", seed=s, num_teachers=5) for s in range(4)]
    sigs = []
    for m, df in zip(models, frames):
        m.begin_fit(m._accept(df, None), None)
        sigs.append(SynthcityStep.signature(m))
    assert sigs[0] == sigs[1] == sigs[3] != sigs[2]
    check(frames, [0, 1, 2, 3], num_teachers=5, max_iter=3)


def test_tiny_table_replicas_match_single_fits():
    check([tiny(), tiny(), tiny(4)], [3, 4, 5], num_teachers=2, max_iter=6)


def test_replicas_stopping_at_different_iterations_are_dropped_and_match():
    # λ = 0.05, ε = 1: the seeds spend their budget after 3 or 4 iterations
    many = check([tiny()] * 4, [0, 1, 2, 3], num_teachers=2, lam=0.05, max_iter=8)
    assert len({m.trace.iterations for m in many}) > 1 and max(m.trace.iterations for m in many) < 8


def test_reseed_each_fit_gives_every_replica_the_seed_zero_streams():
    many = check([tiny()] * 3, [0, 1, 2], num_teachers=2, max_iter=3, reseed_each_fit=True)
    assert all(np.array_equal(x, y) for x, y in zip(many[0].trace.noise, many[2].trace.noise))
    assert many[0].sample(20, seed=1).equals(many[1].sample(20, seed=1))


@pytest.mark.parametrize("overrides", [
    dict(harness=False, max_iter=2),  # released: teachers on whole blocks, every batch of the pool
    dict(hyperparameters="paper", max_iter=2),  # MLP generator, 5 critic steps per generator step
    dict(partition="disjoint", conditional_sampler="none", max_iter=3),
    dict(vote_mechanism="two_noise_argmax", skip_majority_batches=False, discriminator_dropout=0.0, clipping_value=0.0,
         max_iter=2),
    dict(stopping="safe", lam=0.05, epsilon=2.0, max_iter=6, record=False),
    dict(teacher_model="neural_persistent", max_iter=3),  # B2 fixed
    dict(student_reads_real=False, max_iter=4),  # O1 fixed: penalty on random positive/negative pairs
    dict(student_reads_real=False, teacher_model="neural_persistent", hyperparameters="paper", max_iter=2),
])
def test_other_settings_match_single_fits(overrides):
    assert batched_support("synthcity", **overrides)
    many = fit_many("synthcity", [tiny()] * 2, seeds=[0, 1], num_teachers=2, **overrides)
    for m, s in zip(many, [0, 1]):
        single = create("synthcity", seed=s, num_teachers=2, **overrides).fit(tiny())
        if overrides.get("record", True):
            assert_same_fit(m, single)
        else:
            np.testing.assert_allclose(m.trace.eps_hat, single.trace.eps_hat, rtol=1e-12, atol=0)
            assert m.trace.extra["skipped_batches"] == single.trace.extra["skipped_batches"]
            for (name, p), (_, q) in zip(_params(m), _params(single)):
                torch.testing.assert_close(p, q, atol=WEIGHT_ATOL, rtol=0, msg=name)


def test_registered_for_fit_many():
    from pategan_audit.implementations.many import BATCHED

    assert BATCHED["synthcity"] == batched_synthcity.__name__
    assert batched_support("synthcity") and batched_support("synthcity", harness=False, teacher_model="neural_persistent")


def test_clip_per_replica_is_clip_grad_norm_of_each_replica():
    gen = torch.Generator().manual_seed(0)
    grads = [torch.randn(3, 4, 5, generator=gen), torch.randn(3, 1, 5, generator=gen) * 0.01]
    grads[0][1] *= 1e-3  # replica 1 below the threshold: unchanged
    expected = []
    for r in range(3):
        params = [torch.nn.Parameter(torch.zeros_like(g[r])) for g in grads]
        for p, g in zip(params, grads):
            p.grad = g[r].clone()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        expected.append([p.grad for p in params])
    clip_per_replica(grads, 1.0)
    for r in range(3):
        for g, e in zip(grads, expected[r]):
            torch.testing.assert_close(g[r], e)
