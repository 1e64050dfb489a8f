"""pategan_audit.pages.auditing: vote aggregators, verdicts, scorecard and compute."""
import pandas as pd

from pategan_audit.pages.auditing import aggregators, compute, scorecard, verdicts
from pategan_audit.pages.blocks import Print, Scorecard, Text

from .conftest import IMPLEMENTATIONS, make_page


def test_updated_note_and_queries(page):
    table = pd.DataFrame({"ε per query, exact (this pair)": [0.5], "ε per query, measured (lower CI)": [0.4],
                          "accountant's 2λ": [0.002], "refuted by measurement alone": [True]}, index=["updated"])
    note = aggregators.updated_note(table, 10**4)
    assert note.startswith("10,000 queries per vote count") and "the accountant charges 0.002;" in note
    assert "refuted by the measurement alone: True." in note
    assert aggregators.queries(page) == 10**4


def test_verdicts_need_the_archives(page):
    assert verdicts.implementation_verdicts(page) == []


def test_scorecard_rows_are_the_papers_cells_with_the_ceiling(page):
    rows = scorecard.scorecard_rows(page.records, page.profile)
    assert {(r["column"], r["row"]) for r in rows} == {(a, i) for a in ("querybased", "groundhog")
                                                       for i in IMPLEMENTATIONS if i != "corrected"}
    assert {r["ceiling"] for r in rows} == {page.ceiling_cp}
    assert scorecard.runs_of(page.profile, "groundhog", "updated") == "5 shadow models per world, ≤ 2 iterations"
    assert scorecard.runs_of(page.profile, "querybased", "synthcity") == "5 shadow models per world, 1 iterations"
    card, text = scorecard.scorecard_entries(page)
    assert isinstance(card, Scorecard) and isinstance(text, Text) and text.markdown.startswith("Audit results")


def test_compute_counts_each_run_once(tmp_path):
    page = make_page(tmp_path, run_ablation=False)
    runs = compute.unique_runs(page)
    assert runs["run_id"].is_unique and len(runs) == page.records["run_id"].nunique()
    cost = compute.core_seconds(runs)
    assert cost.loc["original", "groundhog"] == 3.0  # paper = fixed_size: one run for two settings
    page.timings["calibration"] = 1.0
    *_, wall, shown, line = compute.compute(page)
    assert list(wall.frame.index) == ["calibration", "page total"]
    assert isinstance(line, Print) and line.text.endswith(f"in {len(runs)} distinct settings ({10 * len(runs)} models)")
