"""Exact batched L2 logistic regression: k independent problems solved at once.

The updated and synthcity teachers are scikit-learn ``LogisticRegression`` models re-created
and re-fitted from scratch every iteration (implementation notes §updated.architecture, §synthcity.architecture, bugs B1/B2):
updated uses the defaults (lbfgs), synthcity ``solver="sag", max_iter=10000``. Both minimise
the same strictly convex objective

    f(w, b) = C * sum_i logloss(y_i, x_i.w + b) + 0.5 * ||w||^2        (intercept b unpenalised)

so its minimiser is unique and the solver only changes how closely it is approached. This
module solves k such problems jointly with a damped Newton method (IRLS), theta = [w; b]:

* gradient  g = C X^T (p - y) + [w; 0]            (float64 for the stopping test)
* Hessian   H = C X^T diag(p(1-p)) X + diag(1, ..., 1, 0)
* step      Newton direction H^{-1} g, backtracking (Armijo) line search per problem,
* stop      per problem when ||g||_inf <= tol * max(1, C * m).

Two ways to get the Newton direction; they end at the same optimum and differ only in cost:

* direct (d <= 64 features): float64 Hessian and a linear solve every step, O(k m d^2).
* truncated Newton (d > 64): the Newton system is solved by preconditioned conjugate gradients
  (Nocedal & Wright, *Numerical Optimization*, §7.1, Eisenstat-Walker forcing), one
  Hessian-vector product ``X^T (s * (X v))`` per CG step: two float32 passes over the rows,
  O(k m d). The preconditioner is a float32 Hessian, formed at the starting point and once
  more when the gradient has fallen 100-fold, so the last (quadratically convergent) steps
  need one to three CG steps each. Outer steps use float32 gradients while
  ``||g|| > 1e-6 * max(1, C*m)`` (and they still reduce it); from then on the logits,
  gradient, line search and stopping test are float64, so float32 changes the path, not the
  answer.

Newton converges quadratically, so the optimum is reached to the stated tolerance, where lbfgs
(tol 1e-4, max_iter 100) or sag (tol 1e-4) stop earlier. Deviation: at scikit-learn's default
tolerances its coefficients differ from ours by the solver's own tolerance; the predictions
(hard votes, implementation notes §common.votes) almost always agree. The tests compare against scikit-learn run to
tight tolerance.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import expit

__all__ = ["LogisticFit", "fit_logistic_batched"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 60
_DIRECT_MAX_FEATURES = 64  # up to this width a d x d Hessian per Newton step is the cheaper way
_SWITCH = 1e-6  # relative gradient below which outer steps are computed in float64
_REFRESH = 1e-2  # re-form the preconditioner (once) after the gradient fell by this factor
_MAX_CG = 50


@dataclass
class LogisticFit:
    """k fitted logistic regressions.

    coef: [k, d] float64 weights; intercept: [k] float64 biases;
    n_iter: [k] Newton iterations each problem used; converged: [k] bool;
    n_cg: conjugate-gradient steps (Hessian-vector products) of the truncated-Newton solver.
    """

    coef: torch.Tensor
    intercept: torch.Tensor
    n_iter: torch.Tensor
    converged: torch.Tensor
    n_cg: int = 0

    @property
    def num_models(self) -> int:
        return int(self.coef.shape[0])

    def decision_function(self, X) -> torch.Tensor | np.ndarray:
        """Logits ``x.w_t + b_t``: [k, n] for X of shape [n, d] (every model scores the same
        rows, as teachers voting on one generated batch) or [k, n, d] (one set per model)."""
        as_numpy = isinstance(X, np.ndarray)
        Xt = torch.from_numpy(np.ascontiguousarray(_as_float64(X, "X")))
        k, d = self.coef.shape
        if Xt.ndim == 2:
            if Xt.shape[1] != d:
                raise ValueError(f"X has {Xt.shape[1]} columns but the models were fitted on {d}")
            z = self.coef @ Xt.T + self.intercept[:, None]
        elif Xt.ndim == 3:
            if Xt.shape[0] != k or Xt.shape[2] != d:
                raise ValueError(f"X of shape {tuple(Xt.shape)} does not match {k} models with {d} features; pass [n, d] or [k, n, d]")
            z = torch.einsum("knd,kd->kn", Xt, self.coef) + self.intercept[:, None]
        else:
            raise ValueError(f"X must be 2-D [n, d] or 3-D [k, n, d], got {Xt.ndim}-D")
        return z.numpy() if as_numpy else z

    def predict_proba(self, X) -> torch.Tensor | np.ndarray:
        """P(y = 1 | x) per model: [k, n]. (scikit-learn's ``predict_proba[:, 1]``.)"""
        z = self.decision_function(X)
        if isinstance(z, np.ndarray):
            return 1.0 / (1.0 + np.exp(-z))
        return torch.sigmoid(z)

    def predict(self, X) -> torch.Tensor | np.ndarray:
        """Hard 0/1 votes [k, n] (int64): 1 where p > 0.5, i.e. where the logit is > 0,
        exactly scikit-learn's ``predict`` rule."""
        z = self.decision_function(X)
        if isinstance(z, np.ndarray):
            return (z > 0).astype(np.int64)
        return (z > 0).to(torch.int64)


def _as_float64(X, name: str) -> np.ndarray:
    return _as_float(X, name).astype(np.float64, copy=False)


def _as_float(X, name: str) -> np.ndarray:
    """NumPy view or copy of X: float32 stays float32 (every value is exact in float64 too),
    anything else becomes float64."""
    if isinstance(X, torch.Tensor):
        X = X.detach().numpy() if X.dtype in (torch.float32, torch.float64) else X.detach().to(torch.float64).numpy()
    if not isinstance(X, np.ndarray):
        raise TypeError(f"{name} must be a numpy array or a torch tensor, got {type(X).__name__}")
    return X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)


class _Rows:
    """The k design matrices [k, m, d] in float64 and float32 (each made on first use from the
    input, float32 input is used as it is), and the products the solver needs on parameters
    theta = [w; b] of width p: ``X w + b``, ``[X^T r; sum r]`` and the weighted Gram matrix
    ``X_e^T diag(s) X_e`` (X_e: X with a ones column). ``augment`` stores X_e itself (cheap for
    narrow X; the bias then rides along in every product), otherwise the bias terms are added
    separately, avoiding a copy of wide X. All products are NumPy BLAS calls (gemv / gemm on
    views, no transposed copies); NumPy's per-call overhead is a fraction of torch's, which
    matters for the small problems."""

    def __init__(self, x: np.ndarray, fit_intercept: bool, augment: bool):
        if fit_intercept and augment:
            x = np.concatenate([x.astype(np.float64), np.ones((*x.shape[:2], 1))], axis=2)
        x = np.ascontiguousarray(x)
        self.x64 = x if x.dtype == np.float64 else None
        self.x32 = x if x.dtype == np.float32 else None
        self.bias = fit_intercept and not augment
        self.cols = x.shape[2]

    def x(self, single: bool) -> np.ndarray:
        if single:
            if self.x32 is None:
                self.x32 = self.x64.astype(np.float32)
            return self.x32
        if self.x64 is None:
            self.x64 = self.x32.astype(np.float64)
        return self.x64

    def times(self, theta: np.ndarray, single: bool) -> np.ndarray:
        X = self.x(single)
        z = np.matmul(X, theta[:, : self.cols, None].astype(X.dtype, copy=False))[:, :, 0].astype(np.float64, copy=False)
        return z + theta[:, self.cols :] if self.bias else z

    def rtimes(self, r: np.ndarray, single: bool) -> np.ndarray:
        X = self.x(single)
        gw = np.matmul(r[:, None, :].astype(X.dtype, copy=False), X)[:, 0, :].astype(np.float64, copy=False)
        return np.concatenate([gw, r.sum(axis=1, keepdims=True)], axis=1) if self.bias else gw

    def hessian(self, s: np.ndarray, single: bool) -> np.ndarray:
        """``X_e^T diag(s) X_e`` [k, p, p] in float64."""
        X = self.x(single)
        root = np.sqrt(s).astype(X.dtype)[:, :, None]
        W = X * root
        # one BLAS gemm per problem: on CPU faster than a batched product for these shapes
        H = np.stack([w.T @ w for w in W]).astype(np.float64, copy=False)
        if not self.bias:
            return H
        xs = np.matmul(root.transpose(0, 2, 1), W)[:, 0, :].astype(np.float64)
        top = np.concatenate([H, xs[:, :, None]], axis=2)
        return np.concatenate([top, np.concatenate([xs, s.sum(axis=1, keepdims=True)], axis=1)[:, None, :]], axis=1)


def _cholesky(H: np.ndarray) -> torch.Tensor:
    """Cholesky factors [k, p, p] (torch), adding a growing ridge where H is not numerically
    positive definite."""
    Ht = torch.from_numpy(H)
    L, info = torch.linalg.cholesky_ex(Ht)
    ridge = 1e-10 * Ht.diagonal(dim1=1, dim2=2).abs().amax(dim=1).clamp_min(1.0)
    while bool((info != 0).any()):
        bad = info != 0
        eye = torch.eye(H.shape[1], dtype=Ht.dtype)
        L[bad], info[bad] = torch.linalg.cholesky_ex(Ht[bad] + ridge[bad, None, None] * eye)
        ridge = ridge * 100.0
    return L


def _solve(L: torch.Tensor, r: np.ndarray) -> np.ndarray:
    """``(L L^T)^{-1} r`` per problem: two triangular solves."""
    half = torch.linalg.solve_triangular(L, torch.from_numpy(r)[:, :, None], upper=False)
    return torch.linalg.solve_triangular(L.mT, half, upper=True)[:, :, 0].numpy()


def _pcg(hv, b: np.ndarray, factor: torch.Tensor, rtol: np.ndarray, live: np.ndarray) -> tuple[np.ndarray, int]:
    """Solve ``H x = b`` for each live problem to ``||H x - b|| <= rtol ||b||`` by preconditioned
    conjugate gradients (Nocedal & Wright Alg. 5.3); ``hv(v)`` computes ``H v`` for all k and
    ``factor`` [k, p, p] is the Cholesky factor L of the preconditioner ``M = L L^T``."""
    x = np.zeros_like(b)
    r = b
    z = _solve(factor, r)
    direction, rz = z, (r * z).sum(axis=1)
    target = rtol * np.linalg.norm(b, axis=1)
    todo = live & (np.linalg.norm(r, axis=1) > target)
    steps = 0
    while todo.any() and steps < _MAX_CG:
        Hd = hv(direction)
        curv = (direction * Hd).sum(axis=1)
        todo &= curv > 0
        alpha = np.where(todo, rz / np.where(todo, curv, 1.0), 0.0)[:, None]
        x = x + alpha * direction
        r = r - alpha * Hd
        z = _solve(factor, r)
        rz_new = (r * z).sum(axis=1)
        beta = np.where(rz > 0, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        direction = z + beta[:, None] * direction
        rz = rz_new
        steps += 1
        todo &= np.linalg.norm(r, axis=1) > target
    return x, steps


def _objective(z, y, theta, C, penalty):
    # logloss(y, z) = log(1 + e^z) - y z, computed without overflow
    return C * (np.logaddexp(0.0, z) - y * z).sum(axis=1) + 0.5 * (penalty * theta * theta).sum(axis=1)


def _line_search(z, u, y, theta, step, g, f0, C, penalty, live):
    """Backtracking (Armijo) per problem along ``step`` from objective values ``f0``, with
    ``u = X step``: a trial costs O(k m), no pass over the features. Returns the step lengths
    (0 for problems not live), the objective at the new points and which problems found an
    acceptable step (never one along a direction that is not downhill)."""
    slope = (g * step).sum(axis=1)  # directional derivative, < 0 for a descent direction
    downhill = slope < 0
    # the predicted decrease is below f's float resolution (optimal to a few ulps): take the
    # step, it cannot change f measurably and f cannot arbitrate it
    flat = downhill & (-slope <= 1e-13 * np.abs(f0))
    t = np.ones(len(theta))
    accepted = ~live
    length, f_new = np.zeros_like(t), f0.copy()
    for _ in range(_MAX_HALVINGS):
        f = _objective(z + t[:, None] * u, y, theta + t[:, None] * step, C, penalty)
        new = downhill & ((f <= f0 + _ARMIJO * t * slope) | flat) & ~accepted
        length[new], f_new[new] = t[new], f[new]
        accepted |= new
        if (accepted | ~downhill).all():
            break
        t = np.where(accepted, t, 0.5 * t)
    return length, f_new, accepted


def fit_logistic_batched(
    X,
    y,
    *,
    C: float = 1.0,
    fit_intercept: bool = True,
    tol: float = 1e-10,
    max_iter: int = 100,
    init: LogisticFit | None = None,
) -> LogisticFit:
    """Fit k L2-regularised logistic regressions at once (scikit-learn ``LogisticRegression()``
    objective, see the module docstring).

    Parameters
    ----------
    X: [k, m, d] features (numpy or torch; float32 is kept for the float32 products, the
        float64 ones use the same values).
    y: [k, m] labels in {0, 1}; every problem needs both classes (scikit-learn raises too).
    C: inverse regularisation strength (> 0).
    fit_intercept: learn an unpenalised bias per problem.
    tol: stop a problem when its largest gradient entry is <= tol * max(1, C * m).
    max_iter: Newton iterations at most.
    init: warm start (same optimum, fewer iterations); must have k models and d features.
    """
    Xn = _as_float(X, "X")
    yn = _as_float64(y, "y")
    if Xn.ndim != 3:
        raise ValueError(f"X must have shape [k, m, d] (k problems of m rows), got {tuple(Xn.shape)}; add a leading axis for one problem")
    k, m, d = Xn.shape
    if tuple(yn.shape) != (k, m):
        raise ValueError(f"y must have shape [k, m] = {(k, m)}, got {tuple(yn.shape)}")
    if k == 0 or m == 0:
        raise ValueError("need at least one problem and one row per problem")
    # one reduction instead of an elementwise test (a NaN or inf makes the sum non-finite);
    # the full test runs only to rule out an overflowing sum of finite values
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.isfinite(Xn.sum()) and not np.isfinite(Xn).all():
            raise ValueError("X contains NaN or infinite values; clean the inputs first")
    if not ((yn == 0) | (yn == 1)).all():
        raise ValueError("y must contain only 0 and 1")
    if fit_intercept:
        both = (yn.max(axis=1) == 1) & (yn.min(axis=1) == 0)
        if not both.all():
            bad = np.flatnonzero(~both).tolist()[:5]
            raise ValueError(f"problems {bad} contain a single class; a logistic regression needs both labels 0 and 1")
    if not (C > 0 and np.isfinite(C)):
        raise ValueError(f"C must be a positive finite number, got {C}")
    if max_iter < 1 or tol <= 0:
        raise ValueError("max_iter must be >= 1 and tol > 0")

    p_dim = d + int(fit_intercept)
    theta = np.zeros((k, p_dim))
    if init is not None:
        if tuple(init.coef.shape) != (k, d):
            raise ValueError(f"init has coef shape {tuple(init.coef.shape)}, expected {(k, d)}")
        theta[:, :d] = _as_float64(init.coef, "init.coef")
        if fit_intercept:
            theta[:, d] = _as_float64(init.intercept, "init.intercept")
    exact_steps = d <= _DIRECT_MAX_FEATURES
    rows = _Rows(Xn, fit_intercept, augment=exact_steps)
    penalty = np.ones(p_dim)
    if fit_intercept:
        penalty[-1] = 0.0
    # the 1e-12 ridge guards the unpenalised intercept row when s ~ 0 on (nearly) separable data
    ridge = np.diag(penalty) + 1e-12 * np.eye(p_dim)
    scale = max(1.0, C * m)
    threshold = tol * scale
    single = not exact_steps  # float32 outer steps while the gradient is large (truncated Newton)
    factor, formed_at, refreshed = None, 0.0, False
    n_iter = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    n_cg = 0
    worst = np.inf
    z = rows.times(theta, single)
    f = _objective(z, yn, theta, C, penalty)

    for it in range(max_iter + 1):
        q = expit(z)
        g = rows.rtimes(C * (q - yn), single) + penalty * theta
        gmax = np.abs(g).max(axis=1)
        worst, last_worst = float(gmax.max()), worst
        # float64 once the gradient is small, or when float32 steps stop reducing it (the
        # rounding error of a float32 gradient is ~1e-7 * sum |x r|: large for unscaled features)
        if single and (bool((gmax <= max(threshold, _SWITCH * scale)).all()) or worst > 0.9 * last_worst):
            single = False  # float64 from here on: fresh logits, gradient and objective
            z = rows.times(theta, False)
            q = expit(z)
            g = rows.rtimes(C * (q - yn), False) + penalty * theta
            gmax = np.abs(g).max(axis=1)
            worst = float(gmax.max())
            f = _objective(z, yn, theta, C, penalty)
        if not single:
            converged |= gmax <= threshold
            if converged.all():
                break
        if it == max_iter:
            break
        live = ~converged
        s = C * q * (1.0 - q)  # IRLS weights
        if exact_steps:
            step = -np.linalg.solve(rows.hessian(s, False) + ridge, g[:, :, None])[:, :, 0]
        else:
            if factor is None or (not refreshed and worst <= _REFRESH * formed_at):
                refreshed = factor is not None
                factor = _cholesky(rows.hessian(s, True) + ridge)
                formed_at = worst

            def hv(v, s=s):
                return rows.rtimes(s * rows.times(v, True), True) + penalty * v

            forcing = np.clip(np.sqrt(gmax / scale), 1e-6, 0.1)
            step, steps = _pcg(hv, -g, factor, forcing, live)
            n_cg += steps
        step[~live] = 0.0
        u = rows.times(step, single)  # change of the logits per unit step
        length, f, accepted = _line_search(z, u, yn, theta, step, g, f, C, penalty, live)
        theta = theta + length[:, None] * step
        z = z + length[:, None] * u
        n_iter += length > 0
        stuck = live & ~accepted
        if stuck.any():
            if single:  # float32 cannot resolve further progress: go on in float64
                single = False
                z = rows.times(theta, False)
                f = _objective(z, yn, theta, C, penalty)
            elif not exact_steps:  # an inexact direction failed: take exact Newton steps
                exact_steps = True
            else:  # no decrease possible: optimal to working precision
                converged |= stuck

    coef = torch.from_numpy(theta[:, :d].copy())
    intercept = torch.from_numpy(theta[:, d].copy()) if fit_intercept else torch.zeros(k, dtype=torch.float64)
    return LogisticFit(coef=coef, intercept=intercept, n_iter=torch.from_numpy(n_iter),
                       converged=torch.from_numpy(converged), n_cg=n_cg)
