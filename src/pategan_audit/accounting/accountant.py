"""The state of one training run's moments accountant (PATE-GAN Alg. 1, accountant lines).

The training loop reports each batch of teacher votes with :meth:`MomentsAccountant.add_queries`
and reads :attr:`MomentsAccountant.epsilon` for its stopping rule; all maths is in
:mod:`pategan_audit.accounting.formulas`.

Neighbouring relation: one record added or removed, which changes at most one teacher's vote
(disjoint teacher partitions). Whether a given implementation honours that assumption is a
property of its training loop (violations V3–V6), not of the accountant.
"""
from __future__ import annotations

import copy as _copy

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

__all__ = ["MomentsAccountant"]


class MomentsAccountant:
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
    alpha: float64 array [L], starts at zeros.
    num_queries: number of queries charged so far.

    Example (implementation notes §accountants.examples, vote-independent stopping, updated at λ = 1e-3):

    >>> acc = MomentsAccountant("updated", lam=1e-3, num_moments=20, delta=1e-5, num_teachers=10,
    ...                         warn_at_edge=False)
    >>> acc.add_queries([5] * 64)
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
        if not isinstance(delta, (int, float, np.integer, np.floating)) or not (0.0 < float(delta) < 1.0):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}; pass e.g. delta=1e-5 (ideally < 1/N)")
        self.delta = float(delta)
        self.warn_at_edge = bool(warn_at_edge)
        self.alpha = np.zeros(self.num_moments, dtype=np.float64)
        self.num_queries = 0
        #: α increment of one query charged whatever its votes (the data-independent bound)
        self.worst_case_increment = data_independent_increment(self.kind, lam=self.lam, num_moments=self.num_moments)
        self._table = moment_increments(  # [k+1, L]: increment of a query with n1 = row index
            self.kind,
            n1=np.arange(self.num_teachers + 1),
            num_teachers=self.num_teachers,
            lam=self.lam,
            num_moments=self.num_moments,
        )

    def add_queries(self, n1) -> None:
        """Charge one batch of queries; ``n1`` is an int array [Q] of votes for "real".

        Equal to adding :func:`~pategan_audit.accounting.formulas.summed_increments` (up to
        float rounding): a query's increment depends only on its vote count, so the [k+1, L]
        table of increments is computed once and each batch costs one vote histogram.
        """
        votes = _check_votes(n1, self.num_teachers).astype(np.int64)
        counts = np.bincount(votes, minlength=self.num_teachers + 1)
        seen = np.flatnonzero(counts)  # zero counts must not multiply NaN rows
        self.alpha = self.alpha + counts[seen].astype(np.float64) @ self._table[seen]
        self.num_queries += int(votes.size)

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
        """An independent copy (the α array is not shared)."""
        return _copy.deepcopy(self)

    def __repr__(self) -> str:
        return (
            f"MomentsAccountant({self.kind!r}, lam={self.lam:g}, num_moments={self.num_moments}, "
            f"delta={self.delta:g}, num_teachers={self.num_teachers}, num_queries={self.num_queries})"
        )

