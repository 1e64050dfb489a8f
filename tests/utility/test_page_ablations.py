"""pategan_audit.pages.utility.ablations: Tables 11, 6 and 12."""
import numpy as np

from pategan_audit.pages import blocks
from pategan_audit.pages.utility import ablations

from .conftest import make_page


def test_table11_takes_n1000_from_the_main_run(page):
    ours = ablations.teachers(page)
    assert "N/1000" in ours.columns and ours["N/1000"].notna().any()
    save, show, text, card = ablations.table11(page)
    assert save.name == "table11" and text.markdown.startswith("**Table 11.**")
    other = ablations.teachers(make_page(page.section.dir.parent.parent, eps=2.0))
    assert other["N/1000"].isna().all()  # the main run is not at ε = 1


def test_table6_has_the_delta_row(page):
    ours = ablations.conditional(page)
    assert list(ours.columns) == ["non_conditional", "conditional"] and ours.index[-1] == "auroc_delta_pct"
    out = ablations.table6(page)
    assert out[0].name == "table6" and [r["column"] for r in out[-1].rows] == ["conditional"] * (len(ours) - 1)


def test_table12_delta_only_under_p(page):
    out = ablations.table12(page)
    frame = out[0].frame
    delta = frame.loc["auroc_delta_pct", "ours"]
    assert delta.xs("D", level=1).isna().all()
    glue = {b.name: b.text for b in out if isinstance(b, blocks.Glue)}
    assert glue["t12_mean_paper"] == "-17.55 %"
    assert glue["t12_mean_ours"].endswith("%") or glue["t12_mean_ours"] == "not defined"
    cards = out[-1].rows
    assert {r["column"][-2:] for r in cards} == {" P", " D"}
    assert np.isfinite([r["ours"] for r in cards]).all()


def test_ablations_not_run(tmp_path):
    page = make_page(tmp_path, datasets=("credit",))
    assert ablations.table11(page) == [blocks.Text("*Table 11: Epileptic not run at this profile.*")]
