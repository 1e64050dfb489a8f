"""Figures of the DP audit (paper §6.2: Figs. 5 and 12; our ablation and channel comparison).

Conventions of the paper (implementation notes §audit.figures): horizontal bars, one per implementation,
``original`` at the top, x = ε_emp on a *linear* axis, a dashed vertical line at the
theoretical ε = 1. We add the paper's value beside each bar (a black tick and its number) and a
dotted line at the largest ε_emp the sample size can show (the "ceiling", implementation notes §audit.ceiling),
without which small-profile bars cannot be read. Every function takes tidy records (the output
of :func:`pategan_audit.auditing.run_settings`) and an optional ``ax``, and returns the figure.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .theme import ANNOTATION_FONT_PT, IMPLEMENTATION_COLORS, axes_of, ordered_names

__all__ = ["ATTACK_TITLES", "CHANNEL_COLORS", "CHANNEL_LABELS", "plot_epsilon_bars", "plot_figure5", "plot_ablation", "plot_channels",
           "plot_past_ceiling"]

ATTACK_TITLES = {"querybased": "(a) Querybased, worst-case dataset", "groundhog": "(b) GroundHog, Cervical Cancer"}
_EPS_LABEL = r"$\varepsilon_{emp}$"


def _check(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs columns {list(columns)}; missing {missing}")


def _guides(ax, *, epsilon: float | None, ceiling: float | None) -> None:
    if epsilon is not None:
        ax.axvline(epsilon, color="black", linestyle="--", linewidth=1, label=rf"$\varepsilon$ = {epsilon:g}")
    if ceiling is not None:
        ax.axvline(ceiling, color="grey", linestyle=":", linewidth=1.2, label=f"ceiling of this sample ({ceiling:.2f})")
    ax.set_xlim(left=0)


def plot_epsilon_bars(
    values: Mapping[str, float],
    *,
    reference: Mapping[str, float] | None = None,
    epsilon: float | None = 1.0,
    ceiling: float | None = None,
    title: str | None = None,
    ax=None,
):
    """One panel of Fig. 5/12: ``values`` {implementation: ε_emp}, original at the top.

    ``reference``: the paper's values {implementation: ε_emp}, drawn as black ticks with the
    number beside them; ``ceiling``: the perfect-attack bound of this sample size.
    """
    fig, ax = axes_of(ax, (5.5, 3.2))
    names = ordered_names(list(values))
    y = np.arange(len(names))[::-1]  # first name at the top
    ax.barh(y, [values[n] for n in names], color=[IMPLEMENTATION_COLORS.get(n, (0.5, 0.5, 0.5)) for n in names],
            height=0.6, edgecolor="black", linewidth=0.5)
    for yi, n in zip(y, names):
        ax.text(values[n], yi, f" {values[n]:.2f}", va="center", ha="left", fontsize=ANNOTATION_FONT_PT)
    if reference:
        ref = [(yi, reference[n]) for yi, n in zip(y, names) if n in reference and reference[n] is not None]
        if ref:
            ax.scatter([r[1] for r in ref], [r[0] for r in ref], marker="|", s=260, color="black", zorder=3, label="paper")
            for yi, v in ref:
                # in the gap above the bar, clear of the value printed to the bar's right
                ax.text(v, yi + 0.31, f"paper {v:.2f}", va="bottom", ha="right", fontsize=ANNOTATION_FONT_PT)
    ax.set_yticks(y, names)
    ax.set_xlabel(_EPS_LABEL)
    _guides(ax, epsilon=epsilon, ceiling=ceiling)
    right = max([1.0, *(v for v in values.values() if np.isfinite(v)), *(v for v in (reference or {}).values() if v is not None), ceiling or 0.0])
    ax.set_xlim(0, 1.15 * right)
    if title:
        ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    return fig


def plot_figure5(
    records: pd.DataFrame,
    *,
    method: str = "clopper_pearson",
    channel: str = "paper",
    reference: Mapping[str, Mapping[str, float]] | None = None,
    ceiling: float | None = None,
    epsilon: float = 1.0,
):
    """Fig. 5 (``method="clopper_pearson"``) or Fig. 12 (``"bayesian"``): panels (a) Querybased,
    (b) GroundHog from ``records`` (columns attack, implementation, channel, variant, method,
    epsilon_emp); ``reference``: {attack: {implementation: paper value}}."""
    _check(records, ["attack", "implementation", "channel", "variant", "method", "epsilon_emp"], "plot_figure5")
    sel = records[(records["method"] == method) & (records["channel"] == channel) & (records["variant"] == "as benchmarked")]
    attacks = [a for a in ATTACK_TITLES if a in set(sel["attack"])]
    if not attacks:
        raise ValueError(f"no records for method={method!r}, channel={channel!r}")
    # panels one above the other: side by side they would not fit the book's text column at 1:1
    fig, axes = plt.subplots(len(attacks), 1, figsize=(6.4, 4.4 * len(attacks)), squeeze=False)
    for ax, attack in zip(axes[:, 0], attacks):
        part = sel[sel["attack"] == attack]
        values = dict(zip(part["implementation"], part["epsilon_emp"]))
        plot_epsilon_bars(values, reference=(reference or {}).get(attack), epsilon=epsilon, ceiling=ceiling,
                          title=ATTACK_TITLES[attack], ax=ax)
    fig.tight_layout()
    return fig


def _grouped(ax, table: pd.DataFrame, groups: list[str], series: list[str], colors, *, epsilon, ceiling):
    n = len(series)
    height = 0.8 / max(n, 1)
    y0 = np.arange(len(groups))[::-1]
    for j, s in enumerate(series):
        vals = [table.loc[g, s] if (g in table.index and s in table.columns) else np.nan for g in groups]
        ax.barh(y0 + 0.4 - height * (j + 0.5), vals, height=height * 0.95, color=colors[j], label=s,
                edgecolor="black", linewidth=0.4)
    ax.set_yticks(y0, groups)
    ax.set_xlabel(_EPS_LABEL)
    _guides(ax, epsilon=epsilon, ceiling=ceiling)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))


def _variant_order(variants) -> list[str]:
    """as benchmarked, the V-fixes by number, all fixed, then the O-finding rows."""
    variants = list(dict.fromkeys(variants))
    findings = [v for v in variants if "beyond" in v]
    fixes = sorted((v for v in variants if v not in ("as benchmarked", "all fixed") and v not in findings),
                   key=lambda v: (v[0], int("".join(ch for ch in v.split()[0] if ch.isdigit()) or 0)))
    return [v for v in ["as benchmarked", *fixes, "all fixed", *findings] if v in variants]


def plot_ablation(
    records: pd.DataFrame,
    *,
    attack: str = "querybased",
    method: str = "clopper_pearson",
    ceiling: float | None = None,
    epsilon: float = 1.0,
    ax=None,
):
    """ε_emp per implementation and variant: one block of bars per implementation (its colour),
    one bar per variant (as benchmarked first, then each violation fixed alone, all fixed, then
    any O-finding rows), with the value printed at each bar so that zeros stay visible. The
    ablation of one attack runs in one channel (fixed_size for Querybased, paper for GroundHog);
    it is named in the title."""
    _check(records, ["attack", "implementation", "variant", "method", "epsilon_emp"], "plot_ablation")
    sel = records[(records["attack"] == attack) & (records["method"] == method)]
    if sel.empty:
        raise ValueError(f"no ablation records for attack={attack!r}, method={method!r}")
    channels = sorted(set(sel["channel"])) if "channel" in sel.columns else []
    if len(channels) > 1:
        raise ValueError(f"ablation records of {attack} mix channels {channels}; pass one channel's records")
    rows: list[tuple[str, str, float]] = []
    for name in ordered_names(sel["implementation"].unique()):
        part = sel[sel["implementation"] == name].drop_duplicates("variant").set_index("variant")
        rows += [(name, v, float(part.loc[v, "epsilon_emp"])) for v in _variant_order(part.index)]
    # y from the top: one slot per bar, plus one header slot per implementation
    ys, headers, y = [], [], 0.0
    for i, (name, _, _) in enumerate(rows):
        if i == 0 or rows[i - 1][0] != name:
            headers.append((name, y))
            y -= 1.0
        ys.append(y)
        y -= 1.0
    fig, ax = axes_of(ax, (6.4, 0.9 + 0.26 * (len(rows) + len(headers))))
    colors = [IMPLEMENTATION_COLORS.get(n, (0.5, 0.5, 0.5)) for n, _, _ in rows]
    edges = [1.4 if v == "as benchmarked" else 0.4 for _, v, _ in rows]
    ax.barh(ys, [r[2] for r in rows], height=0.75, color=colors, edgecolor="black", linewidth=edges)
    for yi, (_, _, value) in zip(ys, rows):
        ax.text(value, yi, f" {value:.2f}", va="center", ha="left", fontsize=ANNOTATION_FONT_PT)
    for name, yh in headers:
        ax.text(0.0, yh, name, va="center", ha="left", fontweight="bold",
                transform=ax.get_yaxis_transform())
    ax.set_yticks(ys, [v for _, v, _ in rows])
    ax.set_ylim(y + 0.5, 0.7)
    ax.set_xlabel(_EPS_LABEL)
    _guides(ax, epsilon=epsilon, ceiling=ceiling)
    ax.set_xlim(0, 1.18 * max([1.0, ceiling or 0.0, *(r[2] for r in rows if np.isfinite(r[2]))]))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.9 / (len(rows) + len(headers)) - 0.04), ncol=2)
    where = f", {channels[0]} channel" if channels else ""
    ax.set_title(f"Ablation: one violation fixed at a time ({attack}{where})")
    return fig


#: Grey levels of the three channels, darkest = the paper's game.
CHANNEL_COLORS = {"paper": (0.3, 0.3, 0.3), "fixed_size": (0.6, 0.6, 0.6), "controlled": (0.88, 0.88, 0.88)}
CHANNEL_LABELS = {"paper": "paper game", "fixed_size": "same synthetic size", "controlled": "same size + public bounds"}


def plot_channels(
    records: pd.DataFrame,
    *,
    method: str = "clopper_pearson",
    ceiling: float | None = None,
    epsilon: float = 1.0,
):
    """The three channels of implementation notes §audit.channels — paper game, same synthetic size, same size and
    public bounds — one panel per attack, one bar per channel and implementation."""
    _check(records, ["attack", "implementation", "channel", "variant", "method", "epsilon_emp"], "plot_channels")
    sel = records[(records["method"] == method) & (records["variant"] == "as benchmarked")]
    attacks = [a for a in ATTACK_TITLES if a in set(sel["attack"])]
    if not attacks:
        raise ValueError(f"no records for method={method!r}")
    # panels one above the other: side by side they would not fit the book's text column at 1:1
    fig, axes = plt.subplots(len(attacks), 1, figsize=(6.4, 4.6 * len(attacks)), squeeze=False)
    for ax, attack in zip(axes[:, 0], attacks):
        part = sel[sel["attack"] == attack]
        table = part.pivot_table(index="implementation", columns="channel", values="epsilon_emp", aggfunc="first")
        series = [c for c in CHANNEL_COLORS if c in table.columns]
        table = table.rename(columns=CHANNEL_LABELS)
        _grouped(ax, table, ordered_names(part["implementation"].unique()), [CHANNEL_LABELS[c] for c in series],
                 [CHANNEL_COLORS[c] for c in series], epsilon=epsilon, ceiling=ceiling)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
        ax.set_title(ATTACK_TITLES[attack])
    fig.tight_layout()
    return fig


def plot_past_ceiling(table: pd.DataFrame, *, reference: Mapping[str, Mapping[str, float]] | None = None,
                      epsilon: float = 1.0):
    """The audits past the ceiling: per (implementation, channel) of each attack, ε_emp at 1,000
    shadow models per world (light bar) and with the larger test split (dark bar), each bar's own
    ceiling as a grey tick, and the paper's value (black tick) where the channel is the paper's.
    ``table``: :func:`pategan_audit.auditing.past_ceiling.past_ceiling_table`."""
    _check(table, ["attack", "implementation", "channel", "ε_emp before", "ceiling before", "ε_emp", "ceiling"],
           "plot_past_ceiling")
    attacks = [a for a in ATTACK_TITLES if a in set(table["attack"])]
    if not attacks:
        raise ValueError("plot_past_ceiling: the table has no rows")
    heights = [len(table[table["attack"] == a]) for a in attacks]
    fig, axes = plt.subplots(len(attacks), 1, figsize=(6.4, 1.2 + 0.75 * sum(heights) + 0.9 * len(attacks)),
                             squeeze=False, gridspec_kw={"height_ratios": heights})
    for ax, attack in zip(axes[:, 0], attacks):
        part = table[table["attack"] == attack].reset_index(drop=True)
        y = np.arange(len(part))[::-1].astype(float)
        colors = [IMPLEMENTATION_COLORS.get(n, (0.5, 0.5, 0.5)) for n in part["implementation"]]
        before = part["ε_emp before"].astype(float).fillna(0.0)
        ax.barh(y + 0.2, before, height=0.36, color=colors, alpha=0.35, edgecolor="black", linewidth=0.5,
                label="1,000 per world (400 test outputs)")
        ax.barh(y - 0.2, part["ε_emp"], height=0.36, color=colors, edgecolor="black", linewidth=0.5,
                label=f"{int(part['test outputs'].iloc[0]):,} test outputs per world")
        for yi, b, cb, a, ca in zip(y, before, part["ceiling before"], part["ε_emp"], part["ceiling"]):
            ax.text(b, yi + 0.2, f" {b:.2f}", va="center", ha="left", fontsize=ANNOTATION_FONT_PT)
            ax.text(a, yi - 0.2, f" {a:.2f}", va="center", ha="left", fontsize=ANNOTATION_FONT_PT)
            for v, off in ((cb, 0.2), (ca, -0.2)):
                if pd.notna(v):
                    ax.plot([v, v], [yi + off - 0.2, yi + off + 0.2], color="grey", linewidth=2)
        ref = (reference or {}).get(attack, {})
        marks = [(yi, ref[n]) for yi, n, c in zip(y, part["implementation"], part["channel"])
                 if c == "paper" and ref.get(n) is not None]
        if marks:
            ax.scatter([m[1] for m in marks], [m[0] for m in marks], marker="|", s=260, color="black", zorder=3,
                       label="paper")
        ax.plot([], [], color="grey", linewidth=2, label="ceiling of each bar's test split")
        ax.set_yticks(y, [f"{n}\n{c}" for n, c in zip(part["implementation"], part["channel"])])
        ax.set_xlabel(_EPS_LABEL)
        ax.axvline(epsilon, color="black", linestyle="--", linewidth=1, label=rf"$\varepsilon$ = {epsilon:g}")
        ax.set_xlim(0, 1.18 * max([epsilon, *part["ceiling"], *part["ε_emp"]]))
        ax.set_title(ATTACK_TITLES[attack])
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28 if len(part) > 2 else -0.45), ncol=2)
    fig.tight_layout()
    return fig
