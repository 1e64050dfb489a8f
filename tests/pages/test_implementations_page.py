"""pategan_audit.pages.implementations: the builders of the "Implementations" page. Tables 2 and 3
are checked on fabricated inputs where they can be; only the describe test fits models (two
presets, one iteration each, on Cervical)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit import accounting, reference
from pategan_audit.pages import implementations as page


def test_table3_datasets_follow_the_profile():
    assert page.table3_datasets("smoke") == [("cervical_cancer", 5)]
    assert page.table3_datasets("book") == [("cervical_cancer", 5), ("epileptic_seizure", 9)]


def test_table3_generated_merges_cells_that_differ(monkeypatch):
    import pategan_audit.implementations as implementations

    monkeypatch.setattr(implementations, "PRESETS", ("updated", "corrected"))
    described = {("cervical_cancer", "updated"): {"Noise dimension": 29, "Batch size": 64},
                 ("epileptic_seizure", "updated"): {"Noise dimension": 179, "Batch size": 64},
                 ("cervical_cancer", "corrected"): {"Noise dimension": 29, "Batch size": "64"},
                 ("epileptic_seizure", "corrected"): {"Noise dimension": 29, "Batch size": 64}}
    table = page.table3_generated(described, [("cervical_cancer", 5), ("epileptic_seizure", 9)])
    assert list(table.columns) == ["updated", "corrected"]
    assert list(table.index) == ["Noise dimension", "Batch size"]
    assert table.loc["Noise dimension", "updated"] == "29 / 179"
    assert table.loc["Noise dimension", "corrected"] == 29  # equal cells keep the first value as it is
    assert table.loc["Batch size", "corrected"] == "64"  # compared as text
    smoke = page.table3_generated(described, [("cervical_cancer", 5)])
    assert smoke.loc["Noise dimension", "updated"] == 29


def test_describe_presets_reads_the_fitted_models(monkeypatch):
    import pategan_audit.implementations as implementations

    monkeypatch.setattr(implementations, "PRESETS", ("updated", "corrected"))
    described = page.describe_presets([("cervical_cancer", 5)], epsilon=1.0, seed=0)
    assert set(described) == {("cervical_cancer", "updated"), ("cervical_cancer", "corrected")}
    updated = described[("cervical_cancer", "updated")]
    assert updated["Teacher layers"] == "LogisticRegression" and updated["Teacher iterations"] == "1 fit"
    for name in ("updated", "corrected"):
        assert described[("cervical_cancer", name)]["Max iterations"] == implementations.create(name).config.max_iter
    assert described[("cervical_cancer", "corrected")]["Teacher iterations"] != "1 fit"


def test_table3_paper_flagged_marks_the_cells_the_code_disagrees_with():
    flagged = page.table3_paper_flagged()
    ref3 = reference.table3()
    assert set(flagged.columns) == set(ref3["column"]) and set(flagged.index) == set(ref3["parameter"])
    marked = flagged.stack().astype(str)
    marked = marked[marked.str.startswith("⚠ ")]
    assert len(marked) > 0 and marked.str.contains(r"\(code: ").all()


def test_switches_count_19_violations_and_5_bugs_as_the_paper():
    switches = page.violation_switches()
    ticked = switches[switches["tick"]]
    assert (ticked["kind"] == "privacy").sum() == 19 and (ticked["kind"] == "bug").sum() == 5
    assert (switches["tick"] == (switches["as benchmarked"] | switches["as released"])).all()
    text = page.violation_count(switches)
    assert text.startswith("**Count from the switches: 19 privacy violations + 5 other bugs**")
    assert "agrees with the paper's ticks: **True**" in text
    table = page.switches_table(switches)
    assert "tick" not in table.columns and table.index.names == ["implementation", "id"]


def test_violation_count_on_fabricated_switches():
    switches = pd.DataFrame([
        {"implementation": "updated", "id": "V1", "column": "Labels Distribution", "kind": "privacy", "tick": True},
        {"implementation": "updated", "id": "V2", "column": "Teachers", "kind": "privacy", "tick": True},
        {"implementation": "updated", "id": "B1", "column": "Other", "kind": "bug", "tick": True},
        {"implementation": "updated", "id": "B2", "column": "Other", "kind": "bug", "tick": False},
    ])
    text = page.violation_count(switches)
    assert "2 privacy violations + 1 other bugs" in text and "which would give 1 + 2" in text
    assert "**False**" in text


def test_table2_generated_sorts_ids_and_lists_every_implementation():
    switches = pd.DataFrame([{"implementation": "updated", "column": "Teachers", "id": i} for i in ("V10", "V2", "B3", "V2")]
                            + [{"implementation": "borealis", "column": "Other", "id": "B1"}])
    table = page.table2_generated(switches)
    assert list(table.index) == list(reference.IMPLEMENTATIONS)
    assert table.loc["updated", "Teachers"] == "B3, V2, V10"
    assert table.loc["borealis", "Other"] == "B1" and table.loc["updated", "Other"] == ""
    assert table.loc["original"].eq("").all()


@pytest.mark.parametrize("lam", page.LAMBDAS)
def test_accountant_table(lam):
    table = page.accountant_table(lam, 5)
    assert table.index.names == ["n0", "n1", "l"] and set(table.index.get_level_values("l")) == {1, 2, 3}
    assert list(table.columns) == [*accounting.KINDS, "Thm 3 valid"]
    splits = table[list(accounting.KINDS)].dropna(how="all")  # the pivot keeps every (n0, n1) pair, n0 + n1 = 5 or not
    assert len(splits) == 6 * 3  # vote splits (n0, n1) of 5 teachers x 3 moments
    assert (splits.index.get_level_values("n0") + splits.index.get_level_values("n1") == 5).all()
    spread = page.largest_disagreement(table)
    assert spread == pytest.approx(0.0, abs=1e-12) if lam == 1e-3 else spread > 0.1


def test_largest_disagreement_on_a_fabricated_table():
    table = pd.DataFrame({kind: [1.0, np.nan] for kind in accounting.KINDS})
    table.iloc[0, 0], table.iloc[1, 1] = 4.0, 2.0
    assert page.largest_disagreement(table) == 3.0


def test_eps_hat_64_queries():
    table = page.eps_hat_64_queries()
    assert sorted(table.index) == ["borealis", "corrected", "smartnoise", "synthcity", "updated"]
    assert list(table.columns) == list(page.LAMBDAS)
    assert np.isfinite(table.to_numpy()).all()
    assert table.loc["synthcity", 1.0] < table.loc["corrected", 1.0] < table.loc["borealis", 1.0]


def test_gaussian_sigma():
    table = page.gaussian_sigma(1.0)
    assert list(table.index) == list(accounting.SIGMA_KINDS)
    assert table.loc["original", "delta as passed"] == 5 and table.loc["turing", "delta as passed"] == 1e-5
    assert ((table["P(flip)"] >= 0) & (table["P(flip)"] <= 0.5)).all()


def test_scorecard_rows_on_a_fabricated_table7():
    t7 = pd.DataFrame({"N (ours)": [858, 11500], "d (ours)": [29, 179], "imbalance (ours)": [0.06, 0.2]},
                      index=["cervical_cancer", "epileptic_seizure"])
    rows = page.scorecard_rows(t7)
    assert len(rows) == 6 and {r["column"] for r in rows} == {"N", "d", "imbalance"}
    assert rows[0] == {"table": "table7", "row": "cervical_cancer", "column": "N", "ours": 858.0,
                       "runs": "no training (bundled data)"}
    assert all(isinstance(r["ours"], float) for r in rows)


def test_table13_lists_each_printed_issue_with_its_address():
    from pategan_audit import reference

    t = page.table13()
    assert len(t) == len(reference.table13())
    assert (t["address"].str.match(r"https://github\.com/[^/]+/[^/]+/issues/\d+$")).all()
    assert "https://github.com/vanderschaarlab/synthcity/issues/275" in set(t["address"])
