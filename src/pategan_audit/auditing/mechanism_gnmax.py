"""Mechanism-level audit of ``gnmax``'s vote aggregator, Confident-GNMax (one query, no training).

The counterpart of :mod:`.mechanism` (Chadha et al. 2024, "Auditing private prediction": audit
the release mechanism itself) for the aggregator of PATE 2018 (``papernot2018scalable`` §4.1,
Alg. 1) as the ``gnmax`` preset runs it (:func:`~pategan_audit.implementations.gnmax.confident_gnmax`).
On two classes one query releases one of three outcomes:

* ⊥ (not answered) when ``max(n0, n1) + N(0, σ₁²) < T`` with ``T = threshold · k``;
* otherwise the Gaussian noisy argmax: "real" (1) when ``n1 + N(0, σ₂²) > n0 + N(0, σ₂²)``,
  else "fake" (0),

so ``P(⊥) = Φ((T − top)/σ₁)`` and ``P(1) = (1 − P(⊥)) · Φ((n1 − n0)/(√2 σ₂))`` exactly. Two
neighbouring vote counts ``n1`` and ``n1 + 1`` (one teacher, i.e. one record under disjoint
teachers, changes its vote) are queried ``queries`` times each through the preset's own
aggregator. :func:`audit_confident_gnmax` reports

* the outcome counts and the exact probabilities, and whether every exact probability lies in
  its Clopper-Pearson interval (``matches_analysis``: the implementation draws what the analysis
  assumes; six two-sided intervals at α/6 each, Bonferroni);
* a 1 − α lower confidence bound on the pure per-query ε, ``max_r |ln P(r | n1) − ln P(r | n1')|``
  (the largest lower end over outcomes of the interval of each log ratio), its point estimate
  and its exact value;
* the exact Rényi divergence of the pair (both directions) at a few orders beside what the
  preset's accountant charges per query, ``λ/(2σ₁²) + λ/σ₂²`` (the threshold check plus GNMax,
  data-independent, :func:`~pategan_audit.accounting.rdp.per_query_rdp`), and the exact
  worst case over every pair of this k (:func:`~pategan_audit.implementations.gnmax.exact_query_rdp`);
* ``sound``: the charge covers the exact worst case at every order of the accountant's grid
  (up to 256) and the implementation matches the analysis.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..accounting.gnmax import DEFAULT_ORDERS
from ..accounting.rdp import per_query_rdp
from ..implementations.gnmax import confident_gnmax, confident_gnmax_log_probs, exact_query_rdp
from .bounds import clopper_pearson_interval

__all__ = ["OUTCOMES", "confident_gnmax_log_probs", "count_outcomes", "audit_confident_gnmax", "audit_table"]

#: the three releases of one query on two classes, in the order of every array here
OUTCOMES = ("not answered", "fake", "real")


def count_outcomes(k: int, n1: int, *, queries: int, threshold: float, sigma_threshold: float, sigma_vote: float,
                   generator: torch.Generator, batch_size: int = 500_000) -> np.ndarray:
    """[3] counts of ⊥, 0, 1 among ``queries`` releases on ``n1`` through the preset's own
    :func:`~pategan_audit.implementations.gnmax.confident_gnmax`, in batches."""
    counts, left = np.zeros(3, dtype=np.int64), int(queries)
    while left > 0:
        m = min(batch_size, left)
        labels, answered, _ = confident_gnmax(torch.full((m,), float(n1)), num_teachers=k, threshold=threshold,
                                              sigma_threshold=sigma_threshold, sigma_vote=sigma_vote,
                                              generator=generator)
        n_answered = int(answered.sum())
        ones = int((labels.bool() & answered).sum())
        counts += np.array([m - n_answered, n_answered - ones, ones])
        left -= m
    return counts


def _renyi(p: np.ndarray, q: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """D_λ(P‖Q) of two distributions given by log-probabilities, at each order λ > 1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = orders[:, None] * p[None, :] + (1 - orders)[:, None] * q[None, :]
    terms = np.where(np.isfinite(p)[None, :], terms, -np.inf)
    return np.logaddexp.reduce(terms, axis=1) / (orders - 1)


def audit_confident_gnmax(
    k: int,
    *,
    sigma_threshold: float,
    sigma_vote: float,
    threshold: float = 0.6,
    n1: int | None = None,
    queries: int = 10**6,
    alpha: float = 0.05,
    seed: int = 0,
    orders=(2.0, 8.0, 32.0),
) -> dict:
    """Audit one neighbouring pair ``(n1, n1 + 1)`` of Confident-GNMax with ``k`` teachers (see the
    module docstring). ``n1`` defaults to the count just below the threshold on the "real" side,
    ``⌈T⌉ − 1``, where one vote moves ``P(⊥)`` the most."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer >= 2 (the number of teachers), got {k!r}")
    T = float(threshold) * k
    n1 = int(min(k - 1, max(0, math.ceil(T) - 1))) if n1 is None else int(n1)
    if not 0 <= n1 < k:
        raise ValueError(f"n1 must lie in [0, k - 1] so that n1 + 1 is a vote count of k = {k} teachers, got {n1}")
    if not (isinstance(queries, (int, np.integer)) and queries >= 1):
        raise ValueError(f"queries must be a positive integer, got {queries!r}")
    gen = torch.Generator().manual_seed(int(seed))
    kw = dict(threshold=threshold, sigma_threshold=sigma_threshold, sigma_vote=sigma_vote)
    pair = (n1, n1 + 1)
    counts = [count_outcomes(k, m, queries=queries, generator=gen, **kw) for m in pair]
    exact = [confident_gnmax_log_probs(k, m, **kw) for m in pair]
    sig = alpha / 6.0  # six two-sided intervals hold together with probability >= 1 - alpha
    intervals = [[clopper_pearson_interval(errors=int(c), trials=int(queries), significance=sig) for c in cs]
                 for cs in counts]
    matches = all(lo <= math.exp(e) <= hi for cs, es in zip(intervals, exact) for (lo, hi), e in zip(cs, es))
    with np.errstate(divide="ignore"):
        point = [np.log(cs / float(queries)) for cs in counts]
    lower_ends = []
    for r in range(3):
        (a_lo, a_hi), (b_lo, b_hi) = intervals[0][r], intervals[1][r]
        with np.errstate(divide="ignore"):
            lo_ratio = math.log(a_lo) - math.log(b_hi) if a_lo > 0 else -math.inf
            hi_ratio = math.log(a_hi) - math.log(b_lo) if b_lo > 0 else math.inf
        lower_ends.append(0.0 if lo_ratio <= 0 <= hi_ratio else min(abs(lo_ratio), abs(hi_ratio)))
    finite = [abs(a - b) for a, b in zip(*point) if np.isfinite(a) and np.isfinite(b)]
    grid = DEFAULT_ORDERS[DEFAULT_ORDERS <= 256]
    charged_grid = per_query_rdp(sigma_threshold, sigma_vote, grid)
    worst_grid = exact_query_rdp(k, orders=grid, **kw)
    orders = np.asarray(orders, dtype=np.float64)
    pair_rdp = np.maximum(_renyi(exact[0], exact[1], orders), _renyi(exact[1], exact[0], orders))
    row = {"teachers": k, "sigma threshold": float(sigma_threshold), "sigma vote": float(sigma_vote),
           "threshold T": T, "n1": n1, "queries per count": int(queries),
           **{f"count {o} (n1)": int(c) for o, c in zip(OUTCOMES, counts[0])},
           **{f"count {o} (n1+1)": int(c) for o, c in zip(OUTCOMES, counts[1])},
           "matches_analysis": bool(matches),
           "eps_lo": float(max(lower_ends)), "eps_hat": float(max(finite)) if finite else float("nan"),
           "eps_exact": float(np.max(np.abs(exact[0] - exact[1])))}
    for o, d in zip(orders, pair_rdp):
        row[f"exact RDP at {o:g} (pair)"] = float(d)
        row[f"charged RDP at {o:g}"] = float(per_query_rdp(sigma_threshold, sigma_vote, np.array([o]))[0])
    row["exact / charged (worst pair, max over orders)"] = float(np.max(worst_grid / charged_grid))
    row["sound"] = bool(matches and np.all(worst_grid <= charged_grid + 1e-15))
    return row


def audit_table(plans: pd.DataFrame, *, threshold: float = 0.6, queries: int = 10**6, seed: int = 0) -> pd.DataFrame:
    """:func:`audit_confident_gnmax` for every distinct (teachers, sigma) of ``plans`` (the
    ``done_right.plan_table`` of the bundled datasets), σ₁ = σ₂ = sigma as the preset sets them."""
    rows = []
    for (k, sigma), group in plans.groupby(["teachers", "sigma"]):
        row = audit_confident_gnmax(int(k), sigma_threshold=float(sigma), sigma_vote=float(sigma),
                                    threshold=threshold, queries=queries, seed=seed)
        rows.append({"datasets": ", ".join(group.index), **row})
    return pd.DataFrame(rows).set_index("datasets")
