"""pategan_audit.pages.utility.sweeps: Figures 1, 6-10 and the models that could not train."""
import matplotlib.pyplot as plt
import pandas as pd

from pategan_audit.pages import blocks
from pategan_audit.pages.utility import sweeps


def test_sweep_figures_in_the_pages_order(page):
    out = sweeps.sweep_figures(page)
    assert [b.name for b in out if isinstance(b, blocks.Figure)] == ["figure1", "figure9", "figure8"]
    texts = [b.markdown for b in out if isinstance(b, blocks.Text)]
    assert "*Figure 6 (credit): not run at this profile.*" in texts and "*Figure 7 (credit): not run at this profile.*" in texts
    cards = [r for b in out if isinstance(b, blocks.Scorecard) for r in b.rows]
    assert {r["table"] for r in cards} == {"figure1", "figure9", "figure8"}
    assert all(r["column"].startswith(("auroc eps=", "auprc eps=")) for r in cards)
    plt.close("all")


def test_figure8_values_are_the_mean_over_tables(page):
    rows = page.rows("sweep_epileptic")
    values = sweeps.sweep_values(rows, 8)
    per_table = rows.groupby(["implementation", "epsilon", "model", "table"])["auroc"].mean()
    expected = per_table.groupby(["implementation", "epsilon"]).mean().unstack("epsilon")
    pd.testing.assert_frame_equal(values, expected.reindex(values.index), check_names=False)


def test_not_trained_lists_refused_models(page):
    (text,) = sweeps.not_trained(page)
    assert text.markdown == "*None at this profile.*"
    refused = page.results.index[page.results["implementation"] == "smartnoise"][:3]
    page.results.loc[refused, "status"] = "not_trained"
    (table,) = sweeps.not_trained(page)
    assert table.frame["classifier rows"].sum() == 3


def test_figure10_when_mnist_is_not_run(page):
    assert sweeps.figure10(page) == [blocks.Text("*Figure 10: MNIST is not run at this profile.*")]


def test_sweep_caption_names_the_points_the_cap_holds(page):
    rows = page.results
    sweep = rows["cell"].isin({c for c in page.rows("sweep_epileptic")["cell"]})
    # original ran to its cap at every ε; every other preset stopped on its budget
    rows.loc[sweep, "iterations"] = 3
    rows.loc[sweep & (rows["implementation"] == "original"), "iterations"] = rows.loc[sweep, "max_iter"].max()
    text = next(b.markdown for b in sweeps.sweep_figure(page, 1) if isinstance(b, blocks.Text))
    eps = sorted(page.rows("sweep_epileptic")["epsilon"].unique())
    assert "The iteration cap, not ε, ended the trainings of " + "; ".join(f"ε = {e:g}: original" for e in eps) in text
    rows.loc[sweep, "iterations"] = 3
    text = next(b.markdown for b in sweeps.sweep_figure(page, 1) if isinstance(b, blocks.Text))
    assert "ε ended every training" in text
    plt.close("all")
