"""Exact log-moments of one noisy binary vote: the slow reference the bounds are checked against.

A query releases one bit ``r`` from the teacher votes ``(n0, n1)``. For a moment order ``l``
the data-dependent log-moment of the privacy loss (Abadi et al. 2016, Def. of α(λ); PATE 2017
§3) is::

    α(l; n1) = max_{n1' = n1 ± 1}  ln Σ_{r ∈ {0,1}} P(r | n1) · (P(r | n1) / P(r | n1'))^l

where the neighbours ``n1 ± 1`` (within [0, k]) are the vote counts reachable by changing one
teacher's vote, i.e. one training record under disjoint partitions. Two mechanisms:

* ``"two_noise"``: PATE's ``M_γ``, ``r = argmax_j (n_j + Z_j)`` with independent
  ``Z_j ~ Lap(1/γ)``; then ``P(r ≠ plurality) = (2 + γΔ)/(4e^{γΔ})`` exactly, Lemma 4's q.
  This is what the corrected implementation releases (implementation notes §corrected.votes).
* ``"single_noise"``: ``r = 1[n1 + Z > k/2]`` with one ``Z ~ Lap(1/λ)``, as synthcity,
  borealis and smartnoise implement it (implementation notes §common.votes). updated's noise ``Lap(λ)`` is this
  mechanism with ``lam = 1/λ``.

Used by the tests (implementation notes §accountants.examples, the votes (3, 2) at λ = 1 and their exact moments) and by the book
to show where Alg. 1 under-charges.
"""
from __future__ import annotations

import numpy as np

from .formulas import _check_lam, _check_positive_int, _check_votes, _orders

__all__ = ["MECHANISMS", "exact_vote_moments"]

MECHANISMS: tuple[str, ...] = ("two_noise", "single_noise")


def _log_p_real(n1: np.ndarray, k: int, lam: float, mechanism: str) -> tuple[np.ndarray, np.ndarray]:
    """(ln P(r=1 | n1), ln P(r=0 | n1)) for each vote count, computed without cancellation."""
    if mechanism == "two_noise":
        c = lam * (k - 2.0 * n1)  # γ(n0 - n1)
        log_tail = np.log(2.0 + np.abs(c)) - np.abs(c) - np.log(4.0)  # ln P(loser wins) = ln q
    else:
        c = lam * (k / 2.0 - n1)  # threshold distance in units of the Laplace scale 1/λ
        log_tail = np.log(0.5) - np.abs(c)
    log_head = np.log1p(-np.exp(log_tail))
    log_p1 = np.where(c >= 0, log_tail, log_head)
    log_p0 = np.where(c >= 0, log_head, log_tail)
    return log_p1, log_p0


def exact_vote_moments(
    *, n1, num_teachers: int, lam: float, num_moments: int, mechanism: str = "two_noise"
) -> np.ndarray:
    """Exact per-query log-moments α(l; n1), shape [Q, L], l = 1..L.

    lam: the Laplace **inverse** scale γ (noise ``Lap(1/lam)``) of ``mechanism`` (one of
    :data:`MECHANISMS`).
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown mechanism {mechanism!r}; choose one of {', '.join(MECHANISMS)}")
    k = _check_positive_int(num_teachers, "num_teachers", "5")
    lam = _check_lam(lam)
    orders = _orders(_check_positive_int(num_moments, "num_moments", "100"))[None, :]
    votes = _check_votes(n1, k)
    own1, own0 = (a[:, None] for a in _log_p_real(votes, k, lam, mechanism))
    best = np.full((votes.size, orders.shape[1]), -np.inf)
    for step in (-1.0, 1.0):
        other = votes + step
        inside = ((other >= 0) & (other <= k))[:, None]
        nb1, nb0 = (a[:, None] for a in _log_p_real(np.clip(other, 0, k), k, lam, mechanism))
        moment = np.logaddexp(own1 + orders * (own1 - nb1), own0 + orders * (own0 - nb0))
        best = np.where(inside, np.maximum(best, moment), best)
    return best
