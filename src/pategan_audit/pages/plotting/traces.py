"""Figures of the training traces (paper §6.1): Fig. 2, Figs. 3/11 and Fig. 4.

Each function takes the tidy tables of :mod:`pategan_audit.traces` and returns a matplotlib
figure (axes methods only; call :func:`pategan_audit.pages.plotting.set_theme` once per page and
:func:`pategan_audit.pages.plotting.save_figure` to write it). The panels are the paper's, in its
order, with ``corrected`` (ours) as an extra last panel; they are laid out in rows of three
(the paper's single row does not fit the book's text column with 9 pt text).
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize

__all__ = ["SEEN_PANELS", "LOSS_PANELS", "MOMENT_PANELS", "TRACE_COLORS", "plot_teacher_seen", "plot_teacher_losses",
           "plot_moments"]

SEEN_PANELS = ("updated", "synthcity", "borealis", "smartnoise", "corrected")
LOSS_PANELS = ("updated", "synthcity", "borealis", "smartnoise", "corrected")
MOMENT_PANELS = ("updated", "synthcity", "borealis", "smartnoise", "corrected")
_pal = sns.color_palette("colorblind", 4)
# the paper's two colours: blue = "only" / teacher 0 on its own subset, orange = "shared" / the others
TRACE_COLORS = {"only": _pal[0], "shared": _pal[1], "own": _pal[0], "others": _pal[1], "min": "red"}


PANELS_PER_ROW = 3


def _panels(n: int, *, width: float = 2.15, height: float = 2.3, sharey: bool = True):
    """n panels in rows of PANELS_PER_ROW (unused grid cells removed); the flat list of axes."""
    cols = min(n, PANELS_PER_ROW)
    rows = -(-n // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(width * cols, height * rows), sharey=sharey, squeeze=False)
    axes = list(grid.ravel())
    for ax in axes[n:]:
        fig.delaxes(ax)
    return fig, axes[:n]


def _ylabel(axes, label: str) -> None:
    """The y label on the first panel of each row."""
    for i, ax in enumerate(axes):
        if i % PANELS_PER_ROW == 0:
            ax.set_ylabel(label)


def _legend_on_top(fig, axes, *, ncol: int | None = None) -> None:
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=ncol or len(labels), bbox_to_anchor=(0.5, 1.0))


def _check_columns(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs columns {list(columns)}; missing {missing}")


def plot_teacher_seen(seen: pd.DataFrame, *, implementations: Sequence[str] = SEEN_PANELS,
                      reference: pd.DataFrame | None = None):
    """Fig. 2: per teacher, records seen only by it (blue) and also by another teacher (orange, stacked).

    seen: :func:`pategan_audit.traces.records_seen` table (implementation, teacher, only, shared
    [, iterations]). reference: optional table with the same first four columns (the paper's
    counts); drawn as black ticks at only + shared.
    """
    _check_columns(seen, ["implementation", "teacher", "only", "shared"], "plot_teacher_seen")
    names = [n for n in implementations if n in set(seen.implementation)]
    if not names:
        raise ValueError(f"none of {list(implementations)} is in the table (it has {sorted(set(seen.implementation))})")
    fig, axes = _panels(len(names))
    for ax, name in zip(axes, names):
        d = seen[seen.implementation == name].sort_values("teacher")
        ax.bar(d.teacher, d.only, color=TRACE_COLORS["only"], label="only this teacher")
        ax.bar(d.teacher, d.shared, bottom=d.only, color=TRACE_COLORS["shared"], label="shared with others")
        if reference is not None:
            r = reference[reference.implementation == name]
            if len(r):
                ax.scatter(r.teacher, r.only + r.shared, marker="_", s=300, color="black", zorder=3, label="paper")
        title = name if "iterations" not in d else f"{name} ({int(d.iterations.iloc[0])} it.)"
        ax.set_title(title)
        ax.set_xlabel("teacher")
        ax.set_xticks(d.teacher.to_numpy())
    _ylabel(axes, "records seen")
    fig.tight_layout()
    _legend_on_top(fig, axes)
    return fig


def plot_teacher_losses(lines: pd.DataFrame, *, implementations: Sequence[str] = LOSS_PANELS, sharey: bool = False):
    """Fig. 3 (one seed: plain lines) or Fig. 11 (several seeds: mean line, min-max band).

    lines: :func:`pategan_audit.traces.loss_lines` table (implementation, seed, iteration,
    line in {"own", "others"}, cross_entropy). Only iterations actually run are drawn.
    """
    _check_columns(lines, ["implementation", "seed", "iteration", "line", "cross_entropy"], "plot_teacher_losses")
    names = [n for n in implementations if n in set(lines.implementation)]
    if not names:
        raise ValueError(f"none of {list(implementations)} is in the table (it has {sorted(set(lines.implementation))})")
    fig, axes = _panels(len(names), sharey=sharey)
    label = {"own": "teacher 0, own subset", "others": "other teachers"}
    for ax, name in zip(axes, names):
        d = lines[lines.implementation == name]
        runs = d.seed.nunique()
        for line in ("own", "others"):
            g = d[d.line == line].groupby("iteration")["cross_entropy"]
            stats = g.agg(["mean", "min", "max"])
            ax.plot(stats.index, stats["mean"], color=TRACE_COLORS[line], label=label[line] + (" (mean)" if runs > 1 else ""))
            if runs > 1:
                ax.fill_between(stats.index, stats["min"], stats["max"], color=TRACE_COLORS[line], alpha=0.25, linewidth=0)
        ax.set_title(f"{name} ({runs} run{'s' if runs > 1 else ''})")
        ax.set_xlabel("iteration")
    _ylabel(axes, "teacher cross-entropy")
    fig.tight_layout()
    _legend_on_top(fig, axes)
    return fig


def plot_moments(curves: pd.DataFrame, *, lam: float | None = None, accountants: Sequence[str] = MOMENT_PANELS,
                 ymax: float | None = 1e8, cmap: str = "viridis"):
    """Fig. 4: per accountant, the L curves e_i(l) vs iteration coloured by l, and min_l e_i(l) (red dotted).

    curves: :func:`pategan_audit.traces.moment_curves` table (lam, accountant, iteration, moment,
    epsilon). lam: which lambda to draw (required if the table holds several). Both axes log;
    non-positive values (possible only outside Theorem 3's domain) are not drawn.
    """
    _check_columns(curves, ["lam", "accountant", "iteration", "moment", "epsilon"], "plot_moments")
    lams = sorted(set(curves.lam))
    if lam is None:
        if len(lams) != 1:
            raise ValueError(f"the table holds lambdas {lams}; pass lam= to choose one")
        lam = lams[0]
    d_lam = curves[np.isclose(curves.lam, lam)]
    if d_lam.empty:
        raise ValueError(f"lam={lam} not in the table (it has {lams})")
    names = [n for n in accountants if n in set(d_lam.accountant)]
    num_moments = int(d_lam.moment.max())
    norm = Normalize(vmin=1, vmax=num_moments)
    fig, axes = _panels(len(names), width=2.1, height=2.4)
    lc = None
    for ax, name in zip(axes, names):
        d = d_lam[d_lam.accountant == name]
        wide = d.pivot(index="iteration", columns="moment", values="epsilon").sort_index()
        x = wide.index.to_numpy(dtype=float)
        y = wide.to_numpy(dtype=float)
        y = np.where(y > 0, y, np.nan)
        segments = [np.column_stack([x, y[:, j]]) for j in range(y.shape[1])]
        lc = LineCollection(segments, cmap=cmap, norm=norm, linewidths=0.8)
        lc.set_array(wide.columns.to_numpy(dtype=float))
        ax.add_collection(lc)
        ax.plot(x, np.nanmin(y, axis=1), color=TRACE_COLORS["min"], linestyle=":", linewidth=2,
                label="minimum estimated epsilon")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(max(x.min(), 1), x.max())
        finite = y[np.isfinite(y)]
        if finite.size:
            ax.set_ylim(finite.min() * 0.8, ymax if ymax is not None else finite.max() * 1.5)
        ax.set_title(name)
        ax.set_xlabel("iteration")
    _ylabel(axes, "estimated epsilon")
    fig.tight_layout()
    if lc is not None:
        cbar = fig.colorbar(lc, ax=list(axes), pad=0.02, fraction=0.04)
        cbar.set_label("moment l")
    _legend_on_top(fig, axes, ncol=1)
    fig.suptitle(f"λ = {lam:g}", x=0.02, ha="left", y=1.0, va="bottom")
    return fig
