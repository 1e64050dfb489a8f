"""Mechanism-level audit of each preset's vote aggregator: one query, no GAN training.

In the style of Chadha et al. (2024), "Auditing private prediction", which audits the
prediction-release mechanism itself: the aggregator a preset configures (implementation notes §common.votes, §corrected.votes; :mod:`..components.votes`) is queried millions of times on two neighbouring
vote counts, ``n1`` and ``n1 + 1`` with the same k (one teacher's vote changes, i.e. one record
under disjoint partitions). Its output is one bit, so the privacy loss of one query is exactly::

    ε(n1, n1') = max_{r ∈ {0,1}} |ln P(r | n1) − ln P(r | n1')|.

For each preset :func:`audit_aggregator` reports

* the empirical estimate of ε with a 1 − α confidence interval: a two-sided Clopper-Pearson
  interval at α/2 on each of P(1 | n1), P(1 | n1') (Bonferroni: all four one-sided ends hold
  together with probability ≥ 1 − α), propagated to each log ratio; ``eps_lo`` is a valid
  lower confidence bound on the per-query ε;
* the exact value from the Laplace (or Gaussian) CDF, at the audited pair and the worst over
  all pairs of this k;
* what the preset's accountant (:mod:`..accounting.formulas`) charges: the pure per-query ε its
  data-independent bound stands for (``U_l = 2λ²l(l+1)`` is PATE's Thm 2 moment bound of a
  2λ-DP query, so 2λ), its data-dependent moment increments at n1 and n1' against the exact
  log-moments of the mechanism (Abadi et al. 2016 Def. of α; the quantity an accountant must
  bound), and the (ε̂, δ) its tail bound gives for one query, ``ε̂ = min_l (α(l) + ln 1/δ)/l``,
  against the mechanism's true δ at that ε̂;
* a verdict: ``sound`` when every charged moment is at least the true one at the audited pair
  (``moment_factor`` ≤ 1) and the true δ at ε̂ is at most δ; else ``under-charges``.

original and turing have no vote aggregator. Their only noise is ``N(0, σ²)`` on the 0/1
real/fake indicator labels (V14, V16); audited analogously as the bit ``1[M + N(0, σ²) > 0.5]``
for M = 0 vs 1, against the (ε, δ) their σ formula claims (no accountant). The labels hold no
training data, so this checks the calibration claim only, not the model's privacy.

Deviation: synthcity's batch rule O4 (batches whose noisy labels are at least half "real" are
relabelled 0 and not charged) is a training-loop rule, not part of one query, and is ignored.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy import special

from ..accounting.formulas import epsilon_from_moments, moment_increments
from ..components.votes import aggregate
from ..implementations.registry import PRESETS, create
from .bounds import clopper_pearson_interval

__all__ = ["AggregatorSpec", "aggregator_spec", "log_output_probs", "count_ones", "audit_aggregator",
           "audit_grid", "audit_all"]

_LN_HALF = math.log(0.5)


@dataclass(frozen=True)
class AggregatorSpec:
    """One preset's per-query release, as configured (no training).

    mechanism: "single_noise", "two_noise_argmax" (Laplace with scale ``scale``, threshold
    offset ``offset``) or "gaussian_indicator" (σ = ``scale``). lam / accountant / num_moments:
    what the preset's accountant is given (None for original and turing, which have none);
    claimed_epsilon / claimed_delta: the preset's privacy target.
    """

    preset: str
    mechanism: str
    scale: float
    offset: float
    lam: float | None
    accountant: str | None
    num_moments: int | None
    claimed_epsilon: float
    claimed_delta: float


def aggregator_spec(preset: str, *, lam: float | None = None) -> AggregatorSpec:
    """Read the aggregator off an unfitted preset (``create(preset)``; ``lam`` overrides λ where the
    preset has one): Laplace scale from the preset's own ``laplace_scale`` (λ for updated, V15;
    1/λ otherwise), mechanism from ``vote_mechanism``, threshold offset from ``vote_offset``."""
    probe = create(preset)
    overrides = {"lam": float(lam)} if lam is not None and hasattr(probe.config, "lam") else {}
    model = create(preset, **overrides) if overrides else probe
    cfg = model.config
    if not hasattr(cfg, "vote_mechanism"):
        return AggregatorSpec(preset, "gaussian_indicator", float(model._sigma()), 0.0, None, None, None,
                              float(cfg.epsilon), float(cfg.delta))
    return AggregatorSpec(preset, cfg.vote_mechanism, float(model.laplace_scale()), float(model.vote_offset),
                          float(cfg.lam), cfg.accountant, int(cfg.num_moments), float(cfg.epsilon), float(cfg.delta))


# -- exact output probabilities ------------------------------------------------------------------
def _log_tail_pair(x: np.ndarray, log_tail_pos) -> tuple[np.ndarray, np.ndarray]:
    """(ln P(W > x), ln P(W < x)) of a symmetric continuous W, from ln P(W > |x|)."""
    tail = log_tail_pos(np.abs(x))
    head = np.log1p(-np.exp(tail))
    return np.where(x >= 0, tail, head), np.where(x >= 0, head, tail)


def log_output_probs(spec: AggregatorSpec, *, k: int, n1) -> tuple[np.ndarray, np.ndarray]:
    """(ln P(r=1 | n1), ln P(r=0 | n1)) for each vote count in ``n1`` ([Q]), without cancellation.

    single_noise: r = 1[n1 + Z > (k + offset)/2], Z ~ Lap(b): P(Z > x) = ½e^{−x/b} for x ≥ 0.
    two_noise_argmax: r = 1 iff Z0 − Z1 < n1 − n0; the difference of two Lap(b) has
    P(D > x) = e^{−x/b}(2 + x/b)/4 for x ≥ 0 (Lemma 4's q, PATE 2017, is this with x = γΔ).
    gaussian_indicator: r = 1[n1 + N(0, σ²) > 1/2] for n1 ∈ {0, 1}.
    """
    n1 = np.asarray(n1, float)
    b = spec.scale
    if spec.mechanism == "single_noise":
        return _log_tail_pair((k + spec.offset) / 2.0 - n1, lambda x: _LN_HALF - x / b)
    if spec.mechanism == "two_noise_argmax":
        log_d_tail = lambda x: -x / b + np.log(2.0 + x / b) - math.log(4.0)  # noqa: E731
        lp0, lp1 = _log_tail_pair(2.0 * n1 - k, log_d_tail)  # P(D > m) = P(r=0), P(D < m) = P(r=1)
        return lp1, lp0
    if spec.mechanism == "gaussian_indicator":
        z = (n1 - 0.5) / b
        return special.log_ndtr(z), special.log_ndtr(-z)
    raise ValueError(f"unknown mechanism {spec.mechanism!r}")


def count_ones(spec: AggregatorSpec, *, k: int, n1: int, queries: int, generator: torch.Generator,
               batch_size: int = 250_000) -> int:
    """Number of r = 1 among ``queries`` releases on the vote count ``n1``, through the project's
    own aggregator (:func:`..components.votes.aggregate`), in batches (float64)."""
    ones, left = 0, int(queries)
    while left > 0:
        m = min(batch_size, left)
        votes = torch.full((m,), int(n1), dtype=torch.int64)
        if spec.mechanism == "gaussian_indicator":
            noise = torch.randn((m,), dtype=torch.float64, generator=generator) * spec.scale
            labels = (votes.to(torch.float64) + noise > 0.5)
        else:
            labels = aggregate(votes, mechanism=spec.mechanism, num_teachers=k, laplace_scale=spec.scale,
                               generator=generator, offset=spec.offset).labels
        ones += int(labels.sum())
        left -= m
    return ones


# -- loss, moments, δ ------------------------------------------------------------------------------
def _pair_loss(a: tuple, b: tuple) -> float:
    with np.errstate(invalid="ignore"):
        diffs = [abs(float(x) - float(y)) for x, y in zip(a, b)]
    return float(max(0.0 if math.isnan(d) else d for d in diffs))


def _moments(own: tuple, other: tuple, orders: np.ndarray) -> np.ndarray:
    """ln Σ_r P(r|d)^{l+1} P(r|d')^{−l}, l = orders (log-moment of the privacy loss, d vs d')."""
    return np.logaddexp(own[0] + orders * (own[0] - other[0]), own[1] + orders * (own[1] - other[1]))


def _delta_at(own: tuple, other: tuple, eps: float) -> float:
    """Σ_r max(0, P(r|d) − e^ε P(r|d')): the least δ for which the query is (ε, δ)-DP, d vs d'."""
    return float(sum(max(0.0, math.exp(p) - math.exp(eps + q)) for p, q in zip(own, other)))


def _log_interval(lo: float, hi: float) -> tuple[float, float]:
    with np.errstate(divide="ignore"):
        return float(np.log(lo)), float(np.log(hi))


def _abs_interval(lo: float, hi: float) -> tuple[float, float]:
    """Interval of |x| for x ∈ [lo, hi]."""
    if lo <= 0 <= hi:
        return 0.0, max(-lo, hi)
    return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))


def audit_aggregator(
    preset: str,
    *,
    k: int,
    n1: int | None = None,
    queries: int = 10**6,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float = 1e-5,
    lam: float | None = None,
    batch_size: int = 250_000,
) -> dict:
    """Audit one query of ``preset``'s aggregator on the votes ``n1`` vs ``n1 + 1`` (k teachers).

    n1: default ⌊k/2⌋, the pair at the threshold (for odd k it straddles k/2), where both output
    probabilities are measurable. ``queries`` releases per vote count, from one
    ``torch.Generator`` seeded with ``seed`` (same seed → same record). For original/turing the
    pair is the indicator M = 0 vs 1 and k, n1 are ignored. Returns a flat dict (keys in the
    module docstring's order; see :func:`audit_all` for the columns).
    """
    spec = aggregator_spec(preset, lam=lam)
    gaussian = spec.mechanism == "gaussian_indicator"
    if gaussian:
        n1 = 0
    else:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        n1 = k // 2 if n1 is None else int(n1)
        if not 0 <= n1 < k:
            raise ValueError(f"n1 must lie in [0, k-1] = [0, {k - 1}] (the pair is n1 vs n1 + 1), got {n1}")
    if queries < 1:
        raise ValueError(f"queries must be >= 1, got {queries}")
    pair = (n1, n1 + 1)
    gen = torch.Generator().manual_seed(int(seed))
    ones = [count_ones(spec, k=k, n1=v, queries=queries, generator=gen, batch_size=batch_size) for v in pair]

    # empirical: joint 1 − α intervals on P(1 | n1), P(1 | n1')
    ci = [clopper_pearson_interval(errors=c, trials=queries, significance=alpha / 2) for c in ones]
    log_ratio_1 = (_log_interval(*ci[0])[0] - _log_interval(*ci[1])[1], _log_interval(*ci[0])[1] - _log_interval(*ci[1])[0])
    ci0 = [(1 - hi, 1 - lo) for lo, hi in ci]
    log_ratio_0 = (_log_interval(*ci0[0])[0] - _log_interval(*ci0[1])[1], _log_interval(*ci0[0])[1] - _log_interval(*ci0[1])[0])
    abs1, abs0 = _abs_interval(*log_ratio_1), _abs_interval(*log_ratio_0)  # CP upper ends are > 0: no NaN
    p_hat = [c / queries for c in ones]
    with np.errstate(divide="ignore", invalid="ignore"):
        eps_hat = _pair_loss(tuple(np.log([p_hat[0], 1 - p_hat[0]])), tuple(np.log([p_hat[1], 1 - p_hat[1]])))

    # exact
    lp = [tuple(float(a[0]) for a in log_output_probs(spec, k=k, n1=[v])) for v in pair]
    eps_exact = _pair_loss(lp[0], lp[1])
    if gaussian:
        eps_worst = eps_exact
    else:
        grid1, grid0 = log_output_probs(spec, k=k, n1=np.arange(k + 1))
        eps_worst = float(np.max(np.maximum(np.abs(np.diff(grid1)), np.abs(np.diff(grid0)))))

    rec = {
        "preset": preset, "mechanism": spec.mechanism, "scale": spec.scale, "lam": spec.lam,
        "accountant": spec.accountant, "k": None if gaussian else k, "n1": n1, "n1_neighbour": n1 + 1,
        "queries": int(queries), "seed": int(seed), "alpha": alpha, "delta": delta,
        "p1": p_hat[0], "p1_neighbour": p_hat[1], "p1_exact": math.exp(lp[0][0]), "p1_neighbour_exact": math.exp(lp[1][0]),
        "eps_hat": eps_hat, "eps_lo": max(abs1[0], abs0[0]), "eps_hi": max(abs1[1], abs0[1]),
        "eps_exact": eps_exact, "eps_exact_worst_pair": eps_worst,
    }
    directions = ((0, 1), (1, 0))

    def delta_lower(d: int, e: int, eps: float) -> float:  # empirical lower bound on Σ_r max(0, P(r|d) − e^ε P(r|e))
        lo1, hi1 = ci[d][0], ci[e][1]
        lo0, hi0 = ci0[d][0], ci0[e][1]
        return max(0.0, lo1 - math.exp(eps) * hi1) + max(0.0, lo0 - math.exp(eps) * hi0)

    if gaussian:  # claim: (ε, δ) of the preset's target, per label; no accountant
        eps_c = spec.claimed_epsilon
        d_true = max(_delta_at(lp[d], lp[e], eps_c) for d, e in directions)
        d_lo = max(delta_lower(d, e, eps_c) for d, e in directions)
        sound = d_true <= spec.claimed_delta
        rec.update({
            "eps_accountant_pure": float("nan"), "factor_pure": float("nan"), "moment_factor": float("nan"),
            "moment_factor_all_votes": float("nan"), "eps_hat_one_query": eps_c, "delta_claimed": spec.claimed_delta,
            "delta_true_at_eps_hat": d_true, "delta_lo_at_eps_hat": d_lo,
            "verdict": "sound" if sound else "under-charges",
            "certified": bool(d_lo > spec.claimed_delta), "assumption_refuted": bool(d_lo > spec.claimed_delta),
            "note": "no vote aggregator: Gaussian noise on indicator labels that hold no data (V14/V16); "
                    "checked against the (ε, δ) its σ formula claims per label",
        })
        return rec

    # accountant: data-dependent increments at n1 and n1', vs the exact directional moments
    L = spec.num_moments
    orders = np.arange(1, L + 1, dtype=float)
    charged = moment_increments(spec.accountant, n1=np.array(pair), num_teachers=k, lam=spec.lam, num_moments=L)
    true = np.stack([_moments(lp[d], lp[e], orders) for d, e in directions])
    all_votes = np.arange(k + 1)
    charged_all = moment_increments(spec.accountant, n1=all_votes, num_teachers=k, lam=spec.lam, num_moments=L)
    g1, g0 = log_output_probs(spec, k=k, n1=all_votes)
    true_all = np.full((k + 1, L), -np.inf)
    for step in (-1, 1):
        nb = np.clip(all_votes + step, 0, k)
        mom = np.logaddexp(g1[:, None] + orders * (g1 - g1[nb])[:, None], g0[:, None] + orders * (g0 - g0[nb])[:, None])
        inside = ((all_votes + step >= 0) & (all_votes + step <= k))[:, None]
        true_all = np.where(inside, np.maximum(true_all, mom), true_all)

    def factor(tr: np.ndarray, ch: np.ndarray) -> float:
        if np.isnan(ch).any():
            return float("nan")
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(ch > 0, tr / np.where(ch > 0, ch, 1.0), np.where(tr > 0, np.inf, 0.0))
        return float(np.max(ratio))

    m_factor = factor(true, charged)
    eps_acc = 2.0 * spec.lam
    one_query = []
    for (d, e), ch in zip(directions, charged):
        eps1 = epsilon_from_moments(ch, delta=delta, warn=False)[0]
        one_query.append((_delta_at(lp[d], lp[e], eps1) if math.isfinite(eps1) else float("nan"), eps1,
                          delta_lower(d, e, eps1) if math.isfinite(eps1) else float("nan")))
    d_true, eps1, d_lo = max(one_query, key=lambda t: -1.0 if math.isnan(t[0]) else t[0])
    if math.isnan(m_factor):
        verdict = "undefined (NaN charge: the released loop stops)"
    elif m_factor <= 1 + 1e-9 and d_true <= delta:
        verdict = "sound"
    else:
        verdict = "under-charges"
    rec.update({
        "eps_accountant_pure": eps_acc, "factor_pure": eps_exact / eps_acc,
        "charged_l1": float(charged[:, 0].min()), "true_moment_l1": float(true[:, 0].max()),
        "moment_factor": m_factor, "moment_factor_all_votes": factor(true_all, charged_all),
        "eps_hat_one_query": eps1, "delta_claimed": delta, "delta_true_at_eps_hat": d_true, "delta_lo_at_eps_hat": d_lo,
        "verdict": verdict,
        "certified": bool(not math.isnan(d_lo) and d_lo > delta),
        "assumption_refuted": bool(rec["eps_lo"] > eps_acc),
        "note": "O4 batch rule ignored" if preset == "synthcity" else "",
    })
    return rec


def audit_grid(preset: str, *, k: int, queries: int = 10**5, seed: int = 0, **kwargs) -> pd.DataFrame:
    """:func:`audit_aggregator` for every pair (n1, n1 + 1), n1 = 0..k−1 (one row each)."""
    return pd.DataFrame([audit_aggregator(preset, k=k, n1=v, queries=queries, seed=seed, **kwargs) for v in range(k)])


def audit_all(
    *,
    k: int = 5,
    n1: int | None = None,
    lam: float | None = None,
    queries: int = 10**6,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float = 1e-5,
    presets=PRESETS,
) -> pd.DataFrame:
    """One row per preset (default all seven) at its benchmarked λ (or ``lam`` for all).

    Columns: preset, mechanism, scale (Laplace scale or σ), lam, accountant, k, n1, n1_neighbour;
    p1, p1_neighbour (measured P(r=1)) and their exact values; eps_hat, [eps_lo, eps_hi] (1 − α
    CI of the per-query ε), eps_exact (this pair), eps_exact_worst_pair (all pairs of k);
    eps_accountant_pure (2λ), factor_pure = eps_exact / 2λ; charged_l1, true_moment_l1;
    moment_factor = max_l true α(l) / charged α(l) at this pair (> 1: under-charged), and the same
    over every vote count (moment_factor_all_votes); eps_hat_one_query (the accountant's ε̂ after
    this one query), delta_true_at_eps_hat (exact) and delta_lo_at_eps_hat (1 − α lower bound);
    verdict; certified (the measurement alone refutes the one-query claim: δ_lo > δ at ε̂);
    assumption_refuted (ε_lo > 2λ: the per-query pure ε that the data-independent bound U_l stands
    for is exceeded; this does not by itself make U_l too small for l ≤ L); note.
    """
    rows = [audit_aggregator(p, k=k, n1=n1, lam=lam, queries=queries, seed=seed, alpha=alpha, delta=delta)
            for p in presets]
    return pd.DataFrame(rows)


#: Columns of :func:`summary_table`: what a reader compares (measured, exact, charged, verdict).
SUMMARY_COLUMNS = {
    "preset": "preset", "mechanism": "mechanism", "lam": "λ",
    "eps_lo": "ε per query, measured (lower CI)", "eps_exact": "ε per query, exact (this pair)",
    "eps_exact_worst_pair": "ε per query, exact (worst pair)", "eps_accountant_pure": "accountant's 2λ",
    "moment_factor_all_votes": "true / charged moment (max)", "eps_hat_one_query": "accountant's ε̂ after 1 query",
    "delta_true_at_eps_hat": "true δ at that ε̂", "verdict": "verdict", "certified": "refuted by measurement alone",
}


def summary_table(audit: pd.DataFrame) -> pd.DataFrame:
    """The reader's view of :func:`audit_all`: one row per preset, the columns of
    :data:`SUMMARY_COLUMNS` renamed for a page."""
    table = audit[list(SUMMARY_COLUMNS)].rename(columns=SUMMARY_COLUMNS).set_index("preset")
    numbers = table.select_dtypes("number").columns
    table[numbers] = table[numbers].map(lambda v: float(f"{v:.4g}") if np.isfinite(v) else v)  # 4 significant digits
    return table
