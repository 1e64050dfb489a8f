"""Exact batched L2 logistic regression: k independent problems solved at once.

The updated and synthcity teachers are scikit-learn ``LogisticRegression`` models re-created
and re-fitted from scratch every iteration (implementations spec §3.2 and §4.2, bugs B1/B2):
updated uses the defaults (lbfgs), synthcity ``solver="sag", max_iter=10000``. Both minimise
the same strictly convex objective

    f(w, b) = C * sum_i logloss(y_i, x_i.w + b) + 0.5 * ||w||^2        (intercept b unpenalised)

so its minimiser is unique and the solver only changes how closely it is approached. This
module solves k such problems jointly with a damped Newton method (IRLS) in float64:

* gradient  g = C X^T (p - y) + [w; 0]
* Hessian   H = C X^T diag(p(1-p)) X + diag(1, ..., 1, 0)
* step      Newton direction H^{-1} g, backtracking (Armijo) line search per problem,
* stop      per problem when ||g||_inf <= tol * max(1, C * m).

Newton on this objective converges quadratically, so a handful of iterations reaches the
optimum to machine precision, where lbfgs (tol 1e-4, max_iter 100) or sag (tol 1e-4) stop
earlier. Deviation: at scikit-learn's default tolerances its coefficients differ from ours
by the solver's own tolerance; the predictions (hard votes, spec §0.4) almost always agree.
The tests compare against scikit-learn run to tight tolerance.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["LogisticFit", "fit_logistic_batched"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 60


@dataclass
class LogisticFit:
    """k fitted logistic regressions.

    coef: [k, d] float64 weights; intercept: [k] float64 biases;
    n_iter: [k] Newton iterations each problem used; converged: [k] bool.
    """

    coef: torch.Tensor
    intercept: torch.Tensor
    n_iter: torch.Tensor
    converged: torch.Tensor

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


def _objective(Xe, y, theta, C, penalty):
    """f per problem and the logits. Xe [k,m,p] (features + ones column), y [k,m], theta [k,p]."""
    z = torch.bmm(Xe, theta.unsqueeze(-1)).squeeze(-1)
    # logloss(y, z) = log(1 + e^z) - y z, computed without overflow
    loss = torch.logaddexp(torch.zeros((), dtype=z.dtype), z) - y * z
    return C * loss.sum(dim=1) + 0.5 * (penalty * theta * theta).sum(dim=1), z


def _take(t: torch.Tensor, idx: torch.Tensor, full: bool) -> torch.Tensor:
    return t if full else t[idx]


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
    if not torch.isfinite(Xt).all():
        raise ValueError("X contains NaN or infinite values; clean the inputs first")
    if not ((yt == 0) | (yt == 1)).all():
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
    Xe = torch.cat([Xt, torch.ones(k, m, 1, dtype=torch.float64)], dim=2) if fit_intercept else Xt
    penalty = torch.ones(p_dim, dtype=torch.float64)
    if fit_intercept:
        penalty[-1] = 0.0
    eye = torch.diag(penalty) + 1e-12 * torch.eye(p_dim, dtype=torch.float64)
    threshold = tol * max(1.0, C * m)
    n_iter = torch.zeros(k, dtype=torch.int64)
    converged = torch.zeros(k, dtype=torch.bool)
    f, z = _objective(Xe, yt, theta, C, penalty)

    for _ in range(max_iter + 1):
        active = torch.nonzero(~converged).flatten()
        full = active.numel() == k
        Xa, ya, za = _take(Xe, active, full), _take(yt, active, full), _take(z, active, full)
        ta, fa = _take(theta, active, full), _take(f, active, full)
        p = torch.sigmoid(za)
        # gradient of the objective: C X^T (p - y) + penalty * theta
        g = torch.bmm((C * (p - ya)).unsqueeze(1), Xa).squeeze(1) + penalty * ta
        done = g.abs().amax(dim=1) <= threshold
        converged[active[done]] = True
        if bool(done.all()) or _ == max_iter:
            break
        if bool(done.any()):
            keep = ~done
            active, Xa, ya, ta, fa, g, p = active[keep], Xa[keep], ya[keep], ta[keep], fa[keep], g[keep], p[keep]
            full = False
        s = C * p * (1.0 - p)  # IRLS weights
        # Hessian C X^T diag(s) X + diag(penalty); the 1e-12 ridge guards the unpenalised
        # intercept row when s ~ 0 on (nearly) separable data
        H = torch.bmm((Xa * s.unsqueeze(-1)).transpose(1, 2), Xa) + eye
        L, info = torch.linalg.cholesky_ex(H)
        step = torch.cholesky_solve(-g.unsqueeze(-1), L).squeeze(-1)
        if bool((info != 0).any()):  # not positive definite numerically: fall back to LU
            bad = info != 0
            step[bad] = torch.linalg.solve(H[bad], -g[bad].unsqueeze(-1)).squeeze(-1)
        slope = (g * step).sum(dim=1)  # directional derivative, < 0
        n_act = len(active)
        t = torch.ones(n_act, dtype=torch.float64)
        accepted = torch.zeros(n_act, dtype=torch.bool)
        new_t, new_f = ta.clone(), fa.clone()
        new_z = _take(z, active, full).clone()
        for _h in range(_MAX_HALVINGS):
            todo = torch.nonzero(~accepted).flatten()
            if todo.numel() == 0:
                break
            all_todo = todo.numel() == n_act
            cand = _take(ta, todo, all_todo) + t[todo, None] * _take(step, todo, all_todo)
            cf, cz = _objective(_take(Xa, todo, all_todo), _take(ya, todo, all_todo), cand, C, penalty)
            ok = cf <= fa[todo] + _ARMIJO * t[todo] * slope[todo]
            # near the optimum the predicted decrease is below f's float resolution: accept any
            # non-increasing step; a vanishing step is accepted as well (optimal to precision)
            ok |= (cf <= fa[todo]) & (-slope[todo] <= 1e-13 * fa[todo].abs())
            ok |= (t[todo] * step[todo].abs().amax(dim=1)) <= 1e-15 * (1 + ta[todo].abs().amax(dim=1))
            idx = todo[ok]
            new_t[idx], new_f[idx], new_z[idx] = cand[ok], cf[ok], cz[ok]
            accepted[idx] = True
            t[todo[~ok]] *= 0.5
        stuck = ~accepted  # no decrease possible: optimal to working precision
        converged[active[stuck]] = True
        theta[active], f[active], z[active] = new_t, new_f, new_z
        n_iter[active[accepted]] += 1

    coef = theta[:, :d].clone()
    intercept = theta[:, d].clone() if fit_intercept else torch.zeros(k, dtype=torch.float64)
    return LogisticFit(coef=coef, intercept=intercept, n_iter=n_iter, converged=converged)
