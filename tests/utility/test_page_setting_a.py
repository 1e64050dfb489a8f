"""pategan_audit.pages.utility.setting_a: Table 7's Setting A columns and the per-classifier records."""
import numpy as np

from pategan_audit.classifiers import CLASSIFIERS
from pategan_audit.pages import blocks
from pategan_audit.pages.utility import setting_a


def test_table7_is_written_with_its_caption(page):
    save, text = setting_a.table7(page)
    assert isinstance(save, blocks.SaveTable) and save.name == "table7_setting_a"
    assert list(save.frame.columns) == ["classifiers", "AUROC (ours)", "AUROC (paper)", "AUPRC (ours)", "AUPRC (paper)",
                                        "baseline AUPRC", "training rows"]
    rows = page.rows("setting_a")
    panel = rows[(rows["dataset"] == "cervical_cancer") & rows["classifier"].isin(CLASSIFIERS)]
    assert np.isclose(save.frame.loc["cervical_cancer", "AUROC (ours)"], panel["auroc"].mean())
    assert text.markdown.startswith("**Table 7 (Setting A columns).** ") and "profile `smoke`" in text.markdown


def test_per_classifier_records_scorecard_and_glue(page):
    out = setting_a.classifiers(page)
    assert [type(b) for b in out] == [blocks.SaveTable, blocks.ShowTable, blocks.Scorecard, blocks.Glue]
    assert out[0].name == "setting_a_per_classifier"
    assert list(out[0].frame.index) == list(CLASSIFIERS)
    full = {c.dataset for c in page.cells["setting_a"] if c.subsample is None}
    assert {r["row"] for r in out[2].rows if r["table"] == "setting_a"} == set(CLASSIFIERS)
    assert {r["column"] for r in out[2].rows if r["table"] == "setting_a"} == full
    assert out[3].name == "sa_det_gap" and float(out[3].text) >= 0
