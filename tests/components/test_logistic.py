"""The batched Newton solver reaches scikit-learn's LogisticRegression optimum (same objective:
C * sum logloss + 0.5 ||w||^2, intercept unpenalised; implementations spec §3.2, §4.2)."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from pategan_audit.components.logistic import LogisticFit, fit_logistic_batched

DATA = Path(__file__).resolve().parents[2] / "data"
FILES = {
    "cervical_cancer": DATA / "cervical_cancer" / "authors_split" / "train_cervical_cancer.csv.gz",
    "epileptic_seizure": DATA / "epileptic_seizure" / "authors_split" / "train_epileptic_seizure.csv.gz",
    "isolet": DATA / "isolet" / "train_data.csv.gz",
}
# (k problems, m real rows per problem, column cap) -- small enough for a fast test
SIZES = {"cervical_cancer": (3, 200, None), "epileptic_seizure": (2, 300, None), "isolet": (2, 150, 200)}


def _teacher_problems(name: str, seed: int = 0):
    """k teacher-like problems: m min-max scaled real rows (label 1) against m
    generated-like rows (label 0: real rows with independently permuted columns plus noise)."""
    k, m, cap = SIZES[name]
    nrows = 2000 if name == "isolet" else None
    X = pd.read_csv(FILES[name], nrows=nrows).iloc[:, :-1].to_numpy(float)
    if cap is not None:
        X = X[:, :cap]
    lo, hi = X.min(0), X.max(0)
    X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for _ in range(k):
        real = X[rng.choice(len(X), m, replace=False)]
        fake = np.column_stack([rng.permutation(X[:, j])[:m] for j in range(X.shape[1])])
        fake = np.clip(fake + rng.normal(0, 0.05, fake.shape), 0, 1)
        xs.append(np.vstack([real, fake]))
        ys.append(np.r_[np.ones(m), np.zeros(m)])
    return np.stack(xs), np.stack(ys)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))


@pytest.mark.parametrize("name", list(FILES))
def test_matches_sklearn_lbfgs_on_real_data(name):
    X, y = _teacher_problems(name)
    fit = fit_logistic_batched(X, y)
    assert bool(fit.converged.all())
    pred = fit.predict(X)
    for t in range(X.shape[0]):
        ref = LogisticRegression(tol=1e-10, max_iter=10000).fit(X[t], y[t])
        assert _rel(fit.coef[t].numpy(), ref.coef_[0]) < 1e-4
        assert abs(fit.intercept[t].item() - ref.intercept_[0]) < 1e-4 * max(1.0, abs(ref.intercept_[0]))
        np.testing.assert_array_equal(pred[t], ref.predict(X[t]))
        np.testing.assert_allclose(fit.predict_proba(X)[t], ref.predict_proba(X[t])[:, 1], atol=1e-5)
        # lbfgs stops ~1e-6 short of the optimum; scikit-learn's own Newton solver agrees to ~1e-12
        exact = LogisticRegression(solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X[t], y[t])
        assert _rel(fit.coef[t].numpy(), exact.coef_[0]) < 1e-8


def test_matches_sklearn_sag_template():
    """synthcity's teacher template is LogisticRegression(solver='sag', max_iter=10000)
    (spec §4.2): run to a tight tolerance it reaches the same optimum."""
    X, y = _teacher_problems("cervical_cancer", seed=1)
    fit = fit_logistic_batched(X, y)
    for t in range(X.shape[0]):
        ref = LogisticRegression(solver="sag", tol=1e-9, max_iter=10000).fit(X[t], y[t])
        assert _rel(fit.coef[t].numpy(), ref.coef_[0]) < 1e-4
        # the released template (default tol 1e-4) stops short of the optimum but votes the same
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            released = LogisticRegression(solver="sag", max_iter=10000).fit(X[t], y[t])
        assert (released.predict(X[t]) == fit.predict(X)[t]).mean() > 0.99


def test_gradient_vanishes_and_objective_is_minimal():
    X, y = _teacher_problems("cervical_cancer", seed=2)
    fit = fit_logistic_batched(X, y, C=0.3)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)

    def objective(w, b):
        z = torch.einsum("kmd,kd->km", Xt, w) + b[:, None]
        return 0.3 * (torch.logaddexp(torch.zeros(()), z) - yt * z).sum(1) + 0.5 * (w * w).sum(1)

    z = torch.einsum("kmd,kd->km", Xt, fit.coef) + fit.intercept[:, None]
    r = 0.3 * (torch.sigmoid(z) - yt)
    assert torch.einsum("kmd,km->kd", Xt, r).add(fit.coef).abs().max() < 1e-6
    assert r.sum(1).abs().max() < 1e-6  # intercept unpenalised: its gradient is the residual sum
    gen = torch.Generator().manual_seed(0)
    f0 = objective(fit.coef, fit.intercept)
    for _ in range(5):
        dw = 1e-3 * torch.randn(fit.coef.shape, generator=gen, dtype=torch.float64)
        assert bool((objective(fit.coef + dw, fit.intercept) > f0).all())


def test_no_intercept_and_warm_start():
    X, y = _teacher_problems("cervical_cancer", seed=3)
    no_b = fit_logistic_batched(X, y, fit_intercept=False)
    ref = LogisticRegression(fit_intercept=False, tol=1e-10, max_iter=10000).fit(X[0], y[0])
    assert _rel(no_b.coef[0].numpy(), ref.coef_[0]) < 1e-4
    assert torch.all(no_b.intercept == 0)
    cold = fit_logistic_batched(X, y)
    warm = fit_logistic_batched(X, y, init=cold)
    assert torch.allclose(warm.coef, cold.coef, rtol=0, atol=1e-8)
    assert int(warm.n_iter.max()) <= 1


def test_predict_shapes_and_types():
    X, y = _teacher_problems("cervical_cancer")
    fit = fit_logistic_batched(torch.from_numpy(X).float(), torch.from_numpy(y))
    assert isinstance(fit, LogisticFit) and fit.num_models == 3
    shared = torch.rand(7, X.shape[2])
    votes = fit.predict(shared)
    assert votes.shape == (3, 7) and votes.dtype == torch.int64
    assert set(votes.unique().tolist()) <= {0, 1}
    per_model = fit.predict(np.repeat(shared.numpy()[None], 3, axis=0))
    np.testing.assert_array_equal(per_model, votes.numpy())
    with pytest.raises(ValueError, match="columns"):
        fit.predict(torch.rand(7, X.shape[2] + 1))


def test_bad_input():
    X = np.random.default_rng(0).uniform(size=(2, 10, 3))
    y = np.tile(np.r_[np.ones(5), np.zeros(5)], (2, 1))
    with pytest.raises(ValueError, match="shape"):
        fit_logistic_batched(X[0], y[0])
    with pytest.raises(ValueError, match="single class"):
        fit_logistic_batched(X, np.ones((2, 10)))
    with pytest.raises(ValueError, match="only 0 and 1"):
        fit_logistic_batched(X, 2 * y)
    with pytest.raises(ValueError, match="C must"):
        fit_logistic_batched(X, y, C=0.0)
    with pytest.raises(ValueError, match="NaN"):
        fit_logistic_batched(np.full((2, 10, 3), np.nan), y)


def test_problems_converging_at_different_iterations():
    """Warm-start only problem 0: it stops at once while problem 1 keeps iterating (the
    active-subset path) and both end at their own optimum."""
    X, y = _teacher_problems("cervical_cancer", seed=4)
    X, y = X[:2], y[:2]
    cold = fit_logistic_batched(X, y)
    init = LogisticFit(
        coef=torch.stack([cold.coef[0], torch.zeros_like(cold.coef[1])]),
        intercept=torch.stack([cold.intercept[0], torch.zeros(())]).to(torch.float64),
        n_iter=cold.n_iter, converged=cold.converged,
    )
    mixed = fit_logistic_batched(X, y, init=init)
    assert int(mixed.n_iter[0]) == 0 and int(mixed.n_iter[1]) > 2
    assert torch.allclose(mixed.coef, cold.coef, rtol=0, atol=1e-8)


def test_separable_data_matches_sklearn_newton():
    """Perfectly separable rows: the L2 penalty keeps the optimum finite; the intercept's
    Hessian entry is tiny but the solver still lands on scikit-learn's optimum."""
    rng = np.random.default_rng(5)
    pos = rng.uniform(0.6, 1.0, size=(40, 3))
    neg = rng.uniform(0.0, 0.4, size=(40, 3))
    X = np.vstack([pos, neg])[None]
    y = np.r_[np.ones(40), np.zeros(40)][None]
    fit = fit_logistic_batched(X, y, C=100.0)
    ref = LogisticRegression(C=100.0, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X[0], y[0])
    assert _rel(fit.coef[0].numpy(), ref.coef_[0]) < 1e-6
    np.testing.assert_array_equal(fit.predict(X[0])[0], y[0])


def _wide_problems(seed: int, k: int = 3, m: int = 240, d: int = 90):
    """k problems with more than 64 features (the truncated-Newton path): correlated features,
    labels from a noisy linear rule."""
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(d, d)) / np.sqrt(d)
    X = rng.normal(size=(k, m, d)) @ mix + 0.5
    w = rng.normal(size=d)
    y = (X @ w + rng.normal(scale=2.0, size=(k, m)) > np.median(X @ w)).astype(float)
    return X, y


def test_truncated_newton_reaches_the_exact_optimum_and_warm_starts():
    X, y = _wide_problems(6)
    fit = fit_logistic_batched(X, y)
    assert fit.n_cg > 0 and bool(fit.converged.all())  # d = 90 > 64: conjugate gradients were used
    for t in range(X.shape[0]):
        exact = LogisticRegression(solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X[t], y[t])
        assert _rel(fit.coef[t].numpy(), exact.coef_[0]) < 1e-8
        assert abs(fit.intercept[t].item() - exact.intercept_[0]) < 1e-8 * max(1.0, abs(exact.intercept_[0]))
    # warm start from a neighbouring problem's optimum (a teacher's previous iteration)
    X2, _ = _wide_problems(7)
    X2 = 0.5 * (X + X2)
    cold = fit_logistic_batched(X2, y)
    warm = fit_logistic_batched(X2, y, init=fit)
    assert torch.allclose(warm.coef, cold.coef, rtol=0, atol=1e-8)
    narrow = fit_logistic_batched(X[:, :, :20], y)
    assert narrow.n_cg == 0  # d <= 64: exact Newton steps, no conjugate gradients


def test_a_failed_inexact_direction_falls_back_to_exact_newton(monkeypatch):
    """If a conjugate-gradient direction is useless (here: forced uphill), the line search
    rejects it; the solver goes on in float64, and after a second failure takes exact Newton
    steps (no more CG), ending at the same optimum."""
    from pategan_audit.components import logistic

    X, y = _wide_problems(8, k=2)
    reference = fit_logistic_batched(X, y)
    real_pcg = logistic._pcg
    calls = []

    def uphill_twice(hv, b, factor, rtol, live):
        calls.append(1)
        x, steps = real_pcg(hv, b, factor, rtol, live)
        return (-x if len(calls) <= 2 else x), steps

    monkeypatch.setattr(logistic, "_pcg", uphill_twice)
    fit = logistic.fit_logistic_batched(X, y)
    assert len(calls) == 2 and bool(fit.converged.all())
    assert torch.allclose(fit.coef, reference.coef, rtol=0, atol=1e-8)


def test_float32_and_numpy_inputs_give_the_same_fit():
    X, y = _teacher_problems("cervical_cancer", seed=6)
    X32 = X.astype(np.float32)
    a = fit_logistic_batched(torch.from_numpy(X32), torch.from_numpy(y))
    b = fit_logistic_batched(X32.astype(np.float64), y)
    assert torch.equal(a.coef, b.coef) and torch.equal(a.intercept, b.intercept)


def test_unscaled_wide_features_still_reach_the_optimum():
    """Features in the thousands: float32 gradients stall early, the solver goes on in float64
    and lands on the same optimum as for the scaled problem mapped back."""
    X, y = _wide_problems(9, k=2, m=200, d=70)
    big = fit_logistic_batched(1000.0 * X, y)
    assert bool(big.converged.all())
    for t in range(2):
        exact = LogisticRegression(solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(1000.0 * X[t], y[t])
        assert _rel(big.coef[t].numpy(), exact.coef_[0]) < 1e-6
