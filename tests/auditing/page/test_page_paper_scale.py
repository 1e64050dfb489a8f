"""pategan_audit.pages.auditing.paper_scale: the archived audits at the paper's scale, read back."""
import pandas as pd
import pytest

from pategan_audit.auditing import verdicts
from pategan_audit.pages.auditing import paper_scale
from pategan_audit.pages.blocks import SaveFigure, SaveTable, ShowFigure, ShowTable, Text

from .conftest import record


def large_records() -> pd.DataFrame:
    rows = [record(a, i, c, m, fp=0 if i != "updated" else 1, fn=0, n=4, archive=f"audit_{a}_large", archive_complete=True)
            for a in ("querybased", "groundhog") for i in ("original", "updated") for c in ("paper", "fixed_size", "controlled")
            for m in ("clopper_pearson", "bayesian")]
    rows += [record("querybased", "corrected", c, m, fp=2, fn=2, n=4, archive="audit_corrected_large", archive_complete=True)
             for c in ("paper", "fixed_size", "controlled") for m in ("clopper_pearson", "bayesian")]
    return pd.DataFrame(rows)


@pytest.fixture
def archived(monkeypatch):
    monkeypatch.setattr(verdicts, "paper_scale_records", lambda directory=None: large_records())
    lines = pd.DataFrame({"paper": [4.68, 0.0], "controlled": [float("nan"), 0.0]},
                         index=pd.MultiIndex.from_tuples([("querybased", "constant"), ("querybased", "ignore")]))
    monkeypatch.setattr(verdicts, "calibration_lines", lambda directory=None: lines)


def test_figure5_large_reads_the_archives(page, archived):
    out = paper_scale.figure5_large(page, archives={"audit_querybased_large": None})
    assert [type(b) for b in out] == [SaveFigure, Text, SaveTable, ShowTable, SaveTable, ShowTable, Text, ShowFigure]
    assert "Bars: ours; ticks: the paper." in out[1].markdown
    assert list(out[3].frame.index) == ["audit_querybased_large"]  # the provenance of each archive read
    assert list(out[5].frame.columns) == paper_scale.FIGURE5_COLUMNS
    assert page.large_floor["floor"] >= 0 and page.fig5_scale is out[4].frame
    assert "groundhog/synthcity" in out[6].markdown and "Verdicts: {" in out[6].markdown
    assert paper_scale.large_ceiling(page.large, "clopper_pearson") < paper_scale.large_ceiling(page.large, "bayesian")


def test_figure12_and_channels_at_the_papers_scale(page, archived):
    paper_scale.figure5_large(page, archives={})
    save, text, table, show = paper_scale.figure12_large(page)
    assert save.name == "figure12_large" and "Null floor:" in text.markdown
    assert list(table.frame.columns) == paper_scale.FIGURE12_COLUMNS
    channels, lines, shown = paper_scale.channels_large(page)
    assert list(channels.frame.columns) == paper_scale.CHANNEL_COLUMNS and lines.name == "calibration_lines_large"
    # two decimals everywhere, a dash where a generator was not run in that channel
    assert shown.frame.loc[("querybased", "ignore")].tolist() == ["0.00", "0.00"]
    assert shown.frame.loc[("querybased", "constant"), "controlled"] == "—"


def test_without_archives_the_page_says_how_to_make_them(page, monkeypatch):
    monkeypatch.setattr(verdicts, "paper_scale_records", lambda directory=None: pd.DataFrame())
    (text,) = paper_scale.figure5_large(page)
    assert "make archives" in text.markdown
    assert paper_scale.figure12_large(page) == [] and paper_scale.channels_large(page) == []


def test_missing_cells():
    table = pd.DataFrame(index=pd.MultiIndex.from_tuples([("querybased", "original")]))
    missing = paper_scale.missing_cells(table)
    assert "querybased/original" not in missing and "groundhog/original" in missing and len(missing) == 11
