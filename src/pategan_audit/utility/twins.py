"""Cells of an ε sweep that need no training: the same cell at a smaller ε, held by the iteration cap
(the ε grid of paper §5, Figures 1 and 6-9; implementation notes §utility.best-of-n).

In the presets of :data:`EPSILON_STOPS_ONLY`, built as the utility harness builds them (public
bounds, no overrides), ε enters one place: the stopping rule (the engine's budget check before
or after an iteration, ``implementations.engine``). Everything else a fit does (noise scale
λ, teacher partitions, batches, the generator's updates, every random draw) is the same at every
ε, and the models of a cell are seeded whatever ε (common random numbers,
:func:`~pategan_audit.utility.run.evaluate_cell`). The accountant's ε̂ after each iteration is
therefore the same sequence at every ε, and a larger budget stops no earlier. So when every model
of the cell at ε ran to the cap, the cell at any ε' > ε runs the same iterations to the same cap
and draws the same tables: its records are the smaller ε's, relabelled (column
``same_as_epsilon``; no training and no scoring, so ``fit_seconds`` and ``eval_seconds`` are
missing).

Not in the set: original and turing (ε sets their label noise σ), gnmax (ε sets its noise and
its planned queries), and every cell with overrides (a variant may move ε elsewhere, e.g.
corrected's DP bounds take 10 % of ε when the bounds are not public).
``tests/utility/test_twins.py`` trains every preset at two ε to a small cap and checks that the
tables agree exactly for this set and differ for the others.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pandas as pd

from .cells import UtilityCell

__all__ = ["EPSILON_STOPS_ONLY", "eligible", "held_by_cap", "smaller_twins", "find_capped_twin", "from_twin"]

#: the presets in which ε only decides when training stops (in the utility harness: public bounds)
EPSILON_STOPS_ONLY = frozenset({"borealis", "corrected", "smartnoise", "synthcity", "updated"})


def eligible(cell: object) -> bool:
    """Whether ``cell`` may take a smaller ε's records: a Setting B cell of a preset in
    :data:`EPSILON_STOPS_ONLY`, with no overrides and a finite iteration cap."""
    return (isinstance(cell, UtilityCell) and cell.implementation in EPSILON_STOPS_ONLY and not cell.overrides
            and cell.max_iter is not None)


def held_by_cap(records: pd.DataFrame, max_iter: int) -> bool:
    """True when every model of a cell's records trained and ran exactly ``max_iter`` iterations."""
    if records is None or records.empty or not (records["status"] == "ok").all():
        return False
    iterations = pd.to_numeric(records["iterations"], errors="coerce")
    return bool(iterations.notna().all() and (iterations == max_iter).all())


def smaller_twins(cell: UtilityCell, epsilons: tuple[float, ...] | None = None) -> list[UtilityCell]:
    """The same cell at each ε of ``epsilons`` (default: the paper's grid) below ``cell.epsilon``,
    nearest first."""
    from .profiles import EPSILON_GRID

    grid = EPSILON_GRID if epsilons is None else epsilons
    return [dataclasses.replace(cell, epsilon=float(e)) for e in sorted(grid, reverse=True) if e < cell.epsilon]


def find_capped_twin(cell: UtilityCell, lookup: Callable[[UtilityCell], pd.DataFrame | None],
                     epsilons: tuple[float, ...] | None = None) -> pd.DataFrame | None:
    """The records of the nearest smaller-ε twin (``lookup(twin)``: its records or None) that the
    cap held, or None (also when ``cell`` is not :func:`eligible`)."""
    if not eligible(cell):
        return None
    for twin in smaller_twins(cell, epsilons):
        records = lookup(twin)
        if records is not None and held_by_cap(records, cell.max_iter):
            return records
    return None


def from_twin(cell: UtilityCell, twin_records: pd.DataFrame) -> pd.DataFrame:
    """``cell``'s records taken from its capped twin's: the same rows and scores, with ``cell``'s
    id and ε, ``same_as_epsilon`` the twin's ε, and no fit or evaluation time."""
    from .run import cell_id

    if not eligible(cell):
        raise ValueError(f"{cell.implementation} cells with overrides {dict(cell.overrides)} cannot take another ε's "
                         f"records; ε may change more than when training stops (see {__name__})")
    eps = sorted(set(twin_records["epsilon"].astype(float)))
    if len(eps) != 1 or not eps[0] < cell.epsilon or not held_by_cap(twin_records, cell.max_iter):
        raise ValueError("the twin must be one cell at a smaller ε whose every model ran to the cap "
                         f"{cell.max_iter}")
    if set(twin_records["cell"].astype(str)) != {cell_id(dataclasses.replace(cell, epsilon=eps[0]))}:
        raise ValueError("the twin's records are another cell's: they must differ from this cell in ε only")
    out = twin_records.copy()
    out["same_as_epsilon"] = out["epsilon"].astype(float)
    out["cell"] = cell_id(cell)
    out["epsilon"] = cell.epsilon
    out["fit_seconds"] = np.nan
    out["eval_seconds"] = np.nan
    return out.reset_index(drop=True)
