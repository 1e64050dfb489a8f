"""The state of one training run's moments accountant (PATE-GAN Alg. 1, accountant lines).

The training loop charges each batch of teacher votes with :meth:`MomentsAccountant.charge` (the
interface of :mod:`.ledger`) and reads :attr:`MomentsAccountant.epsilon` for its stopping rule;
:func:`charge_replicas` charges many replicas' accountants at once; all maths is in
:mod:`pategan_audit.accounting.formulas`.

Neighbouring relation: one record added or removed, which changes at most one teacher's vote
(disjoint teacher partitions). Whether a given implementation honours that assumption is a
property of its training loop (violations V3–V6), not of the accountant.
"""
from __future__ import annotations

import copy as _copy
from typing import Sequence

import numpy as np

from .formulas import (
    _check_kind,
    _check_lam,
    _check_positive_int,
    _check_votes,
    data_independent_increment,
    epsilon_from_moments,
    moment_increments,
)
from .ledger import Ledger, LedgerReadout, check_delta, check_event, check_queries

__all__ = ["MomentsAccountant", "charge_replicas"]


class MomentsAccountant(LedgerReadout):
    """Accumulated log-moments α(l), l = 1..L, of one accountant kind.

    Parameters
    ----------
    kind: one of :data:`~pategan_audit.accounting.formulas.KINDS`.
    lam: λ as the accountant uses it (Laplace inverse scale; for ``"updated"`` the number the
        upstream accountant plugs in, although its noise has scale λ, V15).
    num_moments: L (20 for updated, 100 for the others upstream).
    delta: δ of the (ε, δ) target, in (0, 1). The caller resolves upstream quirks (synthcity
        always N^{-3/2}, O10).
    num_teachers: k.
    warn_at_edge: issue :class:`~pategan_audit.accounting.formulas.MomentOrderAtEdgeWarning`
        from :attr:`epsilon` when the best order is L.

    Attributes
    ----------
    ledger: what was charged (:class:`~pategan_audit.accounting.ledger.Ledger`).
    alpha: float64 array [L] (read-only), starts at zeros.
    num_queries: number of queries charged so far.

    Example (implementation notes §accountants.examples, vote-independent stopping, updated at λ = 1e-3):

    >>> acc = MomentsAccountant("updated", lam=1e-3, num_moments=20, delta=1e-5, num_teachers=10,
    ...                         warn_at_edge=False)
    >>> acc.charge([5] * 64)
    >>> round(acc.epsilon, 6)
    0.578334
    """

    def __init__(
        self,
        kind: str,
        *,
        lam: float,
        num_moments: int,
        delta: float,
        num_teachers: int,
        warn_at_edge: bool = True,
    ):
        self.kind = _check_kind(kind)
        self.lam = _check_lam(lam)
        self.num_moments = _check_positive_int(num_moments, "num_moments", "100")
        self.num_teachers = _check_positive_int(num_teachers, "num_teachers", "5")
        self.delta = check_delta(delta)
        self.warn_at_edge = bool(warn_at_edge)
        self.ledger = Ledger(np.zeros(self.num_moments, dtype=np.float64),
                             vote_counts=np.zeros(self.num_teachers + 1, dtype=np.int64))
        #: α increment of one query charged whatever its votes (the data-independent bound)
        self.worst_case_increment = data_independent_increment(self.kind, lam=self.lam, num_moments=self.num_moments)
        self._table = moment_increments(  # [k+1, L]: increment of a query with n1 = row index
            self.kind,
            n1=np.arange(self.num_teachers + 1),
            num_teachers=self.num_teachers,
            lam=self.lam,
            num_moments=self.num_moments,
        )

    def charge(self, votes=None, *, queries: int | None = None) -> None:
        """Charge one event: ``votes``, an int array [Q] of votes for "real" (each query charged
        the increment of its vote count), or ``queries`` queries charged the data-independent
        increment :attr:`worst_case_increment` whatever their votes.

        The vote charge equals adding :func:`~pategan_audit.accounting.formulas.summed_increments`
        (up to float rounding): a query's increment depends only on its vote count, so the
        [k+1, L] table of increments is computed once and each batch costs one vote histogram.
        """
        check_event(votes, queries)
        if queries is not None:
            n = check_queries(queries)
            self.ledger.record(self.ledger.alpha + n * self.worst_case_increment, queries=n, worst_case=True)
            return
        v = _check_votes(votes, self.num_teachers).astype(np.int64)
        counts = np.bincount(v, minlength=self.num_teachers + 1)
        seen = counts.nonzero()[0]  # zero counts must not multiply NaN rows
        self.ledger.record(self.ledger.alpha + counts[seen].astype(np.float64) @ self._table[seen],
                           queries=int(v.size), worst_case=False, counts=counts)

    @property
    def epsilon(self) -> float:
        """ε̂ = min_l (α(l) + ln(1/δ))/l; NaN once any α(l) is NaN."""
        return epsilon_from_moments(self.alpha, delta=self.delta, warn=self.warn_at_edge)[0]

    @property
    def best_order(self) -> int:
        """The 1-based order l attaining ε̂ (-1 when α holds NaN)."""
        return epsilon_from_moments(self.alpha, delta=self.delta, warn=False)[1]

    def epsilon_if(self, n_queries: int) -> float:
        """ε̂ after ``n_queries`` more worst-case queries, each charged the data-independent
        increment (``U_l``, or ``min(U_l, 2γl)`` for corrected).

        This is the corrected stopping rule (implementation notes §corrected.stopping): run the next
        iteration only if ``epsilon_if(n_S·B) <= ε``, which guarantees the final ε̂ ≤ ε.
        """
        if isinstance(n_queries, (bool, np.bool_)) or not isinstance(n_queries, (int, np.integer)) or n_queries < 0:
            raise ValueError(f"n_queries must be a non-negative integer (queries per iteration), got {n_queries!r}")
        alpha = self.alpha + int(n_queries) * self.worst_case_increment
        return epsilon_from_moments(alpha, delta=self.delta, warn=False)[0]

    def copy(self) -> "MomentsAccountant":
        """An independent copy (the ledger is not shared)."""
        return _copy.deepcopy(self)

    def fresh(self) -> "MomentsAccountant":
        """An accountant of the same kind, λ, L, δ and k with nothing charged."""
        return MomentsAccountant(self.kind, lam=self.lam, num_moments=self.num_moments, delta=self.delta,
                                 num_teachers=self.num_teachers, warn_at_edge=self.warn_at_edge)

    def __setstate__(self, state: dict) -> None:
        """Unpickle, also an accountant pickled before the ledger (``alpha`` and ``num_queries`` as attributes)."""
        if "ledger" not in state:
            state = dict(state)
            k = int(state["num_teachers"])
            state["ledger"] = Ledger(np.asarray(state.pop("alpha"), dtype=np.float64), state.pop("num_queries", 0),
                                     vote_counts=np.zeros(k + 1, dtype=np.int64))
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return (
            f"MomentsAccountant({self.kind!r}, lam={self.lam:g}, num_moments={self.num_moments}, "
            f"delta={self.delta:g}, num_teachers={self.num_teachers}, num_queries={self.num_queries})"
        )


def charge_replicas(accountants: Sequence[MomentsAccountant], votes: np.ndarray, charged: np.ndarray, *,
                    worst_case: bool) -> None:
    """Charge R replicas' accountants at once (the batched loop of :mod:`pategan_audit.replicas`).

    ``votes`` int [R, n]: replica j's vote counts this batch; ``charged`` bool [R]: whether replica j
    charges it (synthcity's skip rule, O4); ``worst_case``: every query charged the data-independent
    increment (the presets' ``charging`` switch). The accountants share kind, λ, L and k (one
    preset's settings). One vote histogram per replica, the histograms times the shared increment
    table in one product: each charged replica's ledger gets the numbers of its own
    :meth:`MomentsAccountant.charge` up to float rounding (the product sums over every count, not
    only the counts seen). One replica is charged by :meth:`MomentsAccountant.charge` itself, so a
    fit run as a group of one charges exactly as a single fit.
    """
    votes = np.asarray(votes)
    n = votes.shape[1]
    if worst_case:
        for acc, c in zip(accountants, charged):
            if c:
                acc.charge(queries=n)
        return
    if len(accountants) == 1:
        if charged[0]:
            accountants[0].charge(votes[0])
        return
    acc0 = accountants[0]
    k = acc0.num_teachers
    _check_votes(votes.reshape(-1), k)  # the same rule, and error, as one charge
    R = len(accountants)
    counts = np.zeros((R, k + 1), dtype=np.float64)
    np.add.at(counts, (np.repeat(np.arange(R), n), votes.reshape(-1)), 1.0)
    table = acc0._table
    ok = ~np.isnan(table).any(axis=1)
    inc = counts[:, ok] @ table[ok]
    for jrow in np.flatnonzero(~ok):  # rows holding NaN only reach replicas that saw that count
        hit = counts[:, jrow] > 0
        inc[hit] = inc[hit] + counts[hit, jrow, None] * table[jrow]
    for j, acc in enumerate(accountants):
        if charged[j]:
            acc.ledger.record(acc.ledger.alpha + inc[j], queries=n, worst_case=False, counts=counts[j].astype(np.int64))
