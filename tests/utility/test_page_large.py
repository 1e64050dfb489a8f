"""pategan_audit.utility.page.large: the archived `large` profile beside the paper and this page."""
import pandas as pd

from pategan_audit.archive import Archive
from pategan_audit.pages import blocks
from pategan_audit.utility.page import large

from .conftest import fake_rows


def _archive(page):
    cells = [c for c in page.cells["main"] + page.cells["setting_a"] if c.dataset == "cervical_cancer"]
    records = pd.DataFrame([row for c in cells for row in fake_rows(c)])
    return Archive(name="utility_large", records=records, meta={"profile": "large", "source_hash": "x"})


def test_large_profile_blocks(page):
    out = large.large_profile(page, _archive(page))
    names = [b.name for b in out if isinstance(b, (blocks.SaveTable, blocks.Figure))]
    assert names == ["table4_large", "table4_large_cervical_cancer", "table4_large_training", "table7_large"]
    assert out[2].markdown.startswith("**Table 4, `large` profile.**")
    training = large.training(_archive(page).records)
    assert set(training.columns) == {"teachers", "iterations", "fit_seconds_per_model", "single_class_tables", "tables"}
    assert training["single_class_tables"].str.endswith("%").all()


def test_table4_keeps_the_archives_rows_and_the_pages_column_order(page):
    t4 = large.table4(_archive(page).records, implementations=("corrected", "original"))
    assert list(t4.index) == ["cervical_cancer"] and list(t4.columns) == ["corrected", "original"]


def test_missing_archive_says_how_to_make_it(page, monkeypatch):
    import pategan_audit.archive

    monkeypatch.setattr(pategan_audit.archive, "read_archive", lambda name, **kw: None)
    (text,) = large.large_profile(page)
    assert "python -m pategan_audit.archive utility_large" in text.markdown


def test_the_tables_archive_adds_its_rows_and_its_caption(page):
    """utility_tables_large's datasets join Table 4 (in Table 4's row order) and its caption is shown."""
    first = _archive(page)
    credit = Archive(name="utility_tables_large", records=first.records.assign(dataset="credit"),
                     meta={"profile": "large", "source_hash": "y", "runs": "3 x 3 on Credit"})
    out = large.large_profile(page, [first, credit])
    names = [b.name for b in out if isinstance(b, (blocks.SaveTable, blocks.Figure))]
    assert names[:3] == ["table4_large", "table4_large_credit", "table4_large_cervical_cancer"]
    assert "utility_tables_large" in out[2].markdown and "SAMME.R" in out[2].markdown
    assert list(large.table4(pd.concat([first.records, credit.records]), implementations=page.implementations).index) \
        == ["credit", "cervical_cancer"]
    (text,) = large.large_profile(page, [credit])  # the tables archive alone does not stand for Table 4
    assert "utility_large" in text.markdown
