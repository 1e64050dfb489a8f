"""Utility against ε on the utility page (``ganev2025elusive`` Figures 1, 8, 9 on Epileptic,
6 and 7 on Credit, 10 on MNIST): our curves over the paper's, recomputed from the authors'
records, with [49]'s marks (``jordon2019pategan``) and the values beside the paper's.
"""
from __future__ import annotations

import pandas as pd

from ... import reference
from ..plotting.utility import plot_epsilon_sweep, plot_mean_se
from ...utility.aggregate import best_of_n, mean_se
from ...utility.tables import cap_binds_text, scorecard_rows, side_by_side, stopping
from ..blocks import Block, Figure, SaveTable, ShowTable, Text, scorecard, table
from . import spread
from .context import UtilityPage
from .setting_a import scores as setting_a_scores

__all__ = ["FIGURE_GROUPS", "sweep_values", "sweep_figure", "sweep_figures", "not_trained", "figure10"]

#: Figure -> the page's experiment group behind it, in the page's order.
FIGURE_GROUPS = {1: "sweep_epileptic", 9: "sweep_epileptic", 8: "sweep_epileptic", 6: "sweep_credit", 7: "sweep_credit"}


def sweep_values(rows: pd.DataFrame, figure: int) -> pd.DataFrame:
    """Our values of a sweep figure, rows = implementations, columns = ε: the best-of-n mean of the
    figure's metric, or for Figure 8 the mean over tables of the classifier mean (mean ± SE)."""
    metric = reference.FIGURES[figure]["metric"]
    if figure == 8:
        return mean_se(rows, metric=metric).pivot_table(index="implementation", columns="epsilon", values="mean")
    return best_of_n(rows).pivot_table(index="implementation", columns="epsilon", values=metric)


def _plot(rows: pd.DataFrame, figure: int):
    spec = reference.FIGURES[figure]
    dataset, metric = spec["dataset"], spec["metric"]
    paper_series = reference.figure_series(figure)
    title = f"Figure {figure} — {reference.DISPLAY_NAMES[dataset]}"
    if figure == 8:
        return plot_mean_se(mean_se(rows, metric=metric), metric=metric.upper(), baseline=spec["baseline"],
                            reference=paper_series.rename(columns={"value": "mean"}), title=title)
    series = best_of_n(rows)[["implementation", "epsilon", metric]].rename(columns={metric: "value"})
    marks = reference.paper49_marks(dataset, metric)
    return plot_epsilon_sweep(series, metric=metric.upper(), baseline=spec["baseline"],
                              paper_marks=dict(zip(marks["epsilon"], marks["value"])), reference=paper_series,
                              ylim_bottom=reference.FIGURE_YLIM_LOWER.get((dataset, metric)), title=title)


def sweep_figure(page: UtilityPage, figure: int) -> list[Block]:
    """One sweep figure, its caption, its values beside the paper's, scorecard rows (``<metric> eps=<ε>``)."""
    spec = reference.FIGURES[figure]
    dataset, metric = spec["dataset"], spec["metric"]
    group = FIGURE_GROUPS[figure]
    rows = page.rows(group)
    if rows.empty:
        return [Text(f"*Figure {figure} ({dataset}): not run at this profile.*")]
    ours = sweep_values(rows, figure)
    runs = page.runs(group)
    caption = page.caption(f"{reference.DISPLAY_NAMES[dataset]}, {spec['statistic']} {metric.upper()} against ε (log axis)", runs)
    paper = reference.figure_series(figure).pivot_table(index="implementation", columns="epsilon", values="value")
    side = side_by_side(ours.reindex([i for i in page.implementations if i in ours.index]), paper)
    epsilons = {f"{metric} eps={e:g}": e for e in ours.columns}
    card = ours.reindex([i for i in reference.IMPLEMENTATIONS if i in ours.index]).rename(columns=lambda e: f"{metric} eps={e:g}")
    # each point's interval: the bootstrap of its cell (Figure 8: mean ± 1.645 SE over its tables)
    measure = spread.mean_se_interval if figure == 8 else spread.interval
    cards = spread.attach(scorecard_rows(card, table=f"figure{figure}", runs=runs), lambda r: measure(
        page, group, metric, dataset=dataset, implementation=r["row"], epsilon=epsilons[r["column"]]))
    binds = cap_binds_text(stopping(rows))  # which points cannot move with ε at this profile's cap
    caption = caption + (" " + binds if binds else " ε ended every training (no point is held by the iteration cap).")
    return [Figure(f"figure{figure}", _plot(rows, figure)), Text(f"**Figure {figure}.** " + caption),
            *table(f"figure{figure}_values", side), scorecard(cards)]


def sweep_figures(page: UtilityPage) -> list[Block]:
    """Figures 1, 9, 8, 6, 7 in the page's order."""
    return [block for figure in FIGURE_GROUPS for block in sweep_figure(page, figure)]


def not_trained(page: UtilityPage) -> list[Block]:
    """Classifier rows of models that refused to train (smartnoise below its accountant's floor)."""
    results = page.results
    counts = results[results["status"] == "not_trained"].groupby(["dataset", "implementation", "epsilon"]).size()
    if len(counts):
        return [ShowTable(counts.rename("classifier rows").to_frame())]
    return [Text("*None at this profile.*")]


def figure10(page: UtilityPage) -> list[Block]:
    """Figure 10: MNIST, mean of the LR and RF best-of-n one-vs-rest macro AUROC against ε (ours only:
    the paper's curve values are not available as data); values written, not shown."""
    rows = page.rows("mnist")
    if rows.empty:
        return [Text("*Figure 10: MNIST is not run at this profile.*")]
    best = best_of_n(rows)
    figure = plot_epsilon_sweep(best[["implementation", "epsilon", "auroc"]].rename(columns={"auroc": "value"}),
                                metric="AUROC (mean of LR and RF)", baseline=0.5, title="Figure 10 — MNIST")
    setting_a = setting_a_scores(page)
    real = f"{setting_a.loc['mnist', 'auroc']:.4f} (paper 0.9960)" if "mnist" in setting_a.index else "not run"
    caption = page.caption("MNIST, mean of the LR and RF best-of-n one-vs-rest macro AUROC against ε; Setting A: " + real,
                           page.runs("mnist"))
    return [Figure("figure10", figure), Text("**Figure 10.** " + caption),
            SaveTable("figure10_values", best.pivot_table(index="implementation", columns="epsilon", values="auroc"))]
