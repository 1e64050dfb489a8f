"""The book's display settings: untruncated tables, the parameters table, readable figures.

Every plotting function of :mod:`pategan_audit.pages.plotting` is drawn on small data in the book's
theme, and must keep every text at least ``MIN_FONT_PT`` points and fit the text column
(``COLUMN_WIDTH_IN`` inches, after the tight bounding box), so that the page shows it at 1:1 or
larger: then no text is below 9 pt in the HTML (checked in a real browser by test_browser.py).
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from pategan_audit.pages import display  # noqa: E402
from pategan_audit.pages.plotting import COLUMN_WIDTH_IN, MIN_FONT_PT, readable, set_theme  # noqa: E402
from pategan_audit.pages.plotting import auditing as aplot  # noqa: E402
from pategan_audit.pages.plotting import traces as tplot  # noqa: E402
from pategan_audit.pages.plotting import utility as uplot  # noqa: E402

SEVEN = ["original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected"]


# -- figures ----------------------------------------------------------------------------------------------

def _audit_records():
    rows = []
    for attack in ("querybased", "groundhog"):
        for i, name in enumerate(SEVEN):
            for channel in ("paper", "fixed_size", "controlled"):
                for method in ("clopper_pearson", "bayesian"):
                    rows.append({"attack": attack, "implementation": name, "channel": channel, "variant": "as benchmarked",
                                 "method": method, "epsilon_emp": 0.61 * i + (channel == "paper")})
    return pd.DataFrame(rows)


def _ablation_records():
    rows = []
    for name in SEVEN[:6]:
        for v in ("as benchmarked", "V1 fixed", "V4 fixed", "V11 fixed", "all fixed", "O9 fixed (beyond Table 2)"):
            rows.append({"attack": "querybased", "implementation": name, "channel": "fixed_size", "variant": v,
                         "method": "clopper_pearson", "epsilon_emp": 4.6815 if v == "as benchmarked" else 0.5})
    return pd.DataFrame(rows)


def _sweep():
    return pd.DataFrame([{"implementation": n, "epsilon": e, "value": 0.5 + 0.03 * j + 0.02 * np.log10(e)}
                         for j, n in enumerate(SEVEN) for e in (0.01, 0.1, 1.0, 10.0, 100.0)])


def _seen():
    return pd.DataFrame([{"implementation": n, "teacher": t, "only": 100 + t, "shared": 300 - t, "iterations": 1000}
                         for n in tplot.SEEN_PANELS for t in range(5)])


def _losses():
    return pd.DataFrame([{"implementation": n, "seed": s, "iteration": i, "line": line, "cross_entropy": 0.7 + 0.001 * i}
                         for n in tplot.LOSS_PANELS for s in range(2) for i in range(0, 200, 10) for line in ("own", "others")])


def _moments():
    return pd.DataFrame([{"lam": 1e-3, "accountant": n, "iteration": i, "moment": m, "epsilon": 10.0 * m / i + 0.1 * i}
                         for n in tplot.MOMENT_PANELS for i in (1, 10, 100, 1000) for m in range(1, 21)])


def _heatmap():
    classifiers = ["LDA", "Logistic Regression", "Random Forest", "Gaussian Naive Bayes", "Bernoulli Naive Bayes", "Linear SVM",
                   "Decision Tree", "AdaBoost", "Bagging", "GBM", "MLP", "XGBoost"]
    return pd.DataFrame(np.linspace(0.4, 0.99, 12 * 7).reshape(12, 7), index=classifiers, columns=SEVEN)


def _profile_tables():
    t = pd.DataFrame([[0.8] * 7], index=["cervical_cancer"], columns=SEVEN)
    return {"paper": t, "large": t - 0.1, "book": t - 0.2}


FIGURES = {
    "epsilon_sweep": lambda: uplot.plot_epsilon_sweep(_sweep(), baseline=0.5, paper_marks={1.0: 0.7, 10.0: 0.8}, reference=_sweep(),
                                                      title="Figure 1 — Epileptic Seizure"),
    "mean_se": lambda: uplot.plot_mean_se(_sweep().rename(columns={"value": "mean"}).assign(se=0.01),
                                          reference=_sweep().rename(columns={"value": "mean"}), title="Figure 8 — Epileptic Seizure"),
    "classifier_heatmap": lambda: uplot.plot_classifier_heatmap(_heatmap(), title="Table 5 — ours"),
    "classifier_heatmap_diff": lambda: uplot.plot_classifier_heatmap(_heatmap() - 0.7, center=0, title="ours − paper"),
    "profile_comparison": lambda: uplot.plot_profile_comparison(_profile_tables(), dataset="cervical_cancer"),
    "teacher_seen": lambda: tplot.plot_teacher_seen(_seen(), reference=_seen()),
    "teacher_losses": lambda: tplot.plot_teacher_losses(_losses()),
    "moments": lambda: tplot.plot_moments(_moments()),
    "figure5": lambda: aplot.plot_figure5(_audit_records(), reference={"querybased": {n: 4.6815 for n in SEVEN}}, ceiling=4.6815),
    "figure12": lambda: aplot.plot_figure5(_audit_records(), method="bayesian", ceiling=6.29),
    "channels": lambda: aplot.plot_channels(_audit_records(), ceiling=4.6815),
    "ablation": lambda: aplot.plot_ablation(_ablation_records(), ceiling=4.6815),
    "epsilon_bars": lambda: aplot.plot_epsilon_bars({n: 1.0 for n in SEVEN}, reference={"original": 4.68}, ceiling=1.35, title="(a)"),
}


def measure(fig) -> tuple[float, float, list[str]]:
    """(width in inches of the tight bounding box, smallest font size, the texts below MIN_FONT_PT)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width = fig.get_tightbbox(renderer).width
    texts = [t for t in fig.findobj(Text) if t.get_text() and t.get_visible()]
    small = [f"{t.get_text()!r} {t.get_fontsize():.1f} pt" for t in texts if t.get_fontsize() < MIN_FONT_PT - 1e-9]
    return width, min(t.get_fontsize() for t in texts), small


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_text_is_readable_at_the_column_width(name):
    set_theme()
    fig = FIGURES[name]()
    try:
        width, smallest, small = measure(fig)
        assert not small, f"{name}: texts below {MIN_FONT_PT:g} pt: {small[:8]}"
        assert width <= COLUMN_WIDTH_IN + 1e-6, (f"{name}: {width:.2f} in wide; the page would shrink it below 1:1 "
                                                 f"(text column {COLUMN_WIDTH_IN:g} in)")
    finally:
        plt.close(fig)


def test_readable_raises_small_text():
    fig, ax = plt.subplots()
    ax.text(0, 0, "tiny", fontsize="xx-small")
    readable(fig)
    assert measure(fig)[2] == []
    plt.close(fig)


# -- pandas and the parameters table -------------------------------------------------------------------

def test_setup_page_never_truncates():
    with pd.option_context("display.max_rows", 10):
        display.setup_page()
        try:
            df = pd.DataFrame(np.zeros((300, 60)))
            df["why"] = "x" * 400
            html = df._repr_html_()
            assert "..." not in html and "x" * 400 in html and html.count("<tr") == 301
            assert plt.rcParams["font.size"] >= MIN_FONT_PT and plt.rcParams["xtick.labelsize"] >= MIN_FONT_PT
        finally:
            for key in display.PANDAS_OPTIONS:
                pd.reset_option(key)


PARAMETERS_CELL = '''profile: str = "book"  # "smoke" (CI, seconds), "book" (default of the book build)
eps: float = 1.0  # privacy budget epsilon
seed: int = 0  # master seed: the same seed gives the same numbers
datasets: list = []  # Table 4 rows to run; empty means the profile's
'''


def test_parameters_table_from_a_notebook_namespace():
    ns: dict = {}
    exec(PARAMETERS_CELL, ns)  # noqa: S102 - the notebook's own parameters cell
    ns.update(profile="smoke", eps=2.0, _ih=["", PARAMETERS_CELL, "# Parameters\nprofile = 'smoke'\neps = 2.0\n", "validate"])
    table = display.parameters_table(ns)
    assert list(table.index) == ["profile", "eps", "seed", "datasets"]
    assert table.loc["profile", "value"] == "smoke (default book)"
    assert table.loc["eps", "value"] == "2.0 (default 1.0)"
    assert table.loc["seed", "value"] == "0"
    assert table.loc["datasets", "value"] == "[] (empty)"
    assert table.loc["seed", "meaning"] == "master seed: the same seed gives the same numbers"


def test_parameters_table_from_names():
    table = display.parameters_table(["seed"], {"seed": 3})
    assert table.loc["seed", "value"] == "3"
    with pytest.raises(KeyError):
        display.parameters_table(["seed", "eps"], {"seed": 3})


def test_parameter_descriptions_reads_defaults_and_comments():
    got = display.parameter_descriptions(PARAMETERS_CELL)
    assert got["eps"] == (1.0, "privacy budget epsilon")
    assert got["datasets"] == ([], "Table 4 rows to run; empty means the profile's")


def test_frame_html_marks_long_text_cells():
    df = pd.DataFrame({"value": [0.5], "why": ["a justification long enough to wrap at a readable width"]})
    html = display.frame_html(df)
    assert '<td class="pa-text">a justification long enough' in html and "<td>0.5</td>" in html
    assert 'class="dataframe pa-frame"' in html
