"""The book's opening summary (pategan_audit.pages.summary): counts per section from small cards
whose answers are known, the claims' verdicts moving with their numbers, the bookhook's placeholder."""
import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from pategan_audit import reference as R
from pategan_audit.pages import summary as S


def _row(table, row, column, verdict, *, kind="measured", paper=0.5, ours=0.5, tol=0.05, status=""):
    return dict(table=table, row=row, column=column, kind=kind, alias_of="", paper=paper, ours=ours,
                difference=ours - paper, tolerance=tol, verdict=verdict, status=status, evidence=np.nan, output="",
                trained=None, explanation="", rule="", interval_lo=np.nan, interval_hi=np.nan, profile="large",
                runs="", provenance="printed")


def _card(rows):
    return pd.DataFrame(rows)


def test_every_scorecard_table_has_a_section():
    from pategan_audit.pages.scorecard import paper_numbers

    tables = set(paper_numbers()["table"])
    assert {t for t in tables if t not in {x for v in S.SECTIONS.values() for x in v}} == set()
    with pytest.raises(ValueError, match="SECTIONS"):
        S.section_of("table99")


def test_section_counts_count_measured_rows_once_by_verdict_and_status():
    card = _card([
        _row("table4", "cervical_cancer", "original", "reproduced"),
        _row("table4", "cervical_cancer", "updated", "differs", status="partly explained: a cause"),
        _row("table4", "credit", "turing", "differs", status="unexplained: tried x"),
        _row("table12", "cervical_cancer", "D", "reproduced", kind="alias"),  # not counted
        _row("figure5", "borealis", "querybased", "uninformative"),
        _row("figure2", "updated", "t1", "reproduced", kind="fact"),  # not counted
        _row("table2", "original", "pate", "reproduced", kind="fact"),
        _row("figure3", "updated", "x", "not yet run", ours=np.nan),
    ])
    counts = S.section_counts(card)
    assert counts.loc["utility", "measured"] == 3 and counts.loc["utility", "reproduced"] == 1
    assert counts.loc["utility", "partly explained"] == 1 and counts.loc["utility", "unexplained"] == 1
    assert counts.loc["auditing", "uninformative"] == 1
    assert counts.loc["training traces", "not yet run"] == 1 and counts.loc["code review", "measured"] == 0
    assert counts.loc["all"].tolist() == counts.drop(index="all").sum().tolist()
    from pategan_audit.pages.scorecard import headline

    assert counts.loc["all", "measured"] == headline(card)["measured numbers"] == 5
    per = S.artefact_counts(card)
    assert per.loc["table12", "alias"] == 1 and per.loc["table12", "measured"] == 0
    assert per.loc["figure2", "fact"] == 1


def _t4_card(ours: dict[tuple[str, str], float], tol=0.02):
    ref = R.table4()
    rows = []
    for r, c, v in zip(ref["row"], ref["column"], ref["value"]):
        if c == "paper49":
            continue
        o = ours.get((r, c), 0.5)
        rows.append(_row("table4", r, c, "differs", paper=v, ours=o, tol=tol, status="unexplained: tried"))
    return _card(rows)


def test_utility_claim_counts_cells_reaching_49_and_moves_with_them():
    v49 = R.table4().query("column == 'paper49'").set_index("row")["value"]
    none = S.utility_claim(_t4_card({}))
    assert none["hits"] == 0 and none["of"] == 24 and none["verdict"] == "confirmed"
    one = S.utility_claim(_t4_card({("credit", "borealis"): v49["credit"] + 0.01}))
    assert one["hits"] == 1 and one["verdict"] == "qualified" and "borealis on credit" in one["numbers"]
    within = S.utility_claim(_t4_card({("credit", "borealis"): v49["credit"] - 0.01}))
    assert within["hits"] == 0 and "1 more lie below it but within their tolerance, 0 of them" in within["numbers"]
    wide = S.utility_claim(_t4_card({("credit", "borealis"): v49["credit"] - 0.01}, tol=0.5))
    assert "of them with a tolerance that also admits chance" in wide["numbers"]
    assert "; 0 more lie below it" in S.utility_claim(_t4_card({("credit", "borealis"): v49["credit"] - 0.03}))["numbers"]


def test_leakage_claim_is_qualified_when_closing_the_channels_removes_the_leak():
    impls = list(R.IMPLEMENTATIONS)
    card = _card([_row("figure5", i, "querybased", "reproduced", ours=3.0) for i in impls])
    assert S.leakage_claim(card)["verdict"] == "confirmed"
    idx = pd.MultiIndex.from_tuples([("querybased", i) for i in impls], names=["attack", "implementation"])
    channels = pd.DataFrame({"ε_emp controlled": [2.0] + [0.0] * 5, "size channel": [1.0] * 6,
                             "bounds channel": [0.0] * 6}, index=idx)
    got = S.leakage_claim(card, channels)
    assert got["verdict"] == "qualified" and "1 of 6 still exceed" in got["numbers"]
    low = _card([_row("figure5", i, "querybased", "reproduced", ours=0.2) for i in impls])
    assert S.leakage_claim(low)["verdict"] == "contradicted"


def test_violations_claim_counts_observed_ticks():
    paper = R.table2()
    observed = paper.rename(columns={"tick": "observed"})[["implementation", "category", "observed"]]
    assert S.violations_claim(observed)["verdict"] == "confirmed"
    assert S.violations_claim(observed)["hits"] == int(paper["tick"].sum())
    missing = observed.copy()
    first = missing.index[missing["observed"]][0]
    missing.loc[first, "observed"] = False
    got = S.violations_claim(missing)
    assert got["verdict"] == "qualified" and got["hits"] == int(paper["tick"].sum()) - 1
    assert "not observed" in got["numbers"]
    assert S.violations_claim(None)["verdict"] == "not available"


def test_summary_markdown_and_figures(tmp_path):
    card = _t4_card({})
    claims = S.claims_table(card)
    text = S.summary_markdown(card, claims, S.beyond_paper(), figure="_generated/x.png")
    assert text.startswith("**At the archived (largest) scale, 0 of the paper's 24 measured numbers reproduced")
    assert "| utility | 24 |" in text and "![" in text and "not available" in text
    path = S.write_summary(tmp_path / "sub" / "summary.md", text)
    assert path.read_text() == text
    assert S.plot_sections(S.section_counts(card)) is not None
    assert S.plot_artefacts(S.artefact_counts(card)) is not None


def test_bookhook_places_a_placeholder_then_the_written_summary(tmp_path):
    from pategan_audit.pages.bookhook import place_summary

    repo, book = tmp_path, tmp_path / "book"
    place_summary(repo, book, placeholder=True)
    assert (book / "_generated" / "summary.md").read_text() == S.PLACEHOLDER
    (repo / "results" / "scorecard").mkdir(parents=True)
    (repo / "results" / "scorecard" / "summary.md").write_text("computed\n")
    place_summary(repo, book, placeholder=False)
    assert (book / "_generated" / "summary.md").read_text() == "computed\n"
    place_summary(repo, book, placeholder=True)  # a placeholder never overwrites a computed summary
    assert (book / "_generated" / "summary.md").read_text() == "computed\n"
