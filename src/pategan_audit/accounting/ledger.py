"""The one accountant interface of the PATE-GAN presets (PATE-GAN Alg. 1, accountant lines; audit
paper ``ganev2025elusive`` §4, App. A).

A training loop talks to its accountant in three ways only: it charges a mechanism event with
:meth:`Accountant.charge` (the teachers' vote counts of a batch of queries, or a number of
queries charged the data-independent worst case whatever their votes), it reads ε̂ at the run's δ
(:attr:`Accountant.epsilon`, :meth:`Accountant.epsilon_if` for the stopping rule checked before
an iteration), and it copies the accountant. What was charged is kept in a :class:`Ledger`;
nothing outside :mod:`pategan_audit.accounting` writes accountant state. The moments accountant
(:class:`~pategan_audit.accounting.accountant.MomentsAccountant`) and the Rényi-DP accountant of
Confident-GNMax (:class:`~pategan_audit.accounting.rdp.RdpAccountant`) both implement it;
:func:`~pategan_audit.accounting.accountant.charge_replicas` charges many replicas' accountants at
once with the same numbers as one call each.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Accountant", "Ledger", "LedgerReadout", "check_delta", "check_event", "check_queries"]


@dataclass(repr=False)
class Ledger:
    """What an accountant has been charged, and the composed moments it holds.

    alpha: the composed curve (log-moments α(l) of the moments accountant, RDP at each order of
        the Rényi accountant), float64, starting at zeros.
    num_queries: queries charged in all.
    worst_case_queries: of those, the queries charged the data-independent increment.
    vote_counts: int64 [k+1], how many queries were charged at each vote count n1 = 0..k (None
        for an accountant whose charge does not depend on the votes).
    events: number of charges.
    """

    alpha: np.ndarray
    num_queries: int = 0
    worst_case_queries: int = 0
    vote_counts: np.ndarray | None = None
    events: int = 0

    def record(self, alpha: np.ndarray, *, queries: int, worst_case: bool, counts: np.ndarray | None = None) -> None:
        """Compose one event: the new curve ``alpha`` (computed by the accountant) and its queries."""
        self.alpha = alpha
        self.num_queries += int(queries)
        self.events += 1
        if worst_case:
            self.worst_case_queries += int(queries)
        elif counts is not None and self.vote_counts is not None:
            self.vote_counts = self.vote_counts + np.asarray(counts, dtype=np.int64)

    def __repr__(self) -> str:  # the totals, not the curve
        return f"Ledger(events={self.events}, num_queries={self.num_queries}, worst_case_queries={self.worst_case_queries})"

    def copy(self) -> "Ledger":
        """An independent copy (arrays not shared)."""
        return Ledger(self.alpha.copy(), self.num_queries, self.worst_case_queries,
                      None if self.vote_counts is None else self.vote_counts.copy(), self.events)


def check_queries(queries) -> int:
    """A number of queries: a non-negative integer (a clear error otherwise)."""
    if isinstance(queries, (bool, np.bool_)) or not isinstance(queries, (int, np.integer)) or queries < 0:
        raise ValueError(f"queries must be a non-negative integer (the number of queries charged), got {queries!r}")
    return int(queries)


def check_event(votes, queries) -> None:
    """The one rule of :meth:`Accountant.charge`: an event is ``votes`` or ``queries``, exactly one."""
    if (votes is None) == (queries is None):
        raise ValueError("charge takes either votes (the n1 of each query) or queries (a number of queries), exactly "
                         f"one of them; got votes={votes!r}, queries={queries!r}")


def check_delta(delta) -> float:
    """The δ at which an accountant reads ε̂: a number in (0, 1) (a clear error otherwise)."""
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not (0.0 < float(delta) < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}; pass e.g. delta=1e-5 (ideally < 1/N)")
    return float(delta)


class LedgerReadout:
    """What an accountant's :class:`Ledger` composed, read out the same way by every accountant:
    ``alpha`` (α(l) per moment order for the PATE moments accountant, the RDP per Rényi order for
    the RDP one) and ``num_queries``. Only ``charge`` changes them."""

    ledger: Ledger

    @property
    def alpha(self) -> np.ndarray:
        """The composed curve (a read-only view; copy it to keep it)."""
        view = self.ledger.alpha.view()
        view.flags.writeable = False
        return view

    @property
    def num_queries(self) -> int:
        """Queries charged so far."""
        return self.ledger.num_queries


@runtime_checkable
class Accountant(Protocol):
    """What a training loop may do with an accountant (see the module docstring)."""

    delta: float
    ledger: Ledger

    def charge(self, votes=None, *, queries: int | None = None) -> None:
        """Charge one event: ``votes`` (int [Q], the "real" count n1 of each query) or ``queries``
        queries at the data-independent increment."""

    @property
    def alpha(self) -> np.ndarray:
        """The composed curve (read-only: a copy is what callers may keep)."""

    @property
    def num_queries(self) -> int:
        """Queries charged so far."""

    @property
    def epsilon(self) -> float:
        """ε̂ at :attr:`delta` from what was charged."""

    @property
    def worst_case_increment(self) -> np.ndarray:
        """The curve's increment for one query charged whatever its votes."""

    def epsilon_if(self, n_queries: int) -> float:
        """ε̂ after ``n_queries`` more worst-case queries (the stopping rule checked before an iteration)."""

    def copy(self) -> "Accountant":
        """An independent copy (ledger included)."""
