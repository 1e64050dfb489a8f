"""Privacy analysis of (Confident-)GNMax: Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson,
"Scalable Private Learning with PATE", ICLR 2018 (arXiv:1802.08908), called *PATE 2018* below.

A standalone, stateless (numpy float64) module; nothing here trains or draws votes. Numbering of
propositions, theorems and algorithms follows the arXiv version of PATE 2018 (the numbering the
authors' analysis code refers to).

Mechanisms. One query is a vote histogram ``n = (n_1..n_m)`` of ``k`` teachers over ``m`` classes.

* GNMax (PATE 2018 §3, eq. for M_σ): ``argmax_i n_i + N(0, σ²)``. Neighbouring datasets differ in
  one record, hence in one teacher's vote: the histogram changes by -1 in one class and +1 in
  another (L2 sensitivity √2), and its RDP is ``λ/σ²`` (Prop. 8).
* Confident-GNMax (PATE 2018 §4.1, Alg. 1): first the threshold check ``max_i n_i + N(0, σ₁²) ≥ T``
  (sensitivity 1, RDP ``λ/(2σ₁²)`` on *every* query), then GNMax with σ₂ on the answered ones.

Contents.

1. Data-independent RDP: :func:`gaussian_rdp`, :func:`gnmax_rdp`, :func:`threshold_rdp`.
2. Data-dependent RDP of GNMax: :func:`gnmax_log_q` (Prop. 7) and :func:`theorem6_rdp` (Thm 6 with
   the orders μ₁, μ₂ of Prop. 10), :func:`gnmax_data_dependent_rdp` (both together).
3. RDP -> (ε, δ): :func:`epsilon_from_rdp` (the classic ``min_λ RDP(λ) + ln(1/δ)/(λ-1)``, PATE 2018
   Thm 5 / Mironov 2017 Prop. 3) and :func:`max_queries_within_budget`.
4. Smooth sensitivity of the data-dependent RDP and its private release (PATE 2018 §4.2 and App. C):
   :func:`gnmax_log_q0`, :func:`gnmax_local_sensitivities` (Alg. 3-5), :func:`smooth_sensitivity`,
   :func:`gnmax_smooth_sensitivity`, :func:`gnss_rdp` (Thm 23), :func:`optimal_gnss_sigma` and
   :func:`release_gnmax_epsilon` -> :class:`GNMaxPrivacyRelease`.

Deviations / choices (see each docstring): q̃ is capped at ``1 - 1/m`` (valid because the plurality
class of a noisy argmax with i.i.d. noise wins with probability ≥ 1/m, and the cap only acts where the
data-independent bound is used anyway); local sensitivities are returned for every distance
``d = 0..k`` (all histograms of k teachers are within distance k); the local sensitivity at
distance d is bounded over whole q̃-intervals rather than at the extreme q̃ only (Alg. 4-5 with a
plateau), because the paper's shortcut relies on a unimodality condition (C6) that fails for
small σ (e.g. σ = 5, λ = 10), where it under-estimates the smooth sensitivity; see
:func:`gnmax_local_sensitivities`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, logsumexp, ndtri_exp

from .ledger import check_delta

__all__ = [
    "DEFAULT_ORDERS",
    "GNMaxPrivacyRelease",
    "epsilon_from_rdp",
    "gaussian_rdp",
    "gnmax_data_dependent_rdp",
    "gnmax_local_sensitivities",
    "gnmax_log_q",
    "gnmax_log_q0",
    "gnmax_rdp",
    "gnmax_smooth_sensitivity",
    "gnss_rdp",
    "max_queries_within_budget",
    "optimal_gnss_sigma",
    "release_gnmax_epsilon",
    "smooth_sensitivity",
    "theorem6_rdp",
    "threshold_rdp",
]

#: A grid of real Rényi orders > 1 (fine near 1, geometric above 100) for :func:`epsilon_from_rdp`.
DEFAULT_ORDERS: np.ndarray = np.concatenate(
    [np.arange(1.25, 10.0, 0.25), np.arange(10.0, 100.0, 1.0), np.geomspace(100.0, 5000.0, 50)]
)
DEFAULT_ORDERS.setflags(write=False)

_SQRT2 = math.sqrt(2.0)
_PIECES = 8  # pieces per q̃-interval between two walk points in gnmax_local_sensitivities


# -- validation ------------------------------------------------------------------------------
def _is_number(value) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))


def _check_positive(value, name: str, example: str) -> float:
    if not _is_number(value) or not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{name} must be a finite number > 0 (e.g. {name}={example}), got {value!r}")
    return float(value)


def _check_sigma(sigma, name: str = "sigma") -> float:
    return _check_positive(sigma, name, "40.0")


def _check_orders(orders) -> np.ndarray:
    """``orders`` as a non-empty 1-D float64 array of finite Rényi orders > 1."""
    try:
        arr = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"orders must be an array of Rényi orders > 1 (e.g. orders=DEFAULT_ORDERS), got {orders!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"orders must be a non-empty 1-D array of Rényi orders, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ValueError(
            "orders must be finite Rényi orders > 1 (RDP is not defined at order 1); "
            f"pass e.g. orders=DEFAULT_ORDERS, got values in [{np.nanmin(arr):g}, {np.nanmax(arr):g}]"
        )
    return arr


def _check_order(order) -> float:
    if not _is_number(order) or not math.isfinite(float(order)) or float(order) <= 1.0:
        raise ValueError(f"order must be a finite Rényi order > 1 (e.g. order=20.0), got {order!r}")
    return float(order)


def _check_votes(votes, *, allow_empty: bool = True) -> np.ndarray:
    """Vote histograms as a float64 array [Q, m] of whole non-negative counts, m ≥ 2."""
    arr = np.asarray(votes)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"votes must hold non-negative integer vote counts, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"votes must be one histogram [m] or a batch [Q, m] of histograms, got shape {arr.shape}")
    if arr.shape[1] < 2:
        raise ValueError(f"votes must have at least 2 classes (columns), got shape {arr.shape}; for binary votes pass [n0, n1]")
    if arr.shape[0] == 0:
        if not allow_empty:
            raise ValueError("votes holds no query; pass the histograms of the answered queries, shape [Q >= 1, m]")
        return arr.astype(np.float64)
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError("votes must hold whole, non-negative numbers of teacher votes (one histogram per query)")
    return arr


def _num_teachers(votes: np.ndarray) -> int:
    totals = votes.sum(axis=1)
    if np.any(totals != totals[0]):
        raise ValueError(
            "every histogram must count the same number of teachers k (rows of votes must have equal sums), "
            f"got row sums in [{totals.min():g}, {totals.max():g}]"
        )
    k = int(totals[0])
    if k < 1:
        raise ValueError("the vote histograms count no teacher (row sums are 0); pass histograms of k >= 1 votes")
    return k


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (e.g. rng=np.random.default_rng(0)), got {type(rng).__name__}")
    return rng


# -- 1. data-independent RDP ----------------------------------------------------------------------
def gaussian_rdp(orders, *, sigma: float, sensitivity: float = 1.0) -> np.ndarray:
    """RDP of the Gaussian mechanism with L2 sensitivity Δ and noise N(0, σ²): ``λΔ²/(2σ²)``
    (Mironov 2017, Prop. 7; PATE 2018 §3). Returns shape [L]."""
    lam = _check_orders(orders)
    sigma = _check_sigma(sigma)
    sens = _check_positive(sensitivity, "sensitivity", "1.0")
    return lam * sens**2 / (2.0 * sigma**2)


def gnmax_rdp(orders, *, sigma: float) -> np.ndarray:
    """Data-independent RDP of one GNMax answer: ``λ/σ²`` (PATE 2018 Prop. 8).

    A vote histogram has L2 sensitivity √2 (one teacher moves its vote), so this is
    :func:`gaussian_rdp` with Δ = √2 (evaluated as ``λ/σ²`` to avoid the rounding of √2²).
    """
    return _check_orders(orders) / _check_sigma(sigma) ** 2


def threshold_rdp(orders, *, sigma: float) -> np.ndarray:
    """Data-independent RDP of one threshold check of Confident-GNMax (PATE 2018 §4.1, Alg. 1 step 1):
    ``max_i n_i + N(0, σ₁²) ≥ T`` has sensitivity 1, hence ``λ/(2σ₁²)``. Charged on every query,
    answered or not."""
    return gaussian_rdp(orders, sigma=sigma, sensitivity=1.0)


# -- 2. data-dependent RDP of GNMax ----------------------------------------------------------------
def gnmax_log_q(votes, *, sigma: float) -> np.ndarray:
    """ln q̃ per query, q̃ ≥ Pr[GNMax_σ(n) ≠ i*] with i* = argmax_i n_i (PATE 2018 Prop. 7).

    ``q̃ = min(1 - 1/m, Σ_{i≠i*} ½·erfc((n_{i*} - n_i)/(2σ)))``, evaluated in log space as
    ``½·erfc(g/(2σ)) = Φ(-g/(√2σ))``. The union bound is exact for m = 2. The cap ``1 - 1/m`` is
    not in Prop. 7's statement (the authors' code applies it): with i.i.d. noise the plurality class
    wins at least as often as any other class, hence with probability ≥ 1/m.

    votes: [Q, m] (or one histogram [m]). Returns [Q].
    """
    v = _check_votes(votes)
    sigma = _check_sigma(sigma)
    if v.shape[0] == 0:
        return np.zeros(0)
    m = v.shape[1]
    top = np.argmax(v, axis=1)
    gaps = v[np.arange(v.shape[0]), top][:, None] - v  # n_{i*} - n_i >= 0
    log_terms = log_ndtr(-gaps / (_SQRT2 * sigma))
    log_terms[np.arange(v.shape[0]), top] = -np.inf  # exclude i* itself
    return np.minimum(logsumexp(log_terms, axis=1), math.log1p(-1.0 / m))


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """ln(1 - e^x) for x ≤ 0, stable at both ends."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x < -math.log(2.0), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def _theorem6_parts(log_q: np.ndarray, sigma: float, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(validity mask, raw Thm 6 value) broadcast over log_q and lam, for finite log_q < 0."""
    var = sigma**2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu2 = sigma * np.sqrt(-log_q)  # Prop. 10
        mu1 = mu2 + 1.0
        eps1, eps2 = mu1 / var, mu2 / var  # GNMax's data-independent RDP at μ1, μ2 (Prop. 8)
        lemma9 = (mu2 - 1.0) * eps2 - mu2 * (np.log(mu1 / (mu1 - 1.0)) + np.log(mu2 / (mu2 - 1.0)))
        valid = (mu2 > 1.0) & (mu1 >= lam) & (-log_q > eps2) & (log_q <= lemma9)
        log_1mq = _log1mexp(log_q)
        # A = (1-q)/(1 - (q e^{ε2})^{(μ2-1)/μ2}),  B = e^{ε1}/q^{1/(μ1-1)}
        log_a = log_1mq - _log1mexp(np.minimum((log_q + eps2) * (1.0 - 1.0 / mu2), 0.0))
        log_b = eps1 - log_q / (mu1 - 1.0)
        value = np.logaddexp(log_1mq + (lam - 1.0) * log_a, log_q + (lam - 1.0) * log_b) / (lam - 1.0)
    return valid & np.isfinite(value), value


def theorem6_rdp(log_q, *, sigma: float, orders) -> np.ndarray:
    """Data-dependent RDP of GNMax_σ at a histogram whose q̃ = e^{log_q} (PATE 2018 Thm 6, Prop. 10).

    Thm 6: if M is (μ₁, ε₁)- and (μ₂, ε₂)-RDP and Pr[M(D) ≠ i*] ≤ q̃, then for λ ≤ μ₁ the RDP of
    order λ at D is at most ``1/(λ-1)·ln((1-q̃)·A^{λ-1} + q̃·B^{λ-1})`` with
    ``A = (1-q̃)/(1 - (q̃e^{ε₂})^{(μ₂-1)/μ₂})`` and ``B = e^{ε₁}/q̃^{1/(μ₁-1)}``. For GNMax,
    Prop. 10 picks ``μ₂ = σ·sqrt(ln(1/q̃))``, ``μ₁ = μ₂ + 1``, ``ε_i = μ_i/σ²`` (Prop. 8). The bound
    is used only where its conditions hold: ``μ₂ > 1``, ``μ₁ ≥ λ``, ``q̃e^{ε₂} < 1`` (A > 0) and
    ``q̃ ≤ e^{(μ₂-1)ε₂}/(μ₁/(μ₁-1)·μ₂/(μ₂-1))^{μ₂}`` (Lemma 9, the range where the bound
    increases with q̃); elsewhere, and whenever it is larger, the data-independent ``λ/σ²`` is
    returned. ``log_q = -inf`` (a certain outcome) gives 0.

    log_q: [Q] (≤ 0). Returns [Q, L].
    """
    sigma = _check_sigma(sigma)
    lam = _check_orders(orders)[None, :]
    lq = np.atleast_1d(np.asarray(log_q, dtype=np.float64))
    if lq.ndim != 1 or np.any(np.isnan(lq)) or np.any(lq > 0):
        raise ValueError("log_q must be a 1-D array of log-probabilities <= 0 (e.g. the output of gnmax_log_q)")
    lq = lq[:, None]
    indep = lam / sigma**2
    finite = np.isfinite(lq)
    valid, value = _theorem6_parts(np.where(finite, lq, -1.0), sigma, lam)
    out = np.where(valid & finite, np.minimum(indep, value), indep)
    return np.where(np.isneginf(lq), 0.0, out)


def gnmax_data_dependent_rdp(votes, *, sigma: float, orders) -> np.ndarray:
    """Per-query data-dependent RDP of GNMax_σ, ``theorem6_rdp(gnmax_log_q(votes))``, shape [Q, L].

    Sum over axis 0 for the answered queries of a run; this sum is itself sensitive (it depends on
    the votes) and may only be published through :func:`release_gnmax_epsilon`.
    """
    return theorem6_rdp(gnmax_log_q(votes, sigma=sigma), sigma=sigma, orders=orders)


# -- 3. RDP -> (epsilon, delta) ----------------------------------------------------------------------
def epsilon_from_rdp(rdp, *, orders, delta: float) -> tuple[float, float]:
    """``ε = min_λ RDP(λ) + ln(1/δ)/(λ-1)`` over the given orders (Mironov 2017 Prop. 3, the
    conversion PATE 2018 uses, its Thm 5). Returns ``(ε, λ*)``, the smallest minimising order on ties.

    rdp: [L], the composed RDP at each order (``inf`` allowed, NaN not).
    """
    lam = _check_orders(orders)
    delta = check_delta(delta)
    curve = np.asarray(rdp, dtype=np.float64).reshape(-1) if np.ndim(rdp) else np.full(1, float(rdp))
    if curve.shape != lam.shape:
        raise ValueError(f"rdp must have one value per order: got {curve.size} values for {lam.size} orders")
    if np.any(np.isnan(curve)) or np.any(curve < 0):
        raise ValueError("rdp must hold non-negative RDP values (no NaN); inf marks an order with no bound")
    eps = curve + math.log(1.0 / delta) / (lam - 1.0)
    best = int(np.argmin(eps))
    return float(eps[best]), float(lam[best])


def max_queries_within_budget(per_query_rdp, *, orders, epsilon: float, delta: float) -> int:
    """Largest Q ≥ 0 with ``epsilon_from_rdp(Q·per_query_rdp) ≤ epsilon``, for a data-independent
    per-query cost (e.g. ``threshold_rdp + gnmax_rdp`` for a Confident-GNMax query assumed answered).

    Fixes the number of queries (hence training iterations) before training. Returns 0 when even
    no query fits (``min_λ ln(1/δ)/(λ-1) > epsilon`` on the order grid). The converted ε is
    nondecreasing in Q, so the answer is found by doubling then bisection.
    """
    lam = _check_orders(orders)
    epsilon = _check_positive(epsilon, "epsilon", "1.0")
    delta = check_delta(delta)
    cost = np.asarray(per_query_rdp, dtype=np.float64).reshape(-1)
    if cost.shape != lam.shape:
        raise ValueError(f"per_query_rdp must have one value per order: got {cost.size} values for {lam.size} orders")
    if np.any(~np.isfinite(cost)) or np.any(cost < 0):
        raise ValueError("per_query_rdp must hold finite, non-negative RDP values")
    if not np.any(cost > 0):
        raise ValueError("per_query_rdp is zero at every order: any number of queries fits; charge a positive cost")

    def fits(q: int) -> bool:
        return epsilon_from_rdp(q * cost, orders=lam, delta=delta)[0] <= epsilon

    if not fits(0):
        return 0
    lo, hi = 0, 1
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # invariant: fits(lo), not fits(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


# -- 4. smooth sensitivity and its private release -------------------------------------------------
def gnmax_log_q0(*, sigma: float, order: float) -> float:
    """ln q₀: the data-dependent bound of Thm 6 is used (and is below ``λ/σ²``) for ``q̃ ≤ q₀``;
    above q₀ the RDP is the data-independent ``λ/σ²`` (PATE 2018 App. C, the q₀ of Alg. 3).

    Found as the root of ``thm6(q) = λ/σ²`` inside the region where Thm 6's conditions hold (an
    interval ``(0, q_max]``: every condition only gets easier as q̃ decreases); if the bound is
    already below ``λ/σ²`` at q_max, q₀ = q_max. Assumes, as the paper (its condition C5), that the
    bound increases with q̃ below q₀.
    """
    sigma = _check_sigma(sigma)
    lam = np.array([_check_order(order)])
    indep = lam[0] / sigma**2

    def valid(lq: float) -> bool:
        return bool(_theorem6_parts(np.array([lq]), sigma, lam)[0][0])

    def excess(lq: float) -> float:
        return float(_theorem6_parts(np.array([lq]), sigma, lam)[1][0] - indep)

    # μ₁ ≥ λ and μ₂ > 1 need ln q̃ ≤ -max((λ-1)/σ, 1/σ)²; find the edge of the validity region.
    upper = -max((lam[0] - 1.0) / sigma, 1.0 / sigma) ** 2
    if valid(upper):
        edge = upper
    else:
        lower = 2.0 * upper
        while not valid(lower):
            lower *= 2.0
            if lower < -1e12:
                raise RuntimeError(f"no q̃ satisfies Thm 6's conditions for sigma={sigma}, order={lam[0]}")
        for _ in range(200):  # bisection: valid(lower), not valid(upper)
            mid = 0.5 * (lower + upper)
            if mid in (lower, upper):
                break
            lower, upper = (mid, upper) if valid(mid) else (lower, mid)
        edge = lower
    if excess(edge) < 0:
        return float(edge)
    lower = 2.0 * edge
    while excess(lower) >= 0:
        lower *= 2.0
        if lower < -1e12:
            raise RuntimeError(f"Thm 6 never beats the data-independent bound for sigma={sigma}, order={lam[0]}")
    return float(brentq(excess, lower, edge, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=500))


@dataclass(frozen=True)
class _SensitivityCurve:
    """β(q) = RDP of order λ as a function of ln q̃, and its local-sensitivity bound (Alg. 3)."""

    sigma: float
    order: float
    num_classes: int
    log_q0: float

    def rdp(self, log_q: np.ndarray) -> np.ndarray:
        """Thm 6 for ln q̃ ≤ ln q₀, λ/σ² above (the function whose sensitivity is analysed)."""
        lq = np.asarray(log_q, dtype=np.float64).reshape(-1)
        dep = theorem6_rdp(np.minimum(lq, 0.0), sigma=self.sigma, orders=[self.order])[:, 0]
        return np.where(lq <= self.log_q0, dep, self.order / self.sigma**2)

    def log_bounds(self, log_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ln bl(q̃), ln bu(q̃)): the range of q̃ over all neighbours of a histogram with this q̃.

        One teacher moving its vote shrinks or widens every gap ``n_{i*} - n_i`` by at most 2, i.e.
        shifts ``Φ^{-1}(q̃_i)`` by at most ``√2/σ``; the extreme q̃ is reached with all m-1 terms
        equal (PATE 2018 App. C, Prop. 13): ``bu(q) = (m-1)·Φ(Φ^{-1}(q/(m-1)) + √2/σ)``, capped
        at 1 - 1/m, and ``bl(q) = (m-1)·Φ(Φ^{-1}(q/(m-1)) - √2/σ)``. Equal to the paper's
        ``(m-1)/2·erfc(erfc^{-1}(2q/(m-1)) ∓ 1/σ)``.
        """
        lq = np.asarray(log_q, dtype=np.float64)
        log_m1 = math.log(self.num_classes - 1)
        z = ndtri_exp(np.minimum(lq - log_m1, 0.0))
        shift = _SQRT2 / self.sigma
        log_bu = np.minimum(log_m1 + log_ndtr(z + shift), math.log1p(-1.0 / self.num_classes))
        log_bl = np.minimum(log_m1 + log_ndtr(z - shift), lq)
        return log_bl, log_bu

    def interval_bound(self, log_a: np.ndarray, log_b: np.ndarray, pieces: int = 1) -> np.ndarray:
        """Upper bound on the local sensitivity of every histogram with ln q̃ in [log_a, log_b]:
        ``max(β(bu(b)) - β(a), β(b) - β(bl(a)))``. Alg. 3 is the case a = b; for a < b it holds
        because β, bl and bu are nondecreasing in q̃ (β by Lemma 9's condition, the paper's C5).
        With ``pieces > 1`` the interval is cut into that many equal pieces in ln q̃ and the largest
        piece bound is returned (a = -inf keeps the single piece [-inf, b])."""
        log_a = np.asarray(log_a, dtype=np.float64).reshape(-1)
        log_b = np.asarray(log_b, dtype=np.float64).reshape(-1)
        if pieces > 1:  # the union of [t_j, t_{j+1}] covers [a, b]; finer pieces give a tighter bound
            frac = np.arange(pieces + 1) / pieces
            with np.errstate(invalid="ignore"):
                grid = np.where(np.isneginf(log_a)[:, None], -np.inf, log_a[:, None] + (log_b - log_a)[:, None] * frac)
            grid[:, -1] = log_b
            return self.interval_bound(grid[:, :-1], grid[:, 1:]).reshape(-1, pieces).max(axis=1)
        log_bl_a, _ = self.log_bounds(log_a)
        _, log_bu_b = self.log_bounds(log_b)
        up = self.rdp(log_bu_b) - self.rdp(log_a)
        down = self.rdp(log_b) - self.rdp(log_bl_a)
        return np.maximum(np.maximum(up, down), 0.0)


def _curve(sigma: float, order: float, num_classes: int) -> _SensitivityCurve:
    return _SensitivityCurve(sigma, order, num_classes, gnmax_log_q0(sigma=sigma, order=order))


def _walk(state: np.ndarray, sigma: float, k: int, towards_larger_q: bool) -> np.ndarray:
    """ln q̃ along the most extreme walk, shape [Q, k+1] (column d = after d vote changes).

    Larger q̃: one vote from the top class to the runner-up per step (every gap shrinks, the
    runner-up's by 2) while the top leads by ≥ 2; after that the walk is replaced by the cap
    ln(1 - 1/m), the largest q̃ of any histogram. Smaller q̃: one vote from the runner-up to the top
    (every gap widens) until the histogram is unanimous, where q̃ is at its global minimum.
    """
    num_q, m = state.shape
    cap = math.log1p(-1.0 / m)
    state = state.copy()
    path = np.empty((num_q, k + 1))
    path[:, 0] = gnmax_log_q(state, sigma=sigma)
    done = np.zeros(num_q, dtype=bool)
    for d in range(1, k + 1):
        if towards_larger_q:
            done |= (state[:, 0] - state[:, 1]) < 2.0
            go = ~done
            state[go, 0] -= 1.0
            state[go, 1] += 1.0
        else:
            go = state[:, 1] > 0.0
            state[go, 0] += 1.0
            state[go, 1] -= 1.0
            state = -np.sort(-state, axis=1)  # the runner-up may change among tied classes
        path[:, d] = path[:, d - 1]
        if np.any(go):
            path[go, d] = gnmax_log_q(state[go], sigma=sigma)
        if towards_larger_q:
            path[done, d] = cap
    return path


def gnmax_local_sensitivities(votes, *, sigma: float, order: float) -> np.ndarray:
    """Upper bounds on the local sensitivity at distance d of each query's data-dependent RDP of
    order λ, ``A_j(d) ≥ max{LS(n') : n' within d teacher-vote changes of n_j}``, shape [Q, k+1] for
    ``d = 0..k``, nondecreasing in d (PATE 2018 App. C, Alg. 3-5).

    As in Alg. 4-5, the histograms within distance d have q̃ between the two extremes reached by
    walking d steps (:func:`_walk`): towards larger q̃ by moving votes from the top class to the
    runner-up, towards smaller q̃ by moving them from the runner-up to the top class. Alg. 3 bounds
    LS at a given q̃ through bl(q̃) ≤ q̃(neighbour) ≤ bu(q̃). Deviation: instead of evaluating Alg. 3
    at the extremes only (exact when the bound is unimodal in q̃, the paper's condition C6), the
    bound is taken over each q̃-interval between consecutive walk points and accumulated with a
    running maximum, which needs only that the RDP is nondecreasing in q̃ (C5). C6 fails e.g. for
    σ = 5, λ = 10, where the paper's shortcut under-estimates the smooth sensitivity. If even a
    unanimous histogram has q̃ > q₀, the RDP is the data-independent constant for every histogram
    and all bounds are 0.
    """
    v = _check_votes(votes, allow_empty=False)
    unique, inverse, _ = _canonical_histograms(v)
    return _local_sensitivities(unique, _check_sigma(sigma), _check_order(order))[inverse]


def _canonical_histograms(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct sorted (non-increasing) histograms, the index of each query's, and their counts:
    q̃ and every bound here are invariant under relabelling the classes."""
    _num_teachers(v)  # equal row sums
    unique, inverse, counts = np.unique(-np.sort(-v, axis=1), axis=0, return_inverse=True, return_counts=True)
    return unique, inverse.reshape(-1), counts


def _local_sensitivities(state: np.ndarray, sigma: float, order: float) -> np.ndarray:
    """:func:`gnmax_local_sensitivities` for validated histograms sorted non-increasingly."""
    k = _num_teachers(state)
    num_q, m = state.shape
    curve = _curve(sigma, order, m)
    unanimous = np.zeros((1, m))
    unanimous[0, 0] = k
    if gnmax_log_q(unanimous, sigma=sigma)[0] > curve.log_q0:
        return np.zeros((num_q, k + 1))
    lower = _walk(state, sigma, k, towards_larger_q=False)  # [Q, k+1], nonincreasing
    upper = _walk(state, sigma, k, towards_larger_q=True)  # [Q, k+1], nondecreasing
    out = np.empty((num_q, k + 1))
    out[:, 0] = curve.interval_bound(lower[:, 0], upper[:, 0])
    if k > 0:
        down = curve.interval_bound(lower[:, 1:].ravel(), lower[:, :-1].ravel(), _PIECES).reshape(num_q, k)
        up = curve.interval_bound(upper[:, :-1].ravel(), upper[:, 1:].ravel(), _PIECES).reshape(num_q, k)
        out[:, 1:] = np.maximum(down, up)
    return np.maximum.accumulate(out, axis=1)


def _summed_local_sensitivities(v: np.ndarray, sigma: float, order: float) -> np.ndarray:
    """Σ_j A_j(d), shape [k+1], computed once per distinct histogram (memory O(distinct·k))."""
    unique, _, counts = _canonical_histograms(v)
    return counts.astype(np.float64) @ _local_sensitivities(unique, sigma, order)


def smooth_sensitivity(local_sensitivities, *, beta: float) -> float:
    """β-smooth sensitivity ``max_d e^{-βd}·A(d)`` from local sensitivities at distance d = 0, 1, ...
    (Nissim, Raskhodnikova, Smith 2007; PATE 2018 §4.2, App. C). A [D] array, or [Q, D] summed over
    queries first (the sensitivity of a sum of per-query RDPs is at most the sum, distance by distance).
    """
    beta_f = float(beta) if _is_number(beta) else float("nan")
    if not (math.isfinite(beta_f) and beta_f >= 0):
        raise ValueError(f"beta must be a finite number >= 0 (e.g. beta=0.49/order), got {beta!r}")
    ls = np.asarray(local_sensitivities, dtype=np.float64)
    if ls.ndim == 2:
        ls = ls.sum(axis=0)
    if ls.ndim != 1 or ls.size == 0 or np.any(~np.isfinite(ls)) or np.any(ls < 0):
        raise ValueError("local_sensitivities must be a non-empty [D] or [Q, D] array of finite values >= 0")
    return float(np.max(ls * np.exp(-beta_f * np.arange(ls.size))))


def gnmax_smooth_sensitivity(votes, *, sigma: float, order: float, beta: float) -> float:
    """β-smooth sensitivity of the summed data-dependent RDP (order λ) of the given queries."""
    v = _check_votes(votes, allow_empty=False)
    return smooth_sensitivity(_summed_local_sensitivities(v, _check_sigma(sigma), _check_order(order)), beta=beta)


def gnss_rdp(orders, *, beta: float, sigma_s: float) -> np.ndarray:
    """RDP of the GNSS mechanism ``f(D) + SS_β(D)·N(0, σ_s²)`` (PATE 2018 §4.2, App. C Thm 23):
    ``λe^{2β}/σ_s² + (βλ - ½·ln(1 - 2λβ))/(λ - 1)``, valid for ``1 < λ < 1/(2β)``."""
    lam = _check_orders(orders)
    sigma_s = _check_sigma(sigma_s, "sigma_s")
    beta_f = float(beta) if _is_number(beta) else float("nan")
    if not (math.isfinite(beta_f) and beta_f >= 0):
        raise ValueError(f"beta must be a finite number >= 0 (e.g. beta=0.49/order), got {beta!r}")
    if np.any(2.0 * lam * beta_f >= 1.0):
        raise ValueError(
            f"GNSS needs every order < 1/(2*beta) = {1.0 / (2.0 * beta_f) if beta_f else float('inf'):g}, "
            f"got order up to {lam.max():g}; lower beta (e.g. beta=0.49/order) or the order"
        )
    return lam * math.exp(2.0 * beta_f) / sigma_s**2 + (beta_f * lam - 0.5 * np.log1p(-2.0 * lam * beta_f)) / (lam - 1.0)


def optimal_gnss_sigma(*, order: float, beta: float, smooth_sensitivity: float) -> float:
    """σ_s minimising ``λe^{2β}/σ_s² + 2·SS·σ_s`` (GNSS cost plus two standard deviations of the
    released noise): ``(λe^{2β}/SS)^{1/3}``. A choice made by the authors' analysis scripts, not a
    result of the paper; it depends on SS, so using it makes σ_s data-dependent (as in their scripts)."""
    order = _check_order(order)
    ss = _check_positive(smooth_sensitivity, "smooth_sensitivity", "0.1")
    beta_f = float(beta) if _is_number(beta) else float("nan")
    if not (math.isfinite(beta_f) and beta_f >= 0):
        raise ValueError(f"beta must be a finite number >= 0 (e.g. beta=0.49/order), got {beta!r}")
    return (order * math.exp(2.0 * beta_f) / ss) ** (1.0 / 3.0)


@dataclass(frozen=True)
class GNMaxPrivacyRelease:
    """Result of :func:`release_gnmax_epsilon` at one order λ.

    Only ``released_rdp``, ``release_rdp``, ``epsilon`` and the public parameters may be published;
    ``data_dependent_rdp``, ``smooth_sensitivity``, ``noise`` and ``epsilon_exact`` are functions of
    the votes (kept for analysis and tests).
    """

    order: float
    delta: float
    beta: float
    sigma_s: float
    num_queries: int
    data_dependent_rdp: float  # Σ_j β(q̃_j) at λ (sensitive)
    data_independent_rdp: float  # Q·λ/σ²
    smooth_sensitivity: float  # SS_β of the sum (sensitive)
    noise: float  # SS·σ_s·Z, Z ~ N(0, 1) (sensitive)
    released_rdp: float  # data_dependent_rdp + noise: the sanitised data-dependent RDP
    release_rdp: float  # RDP of the GNSS release itself (Thm 23)
    extra_rdp: float  # other (data-independent) RDP at λ composed in, e.g. the threshold checks
    epsilon: float  # released_rdp + release_rdp + extra_rdp + ln(1/δ)/(λ-1)
    epsilon_exact: float  # data_dependent_rdp + release_rdp + extra_rdp + ln(1/δ)/(λ-1) (sensitive)
    epsilon_data_independent: float  # data_independent_rdp + extra_rdp + ln(1/δ)/(λ-1)


def release_gnmax_epsilon(
    votes,
    *,
    sigma: float,
    order: float,
    delta: float,
    beta: float,
    sigma_s: float,
    rng: np.random.Generator,
    extra_rdp: float = 0.0,
) -> GNMaxPrivacyRelease:
    """Privately release the data-dependent ε of the answered GNMax queries (PATE 2018 §4.2).

    votes: [Q, m] histograms of the answered queries (k teachers each); sigma: σ₂ of GNMax;
    order: the Rényi order λ (fixed in advance); beta: the smoothness β, ``λ < 1/(2β)``
    (e.g. ``0.49/λ``); sigma_s: the GNSS noise multiplier; rng: the only source of randomness;
    extra_rdp: data-independent RDP at λ of the other steps (e.g. ``threshold_rdp(λ, σ₁)`` times
    the number of threshold checks), added before the conversion.

    The sum of per-query data-dependent RDPs (the Thm 6 curve of :func:`gnmax_local_sensitivities`,
    equal to :func:`gnmax_data_dependent_rdp` below q₀) is released as
    ``Σ_j β_j + SS_β·σ_s·Z`` (GNSS), which costs :func:`gnss_rdp` at the same order; the released ε
    is ``released + GNSS cost + extra + ln(1/δ)/(λ-1)`` at that single order.
    """
    v = _check_votes(votes, allow_empty=False)
    sigma = _check_sigma(sigma)
    order = _check_order(order)
    delta = check_delta(delta)
    sigma_s = _check_sigma(sigma_s, "sigma_s")
    rng = _check_rng(rng)
    if not _is_number(extra_rdp) or not math.isfinite(float(extra_rdp)) or float(extra_rdp) < 0:
        raise ValueError(f"extra_rdp must be a finite number >= 0 (RDP at `order` of the other steps), got {extra_rdp!r}")
    release_cost = float(gnss_rdp([order], beta=beta, sigma_s=sigma_s)[0])  # validates beta vs order
    curve = _curve(sigma, order, v.shape[1])
    dep = float(np.sum(curve.rdp(gnmax_log_q(v, sigma=sigma))))
    ss = gnmax_smooth_sensitivity(v, sigma=sigma, order=order, beta=beta)
    noise = ss * sigma_s * float(rng.standard_normal())
    tail = math.log(1.0 / delta) / (order - 1.0)
    indep = v.shape[0] * order / sigma**2
    extra = float(extra_rdp)
    return GNMaxPrivacyRelease(
        order=order,
        delta=delta,
        beta=float(beta),
        sigma_s=sigma_s,
        num_queries=int(v.shape[0]),
        data_dependent_rdp=dep,
        data_independent_rdp=indep,
        smooth_sensitivity=ss,
        noise=noise,
        released_rdp=dep + noise,
        release_rdp=release_cost,
        extra_rdp=extra,
        epsilon=dep + noise + release_cost + extra + tail,
        epsilon_exact=dep + release_cost + extra + tail,
        epsilon_data_independent=indep + extra + tail,
    )
