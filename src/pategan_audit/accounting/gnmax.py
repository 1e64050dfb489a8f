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

The smooth sensitivity of the data-dependent RDP and its private release (PATE 2018 §4.2, App. C)
are in :mod:`.smooth_sensitivity`; the argument checks in :mod:`.checks`.

Choice (see :func:`gnmax_log_q`): q̃ is capped at ``1 - 1/m`` (valid because the plurality class of
a noisy argmax with i.i.d. noise wins with probability ≥ 1/m, and the cap only acts where the
data-independent bound is used anyway).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, logsumexp

from .checks import check_orders, check_positive, check_sigma, check_votes
from .ledger import check_delta

__all__ = [
    "DEFAULT_ORDERS",
    "epsilon_from_rdp",
    "gaussian_rdp",
    "gnmax_data_dependent_rdp",
    "gnmax_log_q",
    "gnmax_rdp",
    "max_queries_within_budget",
    "theorem6_parts",
    "theorem6_rdp",
    "threshold_rdp",
]

#: A grid of real Rényi orders > 1 (fine near 1, geometric above 100) for :func:`epsilon_from_rdp`.
DEFAULT_ORDERS: np.ndarray = np.concatenate(
    [np.arange(1.25, 10.0, 0.25), np.arange(10.0, 100.0, 1.0), np.geomspace(100.0, 5000.0, 50)]
)
DEFAULT_ORDERS.setflags(write=False)

_SQRT2 = math.sqrt(2.0)


# -- validation ------------------------------------------------------------------------------
# -- 1. data-independent RDP ----------------------------------------------------------------------
def gaussian_rdp(orders, *, sigma: float, sensitivity: float = 1.0) -> np.ndarray:
    """RDP of the Gaussian mechanism with L2 sensitivity Δ and noise N(0, σ²): ``λΔ²/(2σ²)``
    (Mironov 2017, Prop. 7; PATE 2018 §3). Returns shape [L]."""
    lam = check_orders(orders)
    sigma = check_sigma(sigma)
    sens = check_positive(sensitivity, "sensitivity", "1.0")
    return lam * sens**2 / (2.0 * sigma**2)


def gnmax_rdp(orders, *, sigma: float) -> np.ndarray:
    """Data-independent RDP of one GNMax answer: ``λ/σ²`` (PATE 2018 Prop. 8).

    A vote histogram has L2 sensitivity √2 (one teacher moves its vote), so this is
    :func:`gaussian_rdp` with Δ = √2 (evaluated as ``λ/σ²`` to avoid the rounding of √2²).
    """
    return check_orders(orders) / check_sigma(sigma) ** 2


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
    v = check_votes(votes)
    sigma = check_sigma(sigma)
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


def theorem6_parts(log_q: np.ndarray, sigma: float, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(validity mask, raw Thm 6 value) broadcast over log_q and lam, for finite log_q < 0 (no
    argument checks: :func:`theorem6_rdp` is the checked entry; the smooth sensitivity's curve
    reads the mask too)."""
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
    sigma = check_sigma(sigma)
    lam = check_orders(orders)[None, :]
    lq = np.atleast_1d(np.asarray(log_q, dtype=np.float64))
    if lq.ndim != 1 or np.any(np.isnan(lq)) or np.any(lq > 0):
        raise ValueError("log_q must be a 1-D array of log-probabilities <= 0 (e.g. the output of gnmax_log_q)")
    lq = lq[:, None]
    indep = lam / sigma**2
    finite = np.isfinite(lq)
    valid, value = theorem6_parts(np.where(finite, lq, -1.0), sigma, lam)
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
    lam = check_orders(orders)
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
    lam = check_orders(orders)
    epsilon = check_positive(epsilon, "epsilon", "1.0")
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
