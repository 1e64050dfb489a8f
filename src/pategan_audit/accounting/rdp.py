"""Rényi-DP accounting of Confident-GNMax as gnmax trains with it (PATE 2018, ``papernot2018scalable``
§4.1, Prop. 8; our gnmax preset, beyond the audit paper ``ganev2025elusive`` §7).

:class:`RdpAccountant` implements the accountant interface of :mod:`.ledger`: every query is
charged the data-independent RDP of the threshold check plus GNMax (:func:`per_query_rdp`),
whatever its votes, and ε̂ is the classic conversion at δ. :func:`noise_for_budget` inverts it
(the σ that spends a budget on a number of queries); :func:`data_dependent_epsilon` is PATE 2018's
data-dependent analysis of the same queries (Thm 6), a function of the votes that is not itself DP.
The formulas are in :mod:`.gnmax`.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from .gnmax import DEFAULT_ORDERS, epsilon_from_rdp, gnmax_data_dependent_rdp, gnmax_rdp, threshold_rdp
from .ledger import Ledger, LedgerReadout, check_delta, check_event, check_queries

__all__ = ["RdpAccountant", "per_query_rdp", "noise_for_budget", "binary_histograms", "data_dependent_epsilon"]


class RdpAccountant(LedgerReadout):
    """Rényi-DP accountant over :data:`~pategan_audit.accounting.gnmax.DEFAULT_ORDERS`: ``alpha``
    is the composed RDP curve, ``epsilon`` its (ε, δ) conversion, ``epsilon_if(n)`` the value
    after ``n`` more queries of ``per_query`` each. Every charge is data-independent: a batch of
    votes costs its number of queries times ``per_query``.

    >>> acc = RdpAccountant(per_query_rdp(40.0, 40.0), delta=1e-5)
    >>> acc.charge(queries=16)
    >>> acc.num_queries, round(acc.epsilon, 4)
    (16, 0.8462)
    """

    def __init__(self, per_query: np.ndarray, *, delta: float, orders: np.ndarray = DEFAULT_ORDERS):
        self.orders = np.asarray(orders, dtype=np.float64)
        self.per_query = np.asarray(per_query, dtype=np.float64)
        if self.per_query.shape != self.orders.shape:
            raise ValueError(f"per_query must hold one RDP value per order ({self.orders.shape}), got shape "
                             f"{self.per_query.shape}; build it with per_query_rdp(sigma_threshold, sigma_vote, orders)")
        self.delta = check_delta(delta)
        self.ledger = Ledger(np.zeros_like(self.orders))

    @property
    def epsilon(self) -> float:
        """ε̂ at :attr:`delta` (0 before any charge)."""
        if not self.ledger.alpha.any():
            return 0.0
        return float(epsilon_from_rdp(self.ledger.alpha, orders=self.orders, delta=self.delta)[0])

    @property
    def best_order(self) -> float:
        """The order attaining ε̂ (NaN before any charge)."""
        if not self.ledger.alpha.any():
            return float("nan")
        return float(epsilon_from_rdp(self.ledger.alpha, orders=self.orders, delta=self.delta)[1])

    def epsilon_if(self, n_queries: int) -> float:
        """ε̂ after ``n_queries`` more queries."""
        return float(epsilon_from_rdp(self.ledger.alpha + int(n_queries) * self.per_query, orders=self.orders,
                                      delta=self.delta)[0])

    def charge(self, votes=None, *, queries: int | None = None) -> None:
        """Charge ``queries`` queries, or one query per entry of ``votes`` (answered or not: the
        charge does not depend on the votes), each ``per_query``."""
        check_event(votes, queries)
        n = int(np.size(votes)) if queries is None else check_queries(queries)
        self.ledger.record(self.ledger.alpha + n * self.per_query, queries=n, worst_case=True)

    @property
    def worst_case_increment(self) -> np.ndarray:
        """RDP of one query, charged whatever its votes (every charge of this accountant)."""
        return self.per_query

    def copy(self) -> "RdpAccountant":
        """An independent copy (the ledger is not shared)."""
        other = RdpAccountant(self.per_query, delta=self.delta, orders=self.orders)
        other.ledger = self.ledger.copy()
        return other


def per_query_rdp(sigma_threshold: float, sigma_vote: float, orders: np.ndarray = DEFAULT_ORDERS) -> np.ndarray:
    """Data-independent RDP of one Confident-GNMax query: threshold check plus GNMax."""
    return threshold_rdp(orders, sigma=sigma_threshold) + gnmax_rdp(orders, sigma=sigma_vote)


def noise_for_budget(queries: int, *, epsilon: float, delta: float) -> float:
    """The σ (= σ₁ = σ₂) at which ``queries`` Confident-GNMax queries spend exactly (ε, δ)."""
    def excess(log_sigma: float) -> float:
        s = float(np.exp(log_sigma))
        return epsilon_from_rdp(queries * per_query_rdp(s, s), orders=DEFAULT_ORDERS, delta=delta)[0] - epsilon

    return float(np.exp(brentq(excess, np.log(1e-3), np.log(1e7), xtol=1e-12)))


def binary_histograms(n1, num_teachers: int) -> np.ndarray:
    """Vote histograms ``[k − n1, n1]`` [Q, 2] (fake, real) of binary vote counts ``n1`` [Q]."""
    n1 = np.asarray(n1, dtype=np.float64).reshape(-1)
    return np.stack([int(num_teachers) - n1, n1], axis=1)


def data_dependent_epsilon(answered_votes, *, num_queries: int, sigma_threshold: float, sigma_vote: float,
                           delta: float, orders: np.ndarray = DEFAULT_ORDERS) -> tuple[float, float]:
    """(ε, λ*) of PATE 2018's data-dependent analysis of Confident-GNMax: ``num_queries`` threshold
    checks charged data-independently, ``λ/(2σ₁²)`` each, plus the data-dependent RDP of GNMax (Thm 6)
    at each answered histogram (``answered_votes`` [A, m], A may be 0), converted at the best order.

    A function of the votes: the value itself is not DP (publish :func:`~pategan_audit.accounting.smooth_sensitivity.release_gnmax_epsilon`'s)."""
    orders = np.asarray(orders, dtype=np.float64)
    rdp = int(num_queries) * threshold_rdp(orders, sigma=sigma_threshold)
    votes = np.asarray(answered_votes, dtype=np.float64)
    if votes.size:
        rdp = rdp + gnmax_data_dependent_rdp(votes, sigma=sigma_vote, orders=orders).sum(axis=0)
    return epsilon_from_rdp(rdp, orders=orders, delta=delta)
