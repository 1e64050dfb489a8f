"""Pure per-query moment formulas of every PATE-GAN accountant, and the moments-to-epsilon step.

Everything here is a stateless, vectorised (numpy float64) function; the object that tracks a
training run lives in :mod:`pategan_audit.accounting.accountant`.

Notation (implementation notes §common.algorithm, §accountants.formulas). One *query* is one generated sample labelled by the
teachers: ``n1`` teachers vote "real", ``n0 = k - n1`` vote "fake", ``Delta = |n0 - n1|``. For the
noise parameter ``lam`` (λ) and moment orders ``l = 1..L``::

    q   = (2 + λΔ) / (4·exp(λΔ))                     PATE 2017 Lemma 4 / PATE-GAN Alg. 1
    A_l = (1 - q)·((1 - q)/(1 - e^{2λ}q))^l
    U_l = 2λ²·l(l + 1)                                data-independent bound (PATE Thm 2)

λ is a Laplace **inverse** scale (noise ``Lap(1/λ)``) for synthcity, borealis, smartnoise and the
corrected accountant (where it is PATE's γ). updated draws ``Lap(λ)`` (scale λ, violation V15) but
its accountant plugs λ in as if it were an inverse scale; the formulas below only see the number.

The six accountant *kinds* (implementation notes §accountants.formulas; upstream functions in
``spalabucr/pategan-audit:code/utils/privacy.py``):

* ``"paper"``: PATE-GAN (ICLR 2019, ``jordon2019pategan``) Alg. 1 as printed,
  ``min(U_l, ln(A_l + q·e^{2λl}))``; no validity condition on q, so a negative base can make the
  increment negative or NaN (NaN propagates, as numpy's ``np.min`` does upstream).
* ``"updated"``: the same formula, with q evaluated in log space, ``exp(ln(2+x) - ln 4 - x)``.
* ``"synthcity"``: ``clip(ln(A_l + q·exp(2λ(l-1) + 1)), 0, U_l)``: the indexing bug V7
  (``2*lamda*lidx + 1`` with 0-based ``lidx``) plus a lower clip at 0 absent from Alg. 1.
* ``"borealis"``, ``"smartnoise"``: ``min(A_l + q·e^{2λl}, U_l)``: the log is missing (V8, V9).
* ``"corrected"``: implementation notes §corrected.accountant, ``min(T_l, P_l, D_l)`` with ``T_l = U_l``,
  ``P_l = 2γl`` (pure 2γ-DP bound) and the data-dependent ``D_l`` (PATE Thm 3) only where
  ``q < (e^{2γ}-1)/(e^{4γ}-1)``; q is capped at 1/2 (Lemma 4 with m = 2).

Deviation: none of these functions reproduces the batch-skip rule of synthcity (O4: batches
whose noisy labels are at least half "real" are not charged); that rule belongs to the training
loop, which simply does not pass such batches to the accountant.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "KINDS",
    "MomentOrderAtEdgeWarning",
    "vote_q",
    "theorem3_threshold",
    "moment_terms",
    "moment_increments",
    "summed_increments",
    "data_independent_increment",
    "epsilon_from_moments",
    "compare_increments",
]

KINDS: tuple[str, ...] = ("paper", "updated", "synthcity", "borealis", "smartnoise", "corrected")


class MomentOrderAtEdgeWarning(UserWarning):
    """The best moment order is the largest of the grid: more moments would tighten ε̂.

    (Opacus warns the same way for RDP orders, ``opacus/accountants/analysis/rdp.py``.) The
    smallest order l = 1 is not flagged, because moment orders are positive integers here.
    """


# -- validation ------------------------------------------------------------------------------
def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown accountant kind {kind!r}; choose one of {', '.join(KINDS)}")
    return kind


def _check_lam(lam: float) -> float:
    try:
        lam_f = float(lam)
    except (TypeError, ValueError):
        raise ValueError(f"lam must be a positive number (the Laplace noise parameter λ), got {lam!r}") from None
    if not np.isfinite(lam_f) or lam_f <= 0:
        raise ValueError(f"lam must be a finite number > 0 (e.g. lam=1e-3), got {lam!r}")
    return lam_f


def _check_positive_int(value: int, name: str, example: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer (e.g. {name}={example}), got {value!r}")
    return int(value)


def _check_votes(n1, num_teachers: int) -> np.ndarray:
    """``n1`` as a 1-D float64 array of integer vote counts in [0, k]."""
    arr = np.asarray(n1)
    if arr.ndim > 1:
        raise ValueError(f"n1 must be a 1-D array of vote counts (one per query), got shape {arr.shape}")
    arr = arr.reshape(-1)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"n1 must hold integer vote counts, got dtype {arr.dtype}")
    if arr.size == 0:
        return arr.astype(np.float64)
    if not np.issubdtype(arr.dtype, np.integer):  # floats must hold whole numbers
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError("n1 must hold whole numbers of teacher votes (hard 0/1 votes summed over teachers)")
    lo, hi = arr.min(), arr.max()
    if lo < 0 or hi > num_teachers:
        raise ValueError(f"n1 must lie in [0, num_teachers={num_teachers}]; got values in [{lo:g}, {hi:g}]")
    return arr.astype(np.float64)


# -- the pieces of the formulas ----------------------------------------------------------------
def _orders(num_moments: int) -> np.ndarray:
    return np.arange(1, num_moments + 1, dtype=np.float64)


def vote_q(*, n1, num_teachers: int, lam: float) -> np.ndarray:
    """Lemma 4's bound on the probability of not answering the plurality, per query.

    ``q = (2 + λΔ)/(4·exp(λΔ))`` with ``Δ = |2·n1 - k|`` (PATE-GAN Alg. 1, line "q"). Returns
    shape [Q]. Always ≤ 1/2 for Δ ≥ 0.
    """
    k = _check_positive_int(num_teachers, "num_teachers", "5")
    x = _check_lam(lam) * np.abs(2.0 * _check_votes(n1, k) - k)
    return (2.0 + x) / (4.0 * np.exp(x))


def theorem3_threshold(*, lam: float) -> float:
    """PATE (Papernot et al. 2017) Thm 3 validity bound: the data-dependent moment bound holds only
    for ``q < (e^{2γ} - 1)/(e^{4γ} - 1) = 1/(e^{2γ} + 1)`` (implementation notes §corrected.accountant)."""
    return float(1.0 / (np.exp(2.0 * _check_lam(lam)) + 1.0))


def data_independent_increment(kind: str, *, lam: float, num_moments: int) -> np.ndarray:
    """Worst-case per-query increment of α(l), shape [L].

    ``U_l = 2λ²l(l+1)`` (PATE Thm 2) bounds every released kind's increment from above; the
    corrected kind also has the pure-DP bound ``P_l = 2γl`` and charges ``min(U_l, P_l)``
    (implementation notes §corrected.stopping).
    """
    _check_kind(kind)
    lam = _check_lam(lam)
    orders = _orders(_check_positive_int(num_moments, "num_moments", "100"))
    upper = 2.0 * lam**2 * orders * (orders + 1.0)
    if kind == "corrected":
        return np.minimum(upper, 2.0 * lam * orders)
    return upper


def _raw_terms(x: np.ndarray, orders: np.ndarray, lam: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A_l + q·e^{2λl}, A_l + q·e^{2λ(l-1)+1}), evaluated as upstream does (no validity check)."""
    a_l = (1.0 - q) * np.power((1.0 - q) / (1.0 - np.exp(2.0 * lam) * q), orders)
    return a_l + q * np.exp(2.0 * lam * orders), a_l + q * np.exp(2.0 * lam * (orders - 1.0) + 1.0)


def _prepare(n1, num_teachers: int, lam: float, num_moments: int):
    k = _check_positive_int(num_teachers, "num_teachers", "5")
    lam = _check_lam(lam)
    num_moments = _check_positive_int(num_moments, "num_moments", "100")
    votes = _check_votes(n1, k)
    orders = _orders(num_moments)[None, :]  # [1, L]
    x = (lam * np.abs(2.0 * votes - k))[:, None]  # λΔ, [Q, 1]
    return x, orders, lam


def moment_terms(*, n1, num_teachers: int, lam: float, num_moments: int) -> dict[str, np.ndarray]:
    """The un-clipped pieces the accountants take minima of, each of shape [Q, L].

    Keys: ``"upper"`` U_l = 2λ²l(l+1); ``"pure"`` 2λl; ``"unlogged_term"`` A_l + q·e^{2λl};
    ``"log_term"`` its log (Alg. 1); ``"synthcity_log_term"`` ln(A_l + q·e^{2λ(l-1)+1}) (V7).
    Evaluated without Theorem 3's condition (NaN/negative values possible), as in implementation notes §accountants.examples.
    """
    x, orders, lam = _prepare(n1, num_teachers, lam, num_moments)
    q = (2.0 + x) / (4.0 * np.exp(x))
    shape = (x.shape[0], orders.shape[1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        unlogged, synthcity = _raw_terms(x, orders, lam, q)
        return {
            "upper": np.broadcast_to(2.0 * lam**2 * orders * (orders + 1.0), shape).copy(),
            "pure": np.broadcast_to(2.0 * lam * orders, shape).copy(),
            "unlogged_term": unlogged,
            "log_term": np.log(unlogged),
            "synthcity_log_term": np.log(synthcity),
        }


def moment_increments(kind: str, *, n1, num_teachers: int, lam: float, num_moments: int) -> np.ndarray:
    """Per-query increments of the log-moments α(l), shape [Q, L] for l = 1..L.

    Parameters
    ----------
    kind: one of :data:`KINDS` (see the module docstring for each formula).
    n1: int array [Q], votes for "real" per query (``n0 = num_teachers - n1``).
    num_teachers: k.
    lam: λ, the accountant's noise parameter (Laplace inverse scale, see module docstring).
    num_moments: L.

    Values can be NaN or negative for the released kinds outside Theorem 3's domain (implementation notes §common.stopping,
    Examples E and F); the corrected kind is always in ``(0, min(U_l, 2λl)]``.
    """
    _check_kind(kind)
    x, orders, lam = _prepare(n1, num_teachers, lam, num_moments)
    upper = 2.0 * lam**2 * orders * (orders + 1.0)  # U_l
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if kind == "corrected":
            return _corrected(x, orders, lam, upper)
        if kind == "updated":
            q = np.exp(np.log(2.0 + x) - np.log(4.0) - x)
        else:
            q = (2.0 + x) / (4.0 * np.exp(x))
        unlogged, synthcity = _raw_terms(x, orders, lam, q)
        if kind == "synthcity":  # V7: exponent 2λ(l-1)+1 instead of 2λl, then clip to [0, U_l]
            return np.clip(np.log(synthcity), 0.0, upper)
        if kind in ("borealis", "smartnoise"):  # V8/V9: no log; torch.clamp(t, max=U_l)
            return np.minimum(unlogged, upper)  # np.minimum propagates NaN
        return np.minimum(upper, np.log(unlogged))  # paper/updated: like np.min([U_l, log]), NaN propagates


def _corrected(x: np.ndarray, orders: np.ndarray, gamma: float, upper: np.ndarray) -> np.ndarray:
    """implementation notes §corrected.accountant, in log space (log-sum-exp for sums of exponentials, as ``tensorflow/privacy`` ``research/pate_2017/analysis.py`` does)."""
    log_q = np.minimum(np.log(2.0 + x) - np.log(4.0) - x, np.log(0.5))  # q capped at 1/2
    q = np.exp(log_q)
    pure = 2.0 * gamma * orders  # P_l
    bound = np.minimum(upper, pure)  # min(T_l, P_l), always admissible
    valid = q < theorem3_threshold(lam=gamma)  # [Q, 1]
    if not np.any(valid):
        return np.broadcast_to(bound, (x.shape[0], orders.shape[1])).copy()
    # D_l = ln((1-q)·((1-q)/(1-e^{2γ}q))^l + q·e^{2γl}); valid q implies 1 - e^{2γ}q > 0.
    log_1mq = np.log1p(-q)
    log_den = np.log1p(-np.where(valid, np.exp(2.0 * gamma) * q, 0.0))
    data_dep = np.logaddexp(log_1mq + orders * (log_1mq - log_den), log_q + 2.0 * gamma * orders)
    return np.where(valid, np.minimum(bound, data_dep), bound)


def summed_increments(kind: str, *, n1, num_teachers: int, lam: float, num_moments: int) -> np.ndarray:
    """Sum of :func:`moment_increments` over the queries, shape [L] (zeros for no queries)."""
    inc = moment_increments(kind, n1=n1, num_teachers=num_teachers, lam=lam, num_moments=num_moments)
    return inc.sum(axis=0)


def epsilon_from_moments(alpha, *, delta: float, warn: bool = True) -> tuple[float, int]:
    """Moments-accountant tail bound: ``ε̂ = min_l (α(l) + ln(1/δ))/l`` (Abadi et al. 2016 Thm 2;
    PATE-GAN Alg. 1, last line).

    alpha: array [L], α(l) for l = 1..L. Returns ``(ε̂, l*)`` with the 1-based minimising order
    ``l*`` (smallest l on ties). Any NaN in alpha gives ``(nan, -1)``: upstream's ``NaN < ε`` is
    False, so the training loop exits (implementation notes §common.stopping). With ``warn=True`` a
    :class:`MomentOrderAtEdgeWarning` is issued when ``l* = L > 1``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.ndim != 1 or alpha.size == 0:
        raise ValueError(f"alpha must be a non-empty 1-D array of log-moments (l = 1..L), got shape {alpha.shape}")
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta}; pass e.g. delta=1e-5")
    if np.any(np.isnan(alpha)):
        return float("nan"), -1
    per_order = (alpha + np.log(1.0 / delta)) / _orders(alpha.size)
    best = int(np.argmin(per_order))
    if warn and alpha.size > 1 and best == alpha.size - 1:
        warnings.warn(
            f"the best moment order is the largest of the grid (l = L = {alpha.size}); "
            "a larger num_moments would give a smaller epsilon-hat",
            MomentOrderAtEdgeWarning,
            stacklevel=2,
        )
    return float(per_order[best]), best + 1


def compare_increments(
    *, num_teachers: int, lam: float, num_moments: int, kinds: Sequence[str] = KINDS
) -> pd.DataFrame:
    """Every accountant's per-query increment for every vote split, as a tidy table.

    Columns: ``kind, n1, n0, l, q, theorem3_valid, increment`` with one row per
    (kind, n1 ∈ 0..k, l ∈ 1..L); used by the book to show where the bugs bite (implementation notes §accountants.where-bugs-bite).
    """
    k = _check_positive_int(num_teachers, "num_teachers", "5")
    n1 = np.arange(k + 1)
    q = vote_q(n1=n1, num_teachers=k, lam=lam)
    valid = q < theorem3_threshold(lam=lam)
    frames = []
    for kind in kinds:
        inc = moment_increments(kind, n1=n1, num_teachers=k, lam=lam, num_moments=num_moments)
        grid_n1, grid_l = np.meshgrid(n1, np.arange(1, num_moments + 1), indexing="ij")
        frames.append(
            pd.DataFrame(
                {
                    "kind": kind,
                    "n1": grid_n1.ravel(),
                    "n0": k - grid_n1.ravel(),
                    "l": grid_l.ravel(),
                    "q": np.repeat(q, num_moments),
                    "theorem3_valid": np.repeat(valid, num_moments),
                    "increment": inc.ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
