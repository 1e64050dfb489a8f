"""pategan_audit.pages.auditing.channels and .diagnostics: the side channels and what explains them."""
import pandas as pd

from pategan_audit.pages.auditing import channels, diagnostics
from pategan_audit.pages.blocks import SaveFigure, SaveTable, ShowFigure, ShowTable, Text

CATS = pd.DataFrame({"out": [[0.0], [0.0, 1.0]], "in": [[0.0, 1.0], [0.0, 1.0]]}, index=["A", "B"])


def test_with_notes_marks_synthcity_only_where_its_categories_leak():
    sentences = ["**synthcity**, querybased (...)", "**updated**, querybased (...)"]
    assert channels.with_notes(sentences, synthcity_leak=False) == "* **synthcity**, querybased (...)\n* **updated**, querybased (...)"
    noted = channels.with_notes(sentences, synthcity_leak=True).splitlines()
    assert noted[0].endswith(channels.SYNTHCITY_NOTE) and not noted[1].endswith(channels.SYNTHCITY_NOTE)


def test_channels_blocks(page, monkeypatch):
    monkeypatch.setattr(channels, "encoder_categories", lambda setting, **kw: CATS)
    out = channels.channels(page)
    assert [type(b) for b in out] == [SaveFigure, Text, SaveTable, SaveTable, ShowTable, Text, Text, ShowFigure]
    assert [b.name for b in out if isinstance(b, SaveTable)] == ["channels_table", "channels_table_bayesian"]
    assert channels.SYNTHCITY_NOTE in out[5].markdown and out[6].markdown.startswith("**The same with the Bayesian bound**")


def test_differing_categories_and_note():
    rows = diagnostics.differing_categories("querybased", CATS)
    assert rows == [{"attack": "querybased", "column": "A", "categories in D′": 1, "categories in D": 2, "only in D": "1"}]
    assert diagnostics.differing_categories("groundhog", None) == []
    table = pd.DataFrame(rows, columns=diagnostics.CATEGORY_COLUMNS)
    assert "**differ between the worlds** in 1 column(s) (querybased)" in diagnostics.categories_note(table)
    assert diagnostics.categories_note(table.iloc[:0]).startswith("synthcity's categories are the same")


def test_synthcity_categories_only_when_synthcity_is_audited(tmp_path, monkeypatch):
    from .conftest import make_page

    monkeypatch.setattr(diagnostics, "encoder_categories", lambda setting, **kw: CATS)
    page = make_page(tmp_path)
    save, show, note = diagnostics.synthcity_categories(page)
    assert save.index is False and list(save.frame["attack"]) == ["querybased", "groundhog"]
    assert diagnostics.synthcity_categories(make_page(tmp_path, implementations=("updated",))) == []


def test_released_rows_fill_the_pages_still_rows(page, monkeypatch):
    monkeypatch.setattr(diagnostics, "released_rows_move", lambda setting: setting.implementation == "updated")
    save, show = diagnostics.released_rows(page)
    assert list(save.frame.columns) == ["rows change by 3 iterations"]  # smoke: this profile's length only
    assert page.still["updated"] is False and page.still["original"] is True
    assert "synthcity" not in page.still  # 1 iteration on the smoke profile: nothing to compare
    assert "diagnostics" in page.timings


def test_rows_still_checks_a_preset_once(page, monkeypatch):
    from pategan_audit.auditing import AuditSetting

    calls = []
    monkeypatch.setattr(diagnostics, "released_rows_move", lambda setting: calls.append(setting) or False)
    setting = AuditSetting("querybased", "borealis", channel="fixed_size", iterations=3)
    assert diagnostics.rows_still(page, setting) and diagnostics.rows_still(page, setting)
    assert len(calls) == 1
