"""Figures of the audit (protocols spec D.8)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from pategan_audit.pages.plotting.auditing import plot_ablation, plot_channels, plot_epsilon_bars, plot_figure5  # noqa: E402

SIX = ["smartnoise", "original", "turing", "updated", "borealis", "synthcity"]  # deliberately shuffled


def _records():
    rows = []
    for attack in ("querybased", "groundhog"):
        for i, name in enumerate(SIX):
            for channel in ("paper", "fixed_size", "controlled"):
                for method in ("clopper_pearson", "bayesian"):
                    rows.append({"attack": attack, "implementation": name, "channel": channel, "variant": "as benchmarked",
                                 "method": method, "epsilon_emp": 0.2 * i + (channel == "paper")})
    for v, e in (("V4 fixed", 0.5), ("all fixed", 0.1)):
        rows.append({"attack": "querybased", "implementation": "updated", "channel": "paper", "variant": v,
                     "method": "clopper_pearson", "epsilon_emp": e})
    return pd.DataFrame(rows)


def test_bars_original_on_top_linear_axis_dashed_line_at_one():
    fig = plot_epsilon_bars({n: 1.0 for n in SIX}, reference={"original": 4.68}, ceiling=1.35)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    ticks = list(ax.get_yticks())
    top = labels[ticks.index(max(ticks))]
    assert top == "original" and labels[ticks.index(min(ticks))] == "smartnoise"
    assert ax.get_xscale() == "linear"
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert dashed and dashed[0].get_xdata()[0] == 1.0


def test_figure5_has_two_panels_and_figure12_uses_bayesian():
    recs = _records()
    fig5 = plot_figure5(recs, reference={"querybased": {"original": 4.6815}})
    assert len(fig5.axes) == 2 and fig5.axes[0].get_title().startswith("(a)")
    fig12 = plot_figure5(recs, method="bayesian")
    assert len(fig12.axes) == 2
    with pytest.raises(ValueError, match="no records"):
        plot_figure5(recs, method="jeffreys")
    with pytest.raises(ValueError, match="missing"):
        plot_figure5(recs.drop(columns=["variant"]))


def test_ablation_and_channel_plots():
    recs = _records()
    abl = recs[(recs["implementation"] == "updated") & (recs["channel"] == "paper")]
    extra = pd.DataFrame([{"attack": "querybased", "implementation": impl, "channel": "paper", "variant": v,
                           "method": "clopper_pearson", "epsilon_emp": 0.3}
                          for impl, v in (("updated", "O9 fixed (beyond Table 2)"), ("updated", "V15 fixed"),
                                          ("updated", "V11 fixed"), ("original", "as benchmarked"),
                                          ("original", "V10 fixed"))])
    fig = plot_ablation(pd.concat([abl, extra], ignore_index=True))
    ax = fig.axes[0]
    ticks = list(ax.get_yticks())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    top_down = [lab for _, lab in sorted(zip(ticks, labels), reverse=True)]
    # original (paper order) first; within a preset: as benchmarked, V-ids by number, all fixed, findings
    assert top_down == ["as benchmarked", "V10 fixed", "as benchmarked", "V4 fixed", "V11 fixed", "V15 fixed",
                        "all fixed", "O9 fixed (beyond Table 2)"]
    headers = [t.get_text() for t in ax.texts if t.get_fontweight() == "bold"]
    assert headers == ["original", "updated"]
    assert "paper channel" in ax.get_title()
    with pytest.raises(ValueError, match="mix channels"):
        plot_ablation(recs[recs["implementation"] == "updated"])
    fig = plot_channels(recs)
    assert len(fig.axes) == 2
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts() if not t.get_text().startswith(("$", "ceiling"))]
    assert legend == ["paper game", "same synthetic size", "same size + public bounds"]
