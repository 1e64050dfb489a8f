"""Figures of the utility benchmark (paper §5, App. C: Figs. 1, 6-10; Tables 5, 8-10 as heat maps).

Conventions of the paper (implementation notes §utility.figures): x = ε on a log axis up to 100, labelled
"epsilon (with delta = 10^-5)"; one line + marker per implementation in the fixed legend order
and colours of :mod:`pategan_audit.pages.plotting.theme`; a black dotted horizontal line for the
majority baseline; black horizontal tick marks labelled "Paper" for the [49] values read off
[49]'s figures; no error bars (except Fig. 8, mean ± SE). Each function takes data (tidy
frames) and an optional ``ax`` and returns the figure; nothing here uses the pyplot state
machine beyond creating a figure.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .theme import (ANNOTATION_FONT_PT, BEST_SIX, IMPLEMENTATION_COLORS, IMPLEMENTATION_MARKERS, IMPLEMENTATION_ORDER,
                    axes_of, ordered_names)

__all__ = ["EPSILON_LABEL", "plot_epsilon_sweep", "plot_mean_se", "plot_classifier_heatmap", "plot_profile_comparison"]

EPSILON_LABEL = r"epsilon (with delta = $10^{-5}$)"


def _axes(ax, figsize=(5.0, 3.8)):  # with the legend beside it, < 7 in: the book shows it at 1:1
    return axes_of(ax, figsize)


def _style(name: str) -> dict:
    return {
        "color": IMPLEMENTATION_COLORS.get(name, (0.5, 0.5, 0.5)),
        "marker": IMPLEMENTATION_MARKERS.get(name, "o"),
        # ours dashed (not benchmarked), the best of the six dash-dotted (a different preset at each point)
        "linestyle": "--" if name in ("corrected", "gnmax") else "-." if name == BEST_SIX else "-",
    }


def _check_columns(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs columns {list(columns)}; missing {missing}")


def _decorate_epsilon_axis(ax, *, ylabel: str, ylim_bottom: float | None, ylim_top: float | None) -> None:
    ax.set_xscale("log")
    ax.set_xlim(right=100)
    ax.set_xlabel(EPSILON_LABEL)
    ax.set_ylabel(ylabel)
    if ylim_bottom is not None or ylim_top is not None:
        ax.set_ylim(bottom=ylim_bottom, top=ylim_top)
    handles, labels = ax.get_legend_handles_labels()  # error-bar containers come last: reorder
    rank = {n: i for i, n in enumerate(IMPLEMENTATION_ORDER)}
    order = sorted(range(len(labels)), key=lambda i: (rank.get(labels[i], len(rank)), i))
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
              bbox_to_anchor=(1.01, 1.0))


def plot_epsilon_sweep(
    series: pd.DataFrame,
    *,
    metric: str = "AUROC",
    value: str = "value",
    baseline: float | None = None,
    paper_marks: Mapping[float, float] | None = None,
    reference: pd.DataFrame | None = None,
    title: str | None = None,
    ylim_bottom: float | None = None,
    ylim_top: float | None = None,
    reference_all: bool = False,
    ax=None,
):
    """Figs. 1, 6, 7, 9, 10: a best-of-n utility statistic against ε, one line per implementation.

    series: tidy frame with columns ``implementation``, ``epsilon`` and ``value`` (our numbers).
    baseline: majority-baseline value (AUROC 0.5; AUPRC = test prevalence), black dotted line.
    paper_marks: {ε: value} of [49] (hand-read and hard-coded in the authors' ``code/nb_plot.ipynb``; implementation notes §utility.figures), black tick marks "Paper".
    reference: optional tidy frame (same columns) of the paper's own curves, drawn faint and
        dashed in the implementation's colour so that each line sits beside its printed value.
    reference_all: also draw the paper's curve of an implementation that ``series`` lacks (its
        legend entry then says "(paper)").
    """
    _check_columns(series, ("implementation", "epsilon", value), "plot_epsilon_sweep(series)")
    fig, ax = _axes(ax)
    names = set(series["implementation"].unique())
    if reference is not None and reference_all:
        names |= set(reference["implementation"].unique())
    for name in ordered_names(names):
        part = series[series["implementation"] == name].sort_values("epsilon")
        if len(part):
            ax.plot(part["epsilon"], part[value], label=name, markersize=6, linewidth=1.6, **_style(name))
        if reference is not None:
            ref = reference[reference["implementation"] == name].dropna(subset=[value]).sort_values("epsilon")
            if len(ref):
                st = _style(name)
                ax.plot(ref["epsilon"], ref[value], color=st["color"], marker=st["marker"], linestyle=":",
                        alpha=0.35 if len(part) else 0.6, markersize=4, linewidth=1.0,
                        label=None if len(part) else f"{name} (paper)")
    if baseline is not None:
        ax.axhline(baseline, color="black", linestyle=":", linewidth=1.2, label="baseline")
    if paper_marks:
        eps = np.array(sorted(paper_marks), dtype=float)
        ax.plot(eps, [paper_marks[e] for e in eps], linestyle="none", marker="_", markersize=18,
                markeredgewidth=2.5, color="black", label="Paper")
    if reference is not None:
        ax.plot([], [], color="grey", linestyle=":", alpha=0.5, label="paper (authors' records)")
    if title:
        ax.set_title(title)
    _decorate_epsilon_axis(ax, ylabel=metric, ylim_bottom=ylim_bottom, ylim_top=ylim_top)
    return fig


def plot_mean_se(
    stats: pd.DataFrame,
    *,
    metric: str = "AUROC",
    baseline: float | None = 0.5,
    reference: pd.DataFrame | None = None,
    title: str | None = None,
    ax=None,
):
    """Fig. 8: mean over synthetic tables of the 12-classifier mean, ± one standard error.

    stats: columns ``implementation``, ``epsilon``, ``mean``, ``se`` (SE NaN = one table, no bar).
    reference: optional paper values with the same columns, drawn faint.
    """
    _check_columns(stats, ("implementation", "epsilon", "mean", "se"), "plot_mean_se(stats)")
    fig, ax = _axes(ax)
    for name in ordered_names(stats["implementation"].unique()):
        part = stats[stats["implementation"] == name].sort_values("epsilon")
        ax.errorbar(part["epsilon"], part["mean"], yerr=part["se"].fillna(0.0), label=name, capsize=3,
                    markersize=6, linewidth=1.6, **_style(name))
        if reference is not None:
            ref = reference[reference["implementation"] == name].dropna(subset=["mean"]).sort_values("epsilon")
            if len(ref):
                st = _style(name)
                ax.plot(ref["epsilon"], ref["mean"], color=st["color"], marker=st["marker"], linestyle=":",
                        alpha=0.35, markersize=4, linewidth=1.0)
    if baseline is not None:
        ax.axhline(baseline, color="black", linestyle=":", linewidth=1.2, label="baseline")
    if reference is not None:
        ax.plot([], [], color="grey", linestyle=":", alpha=0.5, label="paper (proposed statistic,\nauthors' records)")
    if title:
        ax.set_title(title)
    _decorate_epsilon_axis(ax, ylabel=f"{metric} (mean ± SE)", ylim_bottom=None, ylim_top=None)
    return fig


def plot_classifier_heatmap(
    table: pd.DataFrame,
    *,
    title: str | None = None,
    center: float | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str | None = None,
    fmt: str = ".2f",
    ax=None,
):
    """Tables 5, 8, 9, 10 as a heat map: rows = classifiers, columns = implementations.

    For a difference table (ours − paper) pass ``center=0`` to use a diverging colour map.
    """
    if not isinstance(table, pd.DataFrame) or table.empty:
        raise ValueError("plot_classifier_heatmap needs a non-empty DataFrame (classifiers x implementations)")
    cols = ordered_names(list(table.columns))
    data = table[cols].astype(float)
    values = data.to_numpy()
    fig, ax = _axes(ax, figsize=(1.0 + 0.72 * len(cols), 0.9 + 0.36 * len(data)))
    if center is not None:
        span = np.nanmax(np.abs(values - center)) if np.isfinite(values).any() else 1.0
        vmin = center - span if vmin is None else vmin
        vmax = center + span if vmax is None else vmax
    cmap = cmap or ("RdBu" if center is not None else "viridis")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    fig.colorbar(image, ax=ax)
    lo, hi = image.get_clim()
    for (i, j), v in np.ndenumerate(values):
        if np.isfinite(v):
            shade = (v - lo) / (hi - lo) if hi > lo else 0.5
            ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=ANNOTATION_FONT_PT,
                    color="white" if (shade < 0.2 or shade > 0.8) else "black")
    ax.set_xticks(range(len(cols)), cols, rotation=30, ha="right")
    ax.set_yticks(range(len(data)), [str(r) for r in data.index])
    ax.grid(False)
    if title:
        ax.set_title(title)
    return fig


def plot_profile_comparison(tables: Mapping[str, pd.DataFrame], *, dataset: str, ax=None, ylabel: str = "AUROC"):
    """Table 4 entries of one dataset under several sources (e.g. ``{"paper": …, "large": …,
    "book": …}``, each a Table 4-shaped frame: rows = datasets, columns = implementations) as
    grouped bars, one group per implementation; the majority baseline 0.5 dotted."""
    if not tables:
        raise ValueError("plot_profile_comparison needs at least one table")
    names = ordered_names([c for t in tables.values() for c in t.columns if dataset in t.index and pd.notna(t.loc[dataset, c])])
    fig, ax = _axes(ax, figsize=(6.6, 3.6))
    width = 0.8 / len(tables)
    shades = plt.get_cmap("Greys")(np.linspace(0.35, 0.85, len(tables)))
    x = np.arange(len(names))
    for i, (label, table) in enumerate(tables.items()):
        row = table.loc[dataset] if dataset in table.index else pd.Series(dtype=float)
        vals = [float(row.get(n, np.nan)) for n in names]
        ax.bar(x + (i - (len(tables) - 1) / 2) * width, vals, width, label=label, color=shades[i], linewidth=1.2,
               edgecolor=[IMPLEMENTATION_COLORS.get(n, (0.3, 0.3, 0.3)) for n in names])
    ax.axhline(0.5, color="black", linestyle=":", linewidth=1)
    ax.set_xticks(x, names, rotation=20)
    ax.set_ylim(0.3, 1.0)
    ax.set_ylabel(ylabel)
    ax.set_title(dataset)
    ax.legend(ncols=len(tables), loc="lower left")
    fig.tight_layout()
    return fig
