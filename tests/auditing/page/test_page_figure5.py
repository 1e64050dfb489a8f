"""pategan_audit.pages.auditing.figure5: Figures 5 and 12 at the page's profile."""
import pandas as pd

from pategan_audit import reference
from pategan_audit.pages.auditing import figure5
from pategan_audit.pages.blocks import SaveFigure, SaveTable, ShowFigure, Text

from .conftest import IMPLEMENTATIONS


def test_paper_values_per_attack():
    ref = figure5.paper_by_attack()
    assert set(ref) == {"querybased", "groundhog"} and round(ref["querybased"]["updated"], 2) == 2.18


def test_figure5_runs_the_audit_and_keeps_its_records(page, monkeypatch):
    records = page.records
    page.records = None
    seen = {}

    def fake_run(settings, profile, **kwargs):
        seen["settings"], seen["kwargs"] = settings, kwargs
        return records

    monkeypatch.setattr(figure5, "run_settings", fake_run)
    out = figure5.figure5(page)
    assert page.records is records and "main audit (3 channels)" in page.timings
    assert len(seen["settings"]) == 2 * len(IMPLEMENTATIONS) * 3 and seen["kwargs"]["options"].progress is False
    assert [type(b) for b in out] == [SaveTable, SaveFigure, Text, ShowFigure]
    assert out[2].markdown.startswith("Figure 5, paper channel (profile `smoke`;")


def test_figure5_table_beside_the_paper(page):
    save, show = figure5.figure5_table(page)
    table = save.frame
    assert set(table.index) == {(a, i) for a in ("querybased", "groundhog") for i in IMPLEMENTATIONS}
    cp = figure5.paper_channel(page.records, "clopper_pearson")
    perfect = (cp["test_FP"] + cp["test_FN"] == 0) | (cp["test_TN"] + cp["test_TP"] == 0)
    pd.testing.assert_series_equal(table["perfect"], perfect, check_names=False)
    assert round(table.loc[("querybased", "updated"), "ε_emp CP (paper)"], 2) == 2.18
    assert pd.isna(table.loc[("querybased", "corrected"), "AUC (paper)"])  # ours, not in the paper
    assert show.frame is table
    assert set(reference.audit_reference()["implementation"]) <= set(IMPLEMENTATIONS)


def test_figure12_and_null_floor(page):
    save, text, show = figure5.figure12(page)
    assert save.name == "figure12" and text.markdown.startswith("Figure 12, paper channel")
    (note,) = figure5.null_floor(page)
    assert note.markdown.startswith("Null floor at 2 test outputs per world") and f"{page.ceiling_bayes:.2f}" in note.markdown
