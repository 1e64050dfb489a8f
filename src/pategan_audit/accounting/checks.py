"""Argument checks of the GNMax analysis and its private release (:mod:`.gnmax`,
:mod:`.smooth_sensitivity`; Papernot et al., ICLR 2018): each names the problem and an example of a
valid value."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["is_number", "check_positive", "check_sigma", "check_orders", "check_order", "check_votes", "num_teachers",
           "check_rng"]


def is_number(value) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))


def check_positive(value, name: str, example: str) -> float:
    if not is_number(value) or not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{name} must be a finite number > 0 (e.g. {name}={example}), got {value!r}")
    return float(value)


def check_sigma(sigma, name: str = "sigma") -> float:
    return check_positive(sigma, name, "40.0")


def check_orders(orders) -> np.ndarray:
    """``orders`` as a non-empty 1-D float64 array of finite Rényi orders > 1."""
    try:
        arr = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"orders must be an array of Rényi orders > 1 (e.g. orders=DEFAULT_ORDERS), got {orders!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"orders must be a non-empty 1-D array of Rényi orders, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ValueError(
            "orders must be finite Rényi orders > 1 (RDP is not defined at order 1); "
            f"pass e.g. orders=DEFAULT_ORDERS, got values in [{np.nanmin(arr):g}, {np.nanmax(arr):g}]"
        )
    return arr


def check_order(order) -> float:
    if not is_number(order) or not math.isfinite(float(order)) or float(order) <= 1.0:
        raise ValueError(f"order must be a finite Rényi order > 1 (e.g. order=20.0), got {order!r}")
    return float(order)


def check_votes(votes, *, allow_empty: bool = True) -> np.ndarray:
    """Vote histograms as a float64 array [Q, m] of whole non-negative counts, m ≥ 2."""
    arr = np.asarray(votes)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"votes must hold non-negative integer vote counts, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"votes must be one histogram [m] or a batch [Q, m] of histograms, got shape {arr.shape}")
    if arr.shape[1] < 2:
        raise ValueError(f"votes must have at least 2 classes (columns), got shape {arr.shape}; for binary votes pass [n0, n1]")
    if arr.shape[0] == 0:
        if not allow_empty:
            raise ValueError("votes holds no query; pass the histograms of the answered queries, shape [Q >= 1, m]")
        return arr.astype(np.float64)
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError("votes must hold whole, non-negative numbers of teacher votes (one histogram per query)")
    return arr


def num_teachers(votes: np.ndarray) -> int:
    totals = votes.sum(axis=1)
    if np.any(totals != totals[0]):
        raise ValueError(
            "every histogram must count the same number of teachers k (rows of votes must have equal sums), "
            f"got row sums in [{totals.min():g}, {totals.max():g}]"
        )
    k = int(totals[0])
    if k < 1:
        raise ValueError("the vote histograms count no teacher (row sums are 0); pass histograms of k >= 1 votes")
    return k


def check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (e.g. rng=np.random.default_rng(0)), got {type(rng).__name__}")
    return rng
