"""The ablations of the utility page (``ganev2025elusive`` Appendix C): the number of teachers
(Table 11), conditional generation (Table 6) and [49]'s hyperparameters against each
implementation's defaults (Table 12, and the "17.5 %" of §5).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import reference
from ...utility.aggregate import best_of_n
from ...utility.profiles import TEACHER_SWEEP_IMPLEMENTATIONS, teacher_sweep_k
from ...utility.tables import dataset_by_implementation, delta_row, delta_undefined_note, mean_delta_text, scorecard_rows, side_by_side
from . import table4 as table4_page
from ..blocks import Block, Glue, Text, scorecard, table
from . import spread
from .context import EPILEPTIC, UtilityPage

__all__ = ["teachers", "table11", "conditional", "table6", "hyperparameters", "table12"]


def teachers(page: UtilityPage) -> pd.DataFrame:
    """Our Table 11: best-of-n AUROC on Epileptic at ε = 1 by number of teachers, columns "N/r"
    (k from the paper's N), the sweep's own N/1000 renamed "N/1000 (sweep)" and "N/1000" taken
    from the main run (Table 4) as the paper does; NaN there when the page runs at another ε."""
    best = best_of_n(page.rows("teachers"))
    columns = {teacher_sweep_k(r): f"N/{r}" for r in page.profile.teacher_ratios}
    best["column"] = best["num_teachers"].map(columns)
    ours = best.pivot_table(index="implementation", columns="column", values="auroc").reindex(
        index=list(TEACHER_SWEEP_IMPLEMENTATIONS), columns=[c for c in reference.TEACHER_SWEEP_COLUMNS if c in columns.values()])
    ours = ours.rename(columns={"N/1000": "N/1000 (sweep)"})
    main = table4_page.ours(page)
    from_main = main.loc[EPILEPTIC] if EPILEPTIC in main.index and page.at_main_epsilon else pd.Series(dtype=float)
    ours["N/1000"] = from_main.reindex(ours.index)
    return ours


def table11(page: UtilityPage) -> list[Block]:
    """Table 11 beside the paper's, its caption (with the main run's k) and scorecard rows."""
    if page.rows("teachers").empty:
        return [Text("*Table 11: Epileptic not run at this profile.*")]
    ours = teachers(page)
    main = page.rows("main")
    k_main = int(main[main["dataset"] == EPILEPTIC]["num_teachers"].iloc[0]) if (main["dataset"] == EPILEPTIC).any() else None
    runs = page.runs("teachers")
    caption = page.caption(
        "Mean best-of-n AUROC on Epileptic, ε = 1, by number of teachers. 'N/1000' is the main run "
        f"(Table 4; on this profile's training rows its rule gives k = {k_main}); 'N/1000 (sweep)' is the sweep's own k = 9",
        runs)
    return [*table("table11", side_by_side(ours, reference.table11(wide=True))), Text("**Table 11.** " + caption),
            scorecard(spread.attach(scorecard_rows(ours, table="table11", runs=runs), lambda r: _teachers_interval(page, r)))]


def _teachers_interval(page: UtilityPage, row: dict) -> tuple[float, float]:
    """The interval of a Table 11 entry: "N/1000" is the main run's Epileptic cell, "N/r" (and
    "N/1000 (sweep)") the sweep's cell with k = :func:`teacher_sweep_k` (r) teachers."""
    column, implementation = row["column"], row["row"]
    if column == "N/1000":
        return spread.interval(page, "main", "auroc", dataset=EPILEPTIC, implementation=implementation)
    ratio = int(column.split()[0].removeprefix("N/"))
    return spread.interval(page, "teachers", "auroc", dataset=EPILEPTIC, implementation=implementation,
                           num_teachers=teacher_sweep_k(ratio))


def conditional(page: UtilityPage) -> pd.DataFrame:
    """Our Table 6: original's best-of-n AUROC at ε = 1, non-conditional (main run) and
    conditional, on the datasets with both runs, and the mean AUROC-Δ (%) against [49]."""
    def original(group):
        return dataset_by_implementation(page.rows(group), metric="auroc", datasets=page.datasets,
                                         implementations=["original"])["original"]

    ours = pd.DataFrame({"non_conditional": original("main_eps1"), "conditional": original("conditional")}).dropna(how="any")
    ours.loc["auroc_delta_pct"] = delta_row(ours, table4_page.paper()["paper49"])
    return ours


def table6(page: UtilityPage) -> list[Block]:
    """Table 6 beside the paper's, its caption and scorecard rows of the conditional column."""
    if page.rows("conditional").empty:
        return [Text("*Table 6: not run at this profile.*")]
    ours = conditional(page)
    runs = page.runs("conditional")
    caption = page.caption(
        "original, mean best-of-n AUROC, ε = 1, non-conditional (main run) vs conditional; last row the mean AUROC-Δ (%) "
        f"against [49] over the datasets present ({', '.join(ours.index[:-1])})", runs)
    return [*table("table6", side_by_side(ours, reference.table6(wide=True))), Text("**Table 6.** " + caption),
            scorecard(spread.attach(
                scorecard_rows(ours.drop(index="auroc_delta_pct")[["conditional"]], table="table6", runs=runs),
                lambda r: spread.interval(page, "conditional", "auroc", dataset=r["row"], implementation="original")))]


def hyperparameters(page: UtilityPage) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Best-of-n AUROC at ε = 1 with each implementation's defaults (D, the main run at ε = 1) and with
    [49]'s hyperparameters (P), rows = the datasets of the hyperparameter run."""
    datasets = [d for d in page.datasets if d in {c.dataset for c in page.cells["hyperparameters"]}]

    def of(group):
        return dataset_by_implementation(page.rows(group), metric="auroc", datasets=datasets,
                                         implementations=reference.IMPLEMENTATIONS)

    return of("main_eps1"), of("hyperparameters")


def table12(page: UtilityPage) -> list[Block]:
    """Table 12 (ours and the paper's, D and P per implementation, last row the AUROC-Δ of P
    against D), a note where Δ is not defined, glue ``t12_mean_ours`` / ``t12_mean_paper`` and
    scorecard rows of P and D."""
    if page.rows("hyperparameters").empty:
        return [Text("*Table 12: not run at this profile.*")]
    default, theirs = hyperparameters(page)
    implementations = reference.IMPLEMENTATIONS
    ours = pd.concat({"D": default, "P": theirs}, axis=1).swaplevel(axis=1)[[(i, h) for i in implementations for h in ("D", "P")]]
    deltas = delta_row(theirs, default)
    ours.loc["auroc_delta_pct"] = [deltas[i] if h == "P" else np.nan for i, h in ours.columns]
    paper = reference.table12(wide=True)
    shown = pd.concat({"ours": ours, "paper": paper.reindex(index=ours.index, columns=ours.columns)}, axis=1)
    runs = page.runs("hyperparameters")
    caption = page.caption(
        f"Mean best-of-n AUROC with default (D: the main run at ε = 1) and [49]'s (P) hyperparameters, ε = 1, datasets "
        f"{', '.join(default.index)}; last row: AUROC-Δ (%) of P against D", runs)
    note = delta_undefined_note(theirs, default, reference_name="D")
    return [*table("table12", shown), Text("**Table 12.** " + caption), *([Text(f"*{note}*")] if note else []),
            Glue("t12_mean_ours", mean_delta_text(deltas)),
            Glue("t12_mean_paper", f"{paper.loc['auroc_delta_pct'].xs('P', level=1).mean():.2f} %"),
            scorecard(_hyperparameter_spread(page, scorecard_rows(theirs, table="table12", runs=runs, column_suffix=" P"), "P")
                      + _hyperparameter_spread(page, scorecard_rows(default, table="table12", runs=page.runs("main_eps1"),
                                                                    column_suffix=" D"), "D"))]


def _hyperparameter_spread(page: UtilityPage, rows: list[dict], hyperparameters: str) -> list[dict]:
    """Table 12 rows (row = dataset, column = "<implementation> P|D") with the interval of their cell:
    the hyperparameter run for P, the main run at ε = 1 for D."""
    group = "hyperparameters" if hyperparameters == "P" else "main_eps1"
    return spread.attach(rows, lambda r: spread.interval(page, group, "auroc", dataset=r["row"],
                                                         implementation=r["column"].rsplit(" ", 1)[0]))
