"""Exact batched L2 logistic regression: k independent problems solved at once.

The updated and synthcity teachers are scikit-learn ``LogisticRegression`` models re-created
and re-fitted from scratch every iteration (implementations spec §3.2 and §4.2, bugs B1/B2):
updated uses the defaults (lbfgs), synthcity ``solver="sag", max_iter=10000``. Both minimise
the same strictly convex objective

    f(w, b) = C * sum_i logloss(y_i, x_i.w + b) + 0.5 * ||w||^2        (intercept b unpenalised)

so its minimiser is unique and the solver only changes how closely it is approached. This
module solves k such problems jointly with a damped Newton method (IRLS), theta = [w; b]:

* gradient  g = C X^T (p - y) + [w; 0]            (always float64 for the stopping test)
* Hessian   H = C X^T diag(p(1-p)) X + diag(1, ..., 1, 0)
* step      Newton direction H^{-1} g, backtracking (Armijo) line search per problem,
* stop      per problem when ||g||_inf <= tol * max(1, C * m).

The Newton direction is found in one of two ways; both end at the same optimum, they differ
only in cost:

* direct (d <= 64 features): float64 Hessian and Cholesky solve every step, O(k m d^2).
* truncated Newton (d > 64): the Newton system is solved by preconditioned conjugate gradients
  (Nocedal & Wright, *Numerical Optimization*, Alg. 7.1 with Eisenstat-Walker forcing), each CG
  step one Hessian-vector product ``X^T (s * (X v))``: two float32 passes over the rows, O(k m d).
  The preconditioner is the Cholesky factor of a Hessian computed once and carried to the next
  fit (``LogisticFit.curvature``, passed back through ``init``): teachers re-fitted every
  iteration on similar data need no new one for many iterations. The outer steps use float32
  gradients while they are large; from ``||g|| <= 1e-5 * max(1, C*m)`` on, the gradient, the
  line search and the stopping test are float64, so float32 changes the path, not the answer.

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
_DIRECT_MAX_FEATURES = 64  # above: truncated Newton; below, a d x d Hessian per step is cheaper
_SWITCH = 1e-5  # relative gradient below which the outer steps are computed in float64
_MAX_CG = 50


@dataclass
class LogisticFit:
    """k fitted logistic regressions.

    coef: [k, d] float64 weights; intercept: [k] float64 biases;
    n_iter: [k] Newton iterations each problem used; converged: [k] bool;
    curvature: [k, p, p] Cholesky factor of the preconditioner the truncated-Newton solver used
    (p = d + 1 with an intercept), handed on to the next fit through ``init``; None otherwise;
    n_cg: conjugate-gradient steps (Hessian-vector products) this fit took.
    """

    coef: torch.Tensor
    intercept: torch.Tensor
    n_iter: torch.Tensor
    converged: torch.Tensor
    curvature: torch.Tensor | None = None
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
    """The k design matrices [k, m, d] in float64 and (made on first use) float32, and the two
    products the solver needs on parameters theta = [w; b] of width p: ``X w + b`` and
    ``[X^T r; sum r]``. Both are row-vector-times-matrix products, which BLAS runs as
    matrix-vector kernels without transposed copies."""

    def __init__(self, x64: torch.Tensor, fit_intercept: bool):
        self.x64, self.x32, self.intercept = x64.contiguous(), None, fit_intercept
        self.d = x64.shape[2]

    def x(self, single: bool) -> torch.Tensor:
        if not single:
            return self.x64
        if self.x32 is None:
            self.x32 = self.x64.to(torch.float32)
        return self.x32

    def times(self, theta: torch.Tensor, single: bool) -> torch.Tensor:
        X = self.x(single)
        z = np.matmul(X.numpy(), theta[:, : self.d].to(X.dtype).numpy()[:, :, None])[:, :, 0]
        z = torch.from_numpy(z).to(torch.float64)
        return z + theta[:, self.d : self.d + 1] if self.intercept else z

    def rtimes(self, r: torch.Tensor, single: bool) -> torch.Tensor:
        X = self.x(single)
        gw = torch.bmm(r.to(X.dtype).unsqueeze(1), X).squeeze(1).to(torch.float64)
        return torch.cat([gw, r.sum(dim=1, keepdim=True)], dim=1) if self.intercept else gw

    def hessian(self, s: torch.Tensor, single: bool) -> torch.Tensor:
        """``X_e^T diag(s) X_e`` [k, p, p] in float64 (X_e: X with the ones column)."""
        X = self.x(single)
        Xs = X * s.to(X.dtype).unsqueeze(-1)
        H = torch.bmm(X.transpose(1, 2), Xs).to(torch.float64)
        if not self.intercept:
            return H
        xs = Xs.sum(dim=1).to(torch.float64)
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


def _precondition(L: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    if _INV:
        return torch.bmm(L, r.unsqueeze(-1)).squeeze(-1)
    return torch.cholesky_solve(r.unsqueeze(-1), L).squeeze(-1)

import os
_POLICY = os.environ.get("LRPOL", "carry")
_INV = os.environ.get("LRINV", "0") == "1"
_REFRESH_AT = float(os.environ.get("LRREF", "1e-3"))
def _make_pre(H):
    L = _cholesky(H)
    return torch.cholesky_inverse(L) if _INV else L


def _pcg(hv, b: torch.Tensor, L: torch.Tensor, rtol: torch.Tensor, live: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Solve ``H x = b`` for each live problem to ``||H x - b|| <= rtol ||b||`` by preconditioned
    conjugate gradients (Nocedal & Wright Alg. 5.3); ``hv(v)`` computes ``H v`` for all k."""
    x = torch.zeros_like(b)
    r = b.clone()
    z = _precondition(L, r)
    direction, rz = z.clone(), (r * z).sum(dim=1)
    target = rtol * b.norm(dim=1)
    todo = live & (r.norm(dim=1) > target)
    steps = 0
    while bool(todo.any()) and steps < _MAX_CG:
        Hd = hv(direction)
        curv = (direction * Hd).sum(dim=1)
        todo = todo & (curv > 0)
        alpha = torch.where(todo, rz / torch.where(todo, curv, 1.0), 0.0)
        x += alpha.unsqueeze(1) * direction
        r -= alpha.unsqueeze(1) * Hd
        z = _precondition(L, r)
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


def _line_search(z, u, y, theta, step, f0, slope, C, penalty, live):
    """Backtracking (Armijo) per problem along ``step`` with ``u = X step``: each trial costs
    O(k m), no pass over the features. Returns the step lengths (0 where none was accepted)."""
    t = torch.ones(len(theta), dtype=torch.float64)
    accepted = ~live
    length = torch.zeros_like(t)
    for _ in range(_MAX_HALVINGS):
        cand = theta + t.unsqueeze(1) * step
        f = _objective(z + t.unsqueeze(1) * u, y, cand, C, penalty)
        ok = f <= f0 + _ARMIJO * t * slope
        # near the optimum the predicted decrease is below f's float resolution: accept any
        # non-increasing step; a vanishing step is accepted as well (optimal to precision)
        ok |= (f <= f0) & (-slope <= 1e-13 * f0.abs())
        ok |= t * step.abs().amax(dim=1) <= 1e-15 * (1 + theta.abs().amax(dim=1))
        new = ok & ~accepted
        length = torch.where(new, t, length)
        accepted |= ok
        if bool(accepted.all()):
            break
        t = torch.where(accepted, t, 0.5 * t)
    return length, accepted


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
    init: warm start (same optimum, fewer iterations): a previous fit with k models and d
        features; its ``curvature`` preconditions the truncated-Newton solver.
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
    curvature = None
    if init is not None:
        if tuple(init.coef.shape) != (k, d):
            raise ValueError(f"init has coef shape {tuple(init.coef.shape)}, expected {(k, d)}")
        theta[:, :d] = init.coef.detach().to(torch.float64)
        if fit_intercept:
            theta[:, d] = init.intercept.detach().to(torch.float64)
        if init.curvature is not None and tuple(init.curvature.shape) == (k, p_dim, p_dim):
            curvature = init.curvature
    rows = _Rows(Xt, fit_intercept)
    penalty = torch.ones(p_dim, dtype=torch.float64)
    if fit_intercept:
        penalty[-1] = 0.0
    # the 1e-12 ridge guards the unpenalised intercept row when s ~ 0 on (nearly) separable data
    ridge = torch.diag(penalty) + 1e-12 * torch.eye(p_dim, dtype=torch.float64)
    scale = max(1.0, C * m)
    threshold = tol * scale
    iterative = d > _DIRECT_MAX_FEATURES
    single = iterative  # float32 outer steps until the gradient is small (truncated Newton only)
    direct_next = not iterative
    n_iter = torch.zeros(k, dtype=torch.int64)
    converged = torch.zeros(k, dtype=torch.bool)
    n_cg = 0
    refreshed = False
    z = rows.times(theta, single)

    for it in range(max_iter + 1):
        q = torch.sigmoid(z)
        g = rows.rtimes(C * (q - yt), single) + penalty * theta
        gmax = g.abs().amax(dim=1)
        if single and bool((gmax <= max(threshold, _SWITCH * scale)).all()):
            single = False  # float64 from here: fresh logits, gradient and objective
            z = rows.times(theta, False)
            q = torch.sigmoid(z)
            g = rows.rtimes(C * (q - yt), False) + penalty * theta
            gmax = g.abs().amax(dim=1)
        if not single:
            converged |= gmax <= threshold
            if bool(converged.all()) or it == max_iter:
                break
        elif it == max_iter:
            break
        live = ~converged
        s = C * q * (1.0 - q)  # IRLS weights
        if direct_next:
            H = rows.hessian(s, False) + ridge
            step = _precondition(_cholesky(H), -g)
        else:
            if curvature is None or (_POLICY.startswith("fresh") and it == 0) or (_POLICY in ("fresh2", "local") and not refreshed and float(gmax.max()) < _REFRESH_AT * scale):
                refreshed = refreshed or float(gmax.max()) < _REFRESH_AT * scale
                curvature = _make_pre(rows.hessian(s, True) + ridge)
                if _INV: step = None
            s_single = s

            def hv(v, s_single=s_single):
                return rows.rtimes(s_single * rows.times(v, True), True) + penalty * v

            forcing = torch.clamp(torch.sqrt(gmax / scale), 1e-6, 0.1)
            step, cg_steps = _pcg(hv, -g, curvature, forcing, live)
            n_cg += cg_steps
        step = torch.where(live.unsqueeze(1), step, 0.0)
        u = rows.times(step, single)  # change of the logits per unit step
        f0 = _objective(z, yt, theta, C, penalty)
        slope = (g * step).sum(dim=1)
        length, accepted = _line_search(z, u, yt, theta, step, f0, slope, C, penalty, live)
        theta = theta + length.unsqueeze(1) * step
        z = z + length.unsqueeze(1) * u
        n_iter += (live & (length > 0)).to(torch.int64)
        stuck = live & ~accepted
        if bool(stuck.any()):
            if single:
                single = False  # float32 cannot resolve further progress: go on in float64
                z = rows.times(theta, False)
            elif not direct_next:
                direct_next = True  # an inexact direction failed: take exact Newton steps
            else:
                converged |= stuck  # no decrease possible: optimal to working precision

    coef = theta[:, :d].clone()
    intercept = theta[:, d].clone() if fit_intercept else torch.zeros(k, dtype=torch.float64)
    return LogisticFit(coef=coef, intercept=intercept, n_iter=n_iter, converged=converged,
                       curvature=curvature, n_cg=n_cg)
