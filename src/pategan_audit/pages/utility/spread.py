"""The measured spread of the utility page's best-of-n numbers (issue #13): each scorecard row a
builder emits carries ``interval_lo`` / ``interval_hi``, the 90 % bootstrap interval of the
result cell behind it (:func:`pategan_audit.pages.scorecard.best_of_n_intervals`: generator models
and, within each, their synthetic tables resampled), so the scorecard judges it by the measured
rule instead of the fallback (:func:`pategan_audit.pages.scorecard.tolerance`).

:func:`intervals` computes the intervals of every best-of-n cell of the page once (cached on the
page), one cell at a time so that a cell's interval does not depend on which other cells ran;
:func:`interval` finds the one cell of a group behind a number (by dataset, implementation, ε,
teachers) and returns its interval, :func:`mean_se_interval` the mean ± 1.645 SE of Figure 8;
:func:`attach` adds them to scorecard rows. A cell with a single table (or whose models did not
train) has no interval (NaN): the scorecard's fallback applies. Rows that are not a best-of-n
statistic (AUROC-Δ, Setting A, counts) are left without one.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from ... import reference
from ..scorecard import Z90, best_of_n_intervals
from ...utility.aggregate import CELL_KEYS, mean_se
from ...utility.cells import UtilityCell
from ...utility.tables import select
from .context import UtilityPage

__all__ = ["SPREAD_GROUPS", "NO_INTERVAL", "intervals", "find_cell", "interval", "mean_se_interval", "attach"]

#: The experiment groups whose numbers are best-of-n statistics (Setting A and MNIST are not scored).
SPREAD_GROUPS = ("main", "main_eps1", "sweep_epileptic", "sweep_credit", "teachers", "conditional", "hyperparameters")

NO_INTERVAL = (float("nan"), float("nan"))

_COLUMNS = [*CELL_KEYS, "metric", "classifier", "lo", "hi", "n_models", "n_tables"]


def intervals(page: UtilityPage) -> pd.DataFrame:
    """The 90 % bootstrap interval of every best-of-n number of the page: one row per (cell,
    metric, classifier), ``classifier = "average"`` for the mean over the classifiers; columns as
    :func:`~pategan_audit.pages.scorecard.best_of_n_intervals` (keys :data:`CELL_KEYS`). Each cell of
    :data:`SPREAD_GROUPS` is bootstrapped on its own rows (default seed); computed once per page."""
    if page.spread is None:
        from ...utility.run import cell_id

        cells = list(dict.fromkeys(c for g in SPREAD_GROUPS for c in page.cells.get(g, ()) if isinstance(c, UtilityCell)))
        ids = {cell_id(c) for c in cells}
        results = page.results[page.results["cell"].isin(ids)]
        frames = [best_of_n_intervals(part, keys=CELL_KEYS) for _, part in results.groupby("cell", sort=False)]
        frames = [f for f in frames if len(f)]
        page.spread = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=_COLUMNS)
    return page.spread


def _same(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, float) or isinstance(value, float):
        try:
            return math.isclose(float(value), float(wanted), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return value == wanted


def find_cell(page: UtilityPage, group: str, **attributes: Any) -> UtilityCell | None:
    """The one cell of ``group`` whose attributes (``dataset``, ``implementation``, ``epsilon``,
    ``num_teachers``, ...) equal ``attributes``; None when none or several match."""
    matches = list(dict.fromkeys(c for c in page.cells.get(group, ())
                                 if all(_same(getattr(c, k, None), v) for k, v in attributes.items())))
    return matches[0] if len(matches) == 1 else None


def interval(page: UtilityPage, group: str, metric: str, *, classifier: str = reference.AVERAGE,
             **attributes: Any) -> tuple[float, float]:
    """(lo, hi) of the best-of-n ``metric`` of ``classifier`` (default: the mean over the
    classifiers) of the cell of ``group`` matching ``attributes`` (:func:`find_cell`); NaN where
    no single cell matches or the cell has no interval (one table)."""
    from ...utility.run import cell_id

    cell = find_cell(page, group, **attributes)
    if cell is None:
        return NO_INTERVAL
    table = intervals(page)
    hit = table[(table["cell"] == cell_id(cell)) & (table["metric"] == metric) & (table["classifier"] == classifier)]
    if len(hit) != 1:
        return NO_INTERVAL
    return float(hit["lo"].iloc[0]), float(hit["hi"].iloc[0])


def mean_se_interval(page: UtilityPage, group: str, metric: str, **attributes: Any) -> tuple[float, float]:
    """Figure 8's interval: mean ± 1.645 SE over the tables of the cell of ``group`` matching
    ``attributes`` (:func:`~pategan_audit.utility.mean_se`); NaN for one table or no single cell."""
    from ...utility.run import cell_id

    cell = find_cell(page, group, **attributes)
    if cell is None:
        return NO_INTERVAL
    rows = select(page.results, [cell])
    if rows.empty:
        return NO_INTERVAL
    stats = mean_se(rows, metric=metric)
    stats = stats[stats["cell"] == cell_id(cell)]
    if len(stats) != 1 or pd.isna(stats["se"].iloc[0]):
        return NO_INTERVAL
    mean, half = float(stats["mean"].iloc[0]), Z90 * float(stats["se"].iloc[0])
    return mean - half, mean + half


def attach(rows: Iterable[dict], locate: Callable[[dict], tuple[float, float]]) -> list[dict]:
    """``rows`` (scorecard rows ``table, row, column, ours, runs``) with ``interval_lo`` and
    ``interval_hi`` from ``locate(row)`` (e.g. a lambda calling :func:`interval`)."""
    out = []
    for row in rows:
        lo, hi = locate(row)
        out.append({**row, "interval_lo": float(lo) if lo is not None else np.nan,
                    "interval_hi": float(hi) if hi is not None else np.nan})
    return out
