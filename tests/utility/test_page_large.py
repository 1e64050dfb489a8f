"""pategan_audit.pages.utility.large: the archived `large` profile beside the paper and this page."""
import pandas as pd
import pytest

from pategan_audit.archive import Archive
from pategan_audit.pages import blocks
from pategan_audit.pages.utility import large

from .conftest import fake_rows


def _archive(page):
    cells = [c for c in page.cells["main"] + page.cells["setting_a"] if c.dataset == "cervical_cancer"]
    records = pd.DataFrame([row for c in cells for row in fake_rows(c)])
    return Archive(name="utility_large", records=records, meta={"profile": "large", "source_hash": "x"})


def test_large_profile_blocks(page):
    out = large.large_profile(page, _archive(page))
    names = [b.name for b in out if isinstance(b, (blocks.SaveTable, blocks.Figure))]
    assert names == ["table4_large", "table4_large_protocols", "table4_large_cervical_cancer", "table4_large_training",
                     "table7_large"]
    assert out[2].markdown.startswith("**Table 4, `large` profile.**")
    training = large.training(_archive(page).records)
    assert set(training.columns) == {"teachers", "iterations", "fit_seconds_per_model", "single_class_tables", "tables"}
    assert training["single_class_tables"].str.endswith("%").all()


def test_table4_keeps_the_archives_rows_and_the_pages_column_order(page):
    t4 = large.table4(_archive(page).records, implementations=("corrected", "original"))
    assert list(t4.index) == ["cervical_cancer"] and list(t4.columns) == ["corrected", "original"]


def test_missing_archive_says_how_to_make_it(page, monkeypatch):
    import pategan_audit.utility.protocols

    monkeypatch.setattr(pategan_audit.utility.protocols, "read_archive", lambda name, **kw: None)
    (text,) = large.large_profile(page)
    assert "python -m pategan_audit.archive utility_large" in text.markdown


def test_the_tables_archive_adds_its_rows_and_its_caption(page):
    """utility_tables_large's datasets join Table 4 (in Table 4's row order) and its caption is shown."""
    first = _archive(page)
    credit = Archive(name="utility_tables_large", records=first.records.assign(dataset="credit", adaboost="SAMME.R"),
                     meta={"profile": "large", "source_hash": "y", "runs": "3 x 3 on Credit"})
    out = large.large_profile(page, [first, credit])
    names = [b.name for b in out if isinstance(b, (blocks.SaveTable, blocks.Figure))]
    assert names[:4] == ["table4_large", "table4_large_protocols", "table4_large_credit", "table4_large_cervical_cancer"]
    assert "utility_tables_large" in out[2].markdown  # the caption names every archive used
    said = out[3].frame.reset_index().set_index("dataset")["protocol"]  # and each cell says its protocol
    assert said["credit"].str.contains("AdaBoost SAMME.R", regex=False).all()
    assert said["credit"].str.endswith("(utility_tables_large)").all()
    assert said["cervical_cancer"].str.endswith("AdaBoost SAMME (utility_large)").all()
    assert list(large.table4(pd.concat([first.records, credit.records]), implementations=page.implementations).index) \
        == ["credit", "cervical_cancer"]
    (text,) = large.large_profile(page, [credit])  # the tables archive alone does not stand for Table 4
    assert "utility_large" in text.markdown


def test_a_best25_cell_supersedes_the_older_one_on_the_page_and_each_cell_names_its_protocol(page):
    """utility_best25_large's cells replace utility_large's of the same dataset and preset (one value per
    cell, never two); a cell it lacks keeps the older one; the protocol table names each cell's
    protocol and archive, and the caption every archive used."""
    first = _archive(page)
    cervical = first.records[first.records["implementation"] != "real"]
    preset = cervical["implementation"].iloc[0]
    better = cervical[cervical["implementation"] == preset].assign(auroc=0.99, n_models=5, n_tables=5,
                                                                   max_iter=10000, adaboost="SAMME.R")
    best25 = Archive(name="utility_best25_large", records=better, meta={"profile": "large", "source_hash": "z"})
    out = large.large_profile(page, [first, best25])
    t4 = out[0].frame  # the saved Table 4 (paper / ours / difference per preset)
    assert t4.loc["cervical_cancer", (preset, "ours")] == pytest.approx(0.99)
    protocols = out[3].frame.reset_index()
    assert set(protocols["archive"]) == {"utility_large", "utility_best25_large"}
    row = protocols[protocols["archive"] == "utility_best25_large"].iloc[0]
    assert row["cells"] == preset and row["protocol"].startswith("best of 5 × 5 = 25, 10,000-iteration cap")
    assert not protocols.duplicated(["dataset", "cells"]).any()
    assert all(preset not in c.split(", ") for c in protocols.loc[protocols["archive"] == "utility_large", "cells"])
    assert "`utility_large`, `utility_best25_large`" in out[2].markdown
