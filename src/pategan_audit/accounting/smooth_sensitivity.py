"""The smooth sensitivity of GNMax's data-dependent RDP and its private release (GNSS): Papernot,
Song, Mironov, Raghunathan, Talwar, Erlingsson, "Scalable Private Learning with PATE", ICLR 2018
(arXiv:1802.08908) §4.2 and App. C. The data-dependent ε of :mod:`.gnmax` is itself a function of
the votes; this module releases it with noise scaled to its smooth sensitivity.

:func:`gnmax_log_q0`, :func:`gnmax_local_sensitivities` (Alg. 3-5), :func:`smooth_sensitivity`,
:func:`gnmax_smooth_sensitivity`, :func:`gnss_rdp` (Thm 23), :func:`optimal_gnss_sigma` and
:func:`release_gnmax_epsilon` -> :class:`GNMaxPrivacyRelease`.

Choices (see each docstring): local sensitivities are returned for every distance ``d = 0..k``
(all histograms of k teachers are within distance k); the local sensitivity at distance d is
bounded over whole q̃-intervals rather than at the extreme q̃ only (Alg. 4-5 with a plateau),
because the paper's shortcut relies on a unimodality condition (C6) that fails for small σ (e.g.
σ = 5, λ = 10), where it under-estimates the smooth sensitivity; see
:func:`gnmax_local_sensitivities`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtri_exp

from .checks import check_order, check_orders, check_positive, check_rng, check_sigma, check_votes, is_number, num_teachers
from .gnmax import gnmax_log_q, theorem6_parts, theorem6_rdp
from .ledger import check_delta

__all__ = [
    "GNMaxPrivacyRelease",
    "gnmax_local_sensitivities",
    "gnmax_log_q0",
    "gnmax_smooth_sensitivity",
    "gnss_rdp",
    "optimal_gnss_sigma",
    "release_gnmax_epsilon",
    "smooth_sensitivity",
]

_SQRT2 = math.sqrt(2.0)
_PIECES = 8  # pieces per q̃-interval between two walk points in gnmax_local_sensitivities


def gnmax_log_q0(*, sigma: float, order: float) -> float:
    """ln q₀: the data-dependent bound of Thm 6 is used (and is below ``λ/σ²``) for ``q̃ ≤ q₀``;
    above q₀ the RDP is the data-independent ``λ/σ²`` (PATE 2018 App. C, the q₀ of Alg. 3).

    Found as the root of ``thm6(q) = λ/σ²`` inside the region where Thm 6's conditions hold (an
    interval ``(0, q_max]``: every condition only gets easier as q̃ decreases); if the bound is
    already below ``λ/σ²`` at q_max, q₀ = q_max. Assumes, as the paper (its condition C5), that the
    bound increases with q̃ below q₀.
    """
    sigma = check_sigma(sigma)
    lam = np.array([check_order(order)])
    indep = lam[0] / sigma**2

    def valid(lq: float) -> bool:
        return bool(theorem6_parts(np.array([lq]), sigma, lam)[0][0])

    def excess(lq: float) -> float:
        return float(theorem6_parts(np.array([lq]), sigma, lam)[1][0] - indep)

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
    v = check_votes(votes, allow_empty=False)
    unique, inverse, _ = _canonical_histograms(v)
    return _local_sensitivities(unique, check_sigma(sigma), check_order(order))[inverse]


def _canonical_histograms(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct sorted (non-increasing) histograms, the index of each query's, and their counts:
    q̃ and every bound here are invariant under relabelling the classes."""
    num_teachers(v)  # equal row sums
    unique, inverse, counts = np.unique(-np.sort(-v, axis=1), axis=0, return_inverse=True, return_counts=True)
    return unique, inverse.reshape(-1), counts


def _local_sensitivities(state: np.ndarray, sigma: float, order: float) -> np.ndarray:
    """:func:`gnmax_local_sensitivities` for validated histograms sorted non-increasingly."""
    k = num_teachers(state)
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
    beta_f = float(beta) if is_number(beta) else float("nan")
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
    v = check_votes(votes, allow_empty=False)
    return smooth_sensitivity(_summed_local_sensitivities(v, check_sigma(sigma), check_order(order)), beta=beta)


def gnss_rdp(orders, *, beta: float, sigma_s: float) -> np.ndarray:
    """RDP of the GNSS mechanism ``f(D) + SS_β(D)·N(0, σ_s²)`` (PATE 2018 §4.2, App. C Thm 23):
    ``λe^{2β}/σ_s² + (βλ - ½·ln(1 - 2λβ))/(λ - 1)``, valid for ``1 < λ < 1/(2β)``."""
    lam = check_orders(orders)
    sigma_s = check_sigma(sigma_s, "sigma_s")
    beta_f = float(beta) if is_number(beta) else float("nan")
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
    order = check_order(order)
    ss = check_positive(smooth_sensitivity, "smooth_sensitivity", "0.1")
    beta_f = float(beta) if is_number(beta) else float("nan")
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
    v = check_votes(votes, allow_empty=False)
    sigma = check_sigma(sigma)
    order = check_order(order)
    delta = check_delta(delta)
    sigma_s = check_sigma(sigma_s, "sigma_s")
    rng = check_rng(rng)
    if not is_number(extra_rdp) or not math.isfinite(float(extra_rdp)) or float(extra_rdp) < 0:
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
