"""Exact batched L2 logistic regression: k independent problems solved at once.

The updated and synthcity teachers are scikit-learn ``LogisticRegression`` models re-created
and re-fitted from scratch every iteration (implementations spec §3.2 and §4.2, bugs B1/B2):
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

* direct (d <= 64 features): float64 Hessian and Cholesky solve every step, O(k m d^2).
* truncated Newton (d > 64): the Newton system is solved by preconditioned conjugate gradients
  (Nocedal & Wright, *Numerical Optimization*, §7.1, Eisenstat-Walker forcing), one
  Hessian-vector product ``X^T (s * (X v))`` per CG step: two float32 passes over the rows,
  O(k m d). The preconditioner is a float32 Hessian, formed at the starting point and once
  more when the gradient has fallen 100-fold, so the last (quadratically convergent) steps
  need one to three CG steps each. Outer steps use float32 gradients while
  ``||g|| > 1e-5 * max(1, C*m)``; from then on the logits, gradient, line search and stopping
  test are float64, so float32 changes the path, not the answer.

Newton converges quadratically, so the optimum is reached to the stated tolerance, where lbfgs
(tol 1e-4, max_iter 100) or sag (tol 1e-4) stop earlier. Deviation: at scikit-learn's default
tolerances its coefficients differ from ours by the solver's own tolerance; the predictions
(hard votes, spec §0.4) almost always agree. The tests compare against scikit-learn run to
tight tolerance.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["LogisticFit", "fit_logistic_batched"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 60
_DIRECT_MAX_FEATURES = 64  # up to this width a d x d Hessian per Newton step is the cheaper way
_SWITCH = 1e-5  # relative gradient below which outer steps are computed in float64
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
        Xt = _as_float64(X, "X")
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


def _as_float64(X, name: str) -> torch.Tensor:
    if isinstance(X, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64))
    if isinstance(X, torch.Tensor):
        return X.detach().to(dtype=torch.float64)
    raise TypeError(f"{name} must be a numpy array or a torch tensor, got {type(X).__name__}")


class _Rows:
    """The k design matrices [k, m, d] in float64 and (made on first use) float32, and the
    products the solver needs on parameters theta = [w; b] of width p: ``X w + b``,
    ``[X^T r; sum r]`` and the weighted Gram matrix ``X_e^T diag(s) X_e`` (X_e: X with a ones
    column). ``augment`` stores X_e itself (cheap for narrow X; the bias then rides along in
    every product), otherwise the bias terms are added separately, avoiding a copy of wide X.
    The products are row-vector-times-matrix kernels (BLAS gemv): no transposed copies."""

    def __init__(self, x64: torch.Tensor, fit_intercept: bool, augment: bool):
        if fit_intercept and augment:
            x64 = torch.cat([x64, torch.ones(*x64.shape[:2], 1, dtype=x64.dtype)], dim=2)
        self.x64, self.x32 = x64.contiguous(), None
        self.bias = fit_intercept and not augment
        self.cols = x64.shape[2]

    def x(self, single: bool) -> torch.Tensor:
        if not single:
            return self.x64
        if self.x32 is None:
            self.x32 = self.x64.to(torch.float32)
        return self.x32

    def times(self, theta: torch.Tensor, single: bool) -> torch.Tensor:
        X = self.x(single)
        z = np.matmul(X.numpy(), theta[:, : self.cols].to(X.dtype).numpy()[:, :, None])[:, :, 0]
        z = torch.from_numpy(z).to(torch.float64)
        return z + theta[:, self.cols :] if self.bias else z

    def rtimes(self, r: torch.Tensor, single: bool) -> torch.Tensor:
        X = self.x(single)
        gw = torch.bmm(r.to(X.dtype).unsqueeze(1), X).squeeze(1).to(torch.float64)
        return torch.cat([gw, r.sum(dim=1, keepdim=True)], dim=1) if self.bias else gw

    def hessian(self, s: torch.Tensor, single: bool) -> torch.Tensor:
        """``X_e^T diag(s) X_e`` [k, p, p] in float64."""
        X = self.x(single)
        root = s.to(X.dtype).sqrt().unsqueeze(-1)
        W = X * root
        Wn = W.numpy()
        # one BLAS gemm per problem: faster on CPU than a batched product for these shapes
        H = torch.from_numpy(np.stack([Wn[i].T @ Wn[i] for i in range(len(Wn))])).to(torch.float64)
        if not self.bias:
            return H
        xs = torch.bmm(root.transpose(1, 2), W).squeeze(1).to(torch.float64)
        top = torch.cat([H, xs.unsqueeze(-1)], dim=2)
        return torch.cat([top, torch.cat([xs, s.sum(dim=1, keepdim=True)], dim=1).unsqueeze(1)], dim=1)


def _cholesky(H: torch.Tensor) -> torch.Tensor:
    """Cholesky factor, adding a growing ridge where H is not numerically positive definite."""
    L, info = torch.linalg.cholesky_ex(H)
    ridge = 1e-10 * H.diagonal(dim1=1, dim2=2).abs().amax(dim=1).clamp_min(1.0)
    while bool((info != 0).any()):
        bad = info != 0
        eye = torch.eye(H.shape[1], dtype=H.dtype)
        L[bad], info[bad] = torch.linalg.cholesky_ex(H[bad] + ridge[bad, None, None] * eye)
        ridge = ridge * 100.0
    return L


def _pcg(hv, b: torch.Tensor, factor: torch.Tensor, rtol: torch.Tensor, live: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Solve ``H x = b`` for each live problem to ``||H x - b|| <= rtol ||b||`` by preconditioned
    conjugate gradients (Nocedal & Wright Alg. 5.3); ``hv(v)`` computes ``H v`` for all k and
    ``factor`` [k, p, p] is the Cholesky factor L of the preconditioner ``M = L L^T``."""

    def precondition(r):
        half = torch.linalg.solve_triangular(factor, r.unsqueeze(-1), upper=False)
        return torch.linalg.solve_triangular(factor.mT, half, upper=True).squeeze(-1)

    x = torch.zeros_like(b)
    r = b
    z = precondition(r)
    direction, rz = z, (r * z).sum(dim=1)
    target = rtol * b.norm(dim=1)
    todo = live & (r.norm(dim=1) > target)
    steps = 0
    while bool(todo.any()) and steps < _MAX_CG:
        Hd = hv(direction)
        curv = (direction * Hd).sum(dim=1)
        todo = todo & (curv > 0)
        alpha = torch.where(todo, rz / torch.where(todo, curv, 1.0), 0.0).unsqueeze(1)
        x = x + alpha * direction
        r = r - alpha * Hd
        z = precondition(r)
        rz_new = (r * z).sum(dim=1)
        beta = torch.where(rz > 0, rz_new / torch.where(rz > 0, rz, 1.0), 0.0)
        direction = z + beta.unsqueeze(1) * direction
        rz = rz_new
        steps += 1
        todo = todo & (r.norm(dim=1) > target)
    return x, steps


def _objective(z, y, theta, C, penalty):
    # logloss(y, z) = log(1 + e^z) - y z, computed without overflow
    loss = torch.logaddexp(torch.zeros((), dtype=z.dtype), z) - y * z
    return C * loss.sum(dim=1) + 0.5 * (penalty * theta * theta).sum(dim=1)


def _line_search(z, u, y, theta, step, g, f0, C, penalty, live):
    """Backtracking (Armijo) per problem along ``step`` from objective values ``f0``, with
    ``u = X step``: a trial costs O(k m), no pass over the features. Returns the step lengths
    (0 for problems not live), the objective at the new points and which problems found an
    acceptable step."""
    slope = (g * step).sum(dim=1)  # directional derivative, < 0 for a descent direction
    # near the optimum the predicted decrease is below f's float resolution: then accept any
    # non-increasing step; a vanishing step is accepted as well (optimal to precision)
    flat = -slope <= 1e-13 * f0.abs()
    vanishing = 1e-15 * (1 + theta.abs().amax(dim=1)) / step.abs().amax(dim=1).clamp_min(1e-300)
    t = torch.ones(len(theta), dtype=torch.float64)
    accepted = ~live
    length, f_new = torch.zeros_like(t), f0
    for _ in range(_MAX_HALVINGS):
        f = _objective(z + t.unsqueeze(1) * u, y, theta + t.unsqueeze(1) * step, C, penalty)
        ok = (f <= f0 + _ARMIJO * t * slope) | ((f <= f0) & flat) | (t <= vanishing)
        new = ok & ~accepted
        length, f_new = torch.where(new, t, length), torch.where(new, f, f_new)
        accepted = accepted | ok
        if bool(accepted.all()):
            break
        t = torch.where(accepted, t, 0.5 * t)
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
    X: [k, m, d] features (numpy or torch; computed in float64).
    y: [k, m] labels in {0, 1}; every problem needs both classes (scikit-learn raises too).
    C: inverse regularisation strength (> 0).
    fit_intercept: learn an unpenalised bias per problem.
    tol: stop a problem when its largest gradient entry is <= tol * max(1, C * m).
    max_iter: Newton iterations at most.
    init: warm start (same optimum, fewer iterations); must have k models and d features.
    """
    Xt = _as_float64(X, "X")
    yt = _as_float64(y, "y")
    if Xt.ndim != 3:
        raise ValueError(f"X must have shape [k, m, d] (k problems of m rows), got {tuple(Xt.shape)}; add a leading axis for one problem")
    k, m, d = Xt.shape
    if tuple(yt.shape) != (k, m):
        raise ValueError(f"y must have shape [k, m] = {(k, m)}, got {tuple(yt.shape)}")
    if k == 0 or m == 0:
        raise ValueError("need at least one problem and one row per problem")
    # one reduction instead of an elementwise test (a NaN or inf makes the sum non-finite);
    # the full test runs only to rule out an overflowing sum of finite values
    if not bool(torch.isfinite(Xt.sum())) and not bool(torch.isfinite(Xt).all()):
        raise ValueError("X contains NaN or infinite values; clean the inputs first")
    if not bool(((yt == 0) | (yt == 1)).all()):
        raise ValueError("y must contain only 0 and 1")
    if fit_intercept:
        both = (yt.amax(dim=1) == 1) & (yt.amin(dim=1) == 0)
        if not bool(both.all()):
            bad = torch.nonzero(~both).flatten().tolist()[:5]
            raise ValueError(f"problems {bad} contain a single class; a logistic regression needs both labels 0 and 1")
    if not (C > 0 and np.isfinite(C)):
        raise ValueError(f"C must be a positive finite number, got {C}")
    if max_iter < 1 or tol <= 0:
        raise ValueError("max_iter must be >= 1 and tol > 0")

    p_dim = d + int(fit_intercept)
    theta = torch.zeros(k, p_dim, dtype=torch.float64)
    if init is not None:
        if tuple(init.coef.shape) != (k, d):
            raise ValueError(f"init has coef shape {tuple(init.coef.shape)}, expected {(k, d)}")
        theta[:, :d] = init.coef.detach().to(torch.float64)
        if fit_intercept:
            theta[:, d] = init.intercept.detach().to(torch.float64)
    exact_steps = d <= _DIRECT_MAX_FEATURES
    rows = _Rows(Xt, fit_intercept, augment=exact_steps)
    penalty = torch.ones(p_dim, dtype=torch.float64)
    if fit_intercept:
        penalty[-1] = 0.0
    # the 1e-12 ridge guards the unpenalised intercept row when s ~ 0 on (nearly) separable data
    ridge = torch.diag(penalty) + 1e-12 * torch.eye(p_dim, dtype=torch.float64)
    scale = max(1.0, C * m)
    threshold = tol * scale
    single = not exact_steps  # float32 outer steps while the gradient is large (truncated Newton)
    factor, formed_at, refreshed = None, 0.0, False
    n_iter = torch.zeros(k, dtype=torch.int64)
    converged = torch.zeros(k, dtype=torch.bool)
    n_cg = 0
    z = rows.times(theta, single)
    f = _objective(z, yt, theta, C, penalty)

    for it in range(max_iter + 1):
        q = torch.sigmoid(z)
        g = rows.rtimes(C * (q - yt), single) + penalty * theta
        gmax = g.abs().amax(dim=1)
        if single and bool((gmax <= max(threshold, _SWITCH * scale)).all()):
            single = False  # float64 from here on: fresh logits and gradient
            z = rows.times(theta, False)
            q = torch.sigmoid(z)
            g = rows.rtimes(C * (q - yt), False) + penalty * theta
            gmax = g.abs().amax(dim=1)
            f = _objective(z, yt, theta, C, penalty)
        if not single:
            converged |= gmax <= threshold
            if bool(converged.all()):
                break
        if it == max_iter:
            break
        live = ~converged
        s = C * q * (1.0 - q)  # IRLS weights
        worst = float(gmax.max())
        if exact_steps:
            step = torch.cholesky_solve(-g.unsqueeze(-1), _cholesky(rows.hessian(s, False) + ridge)).squeeze(-1)
        else:
            if factor is None or (not refreshed and worst <= _REFRESH * formed_at):
                refreshed = factor is not None
                factor = _cholesky(rows.hessian(s, True) + ridge)
                formed_at = worst

            def hv(v, s=s):
                return rows.rtimes(s * rows.times(v, True), True) + penalty * v

            forcing = torch.clamp(torch.sqrt(gmax / scale), 1e-6, 0.1)
            step, steps = _pcg(hv, -g, factor, forcing, live)
            n_cg += steps
        step = torch.where(live.unsqueeze(1), step, 0.0)
        u = rows.times(step, single)  # change of the logits per unit step
        length, f, accepted = _line_search(z, u, yt, theta, step, g, f, C, penalty, live)
        theta = theta + length.unsqueeze(1) * step
        z = z + length.unsqueeze(1) * u
        n_iter += (length > 0).to(torch.int64)
        stuck = live & ~accepted
        if bool(stuck.any()):
            if single:  # float32 cannot resolve further progress: go on in float64
                single = False
                z = rows.times(theta, False)
                f = _objective(z, yt, theta, C, penalty)
            elif not exact_steps:  # an inexact direction failed: take exact Newton steps
                exact_steps = True
            else:  # no decrease possible: optimal to working precision
                converged |= stuck

    coef = theta[:, :d].clone()
    intercept = theta[:, d].clone() if fit_intercept else torch.zeros(k, dtype=torch.float64)
    return LogisticFit(coef=coef, intercept=intercept, n_iter=n_iter, converged=converged, n_cg=n_cg)
