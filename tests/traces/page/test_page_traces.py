"""pategan_audit.pages.traces: Figures 2, 3, 4 and 11, their tables, glue values and scorecard rows."""
import pandas as pd

from pategan_audit.pages.traces import losses, moments, scorecard, seen, settings
from pategan_audit.pages.blocks import Glue, Print, SaveFigure, ShowFigure, Text
from pategan_audit.traces import records as trace_records
from pategan_audit.traces.profiles import LOSS_IMPLEMENTATIONS, MOMENT_ACCOUNTANTS

from .conftest import make_page


def test_settings_prints_the_run_and_lists_the_knobs(page):
    line, save, show = settings(page)
    assert isinstance(line, Print) and line.text == "profile=smoke, eps=1.0, seed=0"
    assert save.name == "settings" and save.frame.loc["loss_seeds", "value"] == "[0, 1]"


def test_figures_are_written_then_shown_then_captioned(page):
    for builder, name in ((seen.figure2, "figure2"), (losses.figure3, "figure3"), (losses.figure11, "figure11")):
        save, show, caption = builder(page)
        assert isinstance(save, SaveFigure) and save.name == name and isinstance(show, ShowFigure)
        assert caption.markdown.startswith(f"**Figure {name[6:]}.**") and "(profile `smoke`;" in caption.markdown
    out = moments.figure4(page)
    assert out[0] == Glue("fig4_iters", page.profile.moment_iterations)
    assert [b.name for b in out if isinstance(b, SaveFigure)] == ["figure4_lambda_1", "figure4_lambda_0.001"]
    assert [type(b) for b in out[1:4]] == [SaveFigure, ShowFigure, Text]


def test_seen_table_and_values(page):
    save, show = seen.seen_table(page)
    assert list(save.frame.columns) == ["only", "shared", "iterations", "paper only", "paper shared"]
    values = {b.name: b.text for b in seen.seen_values(page)}
    assert values == {"upd_shared": 137, "sc_iters": 7, "sc_min_seen": 100, "sc_max_seen": 140, "orig_min_seen": 100,
                      "orig_iters": 7}


def test_iterations_and_levels(page):
    save, show = losses.iterations_table(page)
    table = save.frame
    assert table["iterations (ours)"].tolist() == [4] * len(LOSS_IMPLEMENTATIONS)  # seed 0's run only
    assert str(table["iterations (paper)"].dtype) == "Int64" and not table["hit cap (ours)"].any()
    levels = losses.levels(page)
    assert list(levels.index) == list(LOSS_IMPLEMENTATIONS) and levels.shape[1] == 6
    assert (levels["own, first"] == levels["own, first"]).all()


def test_first_moment_values_and_final_table(page):
    e1 = moments.first_moment(page)
    assert list(e1.index) == list(MOMENT_ACCOUNTANTS)
    assert f"e(1) at iteration {page.profile.moment_iterations}, λ = 1" in e1.columns  # pivot order: λ ascending
    glued = {b.name: b.text for b in moments.moment_values(page)}
    assert glued["e1_updated"] == "2,000" and glued["ratio_bs"] == "2.0"  # borealis 4,000 / updated 2,000
    save, _ = moments.final_table(page)
    assert "model's own accountant" in save.frame.columns and "model_eps_hat" not in save.frame.columns
    assert save.frame.index.names == ["lam", "accountant"]


def test_scorecard_only_where_comparable(page):
    rows = scorecard.scorecard_rows(page)
    tables = pd.Series([r["table"] for r in rows])
    assert set(tables) == {"figure2", "figure3"}  # smoke: Figure 4 is not run for 1,000 iterations
    assert {r["row"] for r in rows if r["table"] == "figure2"} == {"updated", "borealis", "smartnoise", "synthcity"}
    card, line = scorecard.scorecard_entries(page)
    assert line.text == f"{len(rows)} scorecard entries written"


def test_notebook_definition_changes_the_others_line(tmp_path):
    paper, notebook = make_page(tmp_path), make_page(tmp_path, loss_definition="notebook")
    assert "(notebook definition, orange)" in losses.figure3(notebook)[2].markdown
    assert not losses.levels(paper)["others (paper), first"].equals(losses.levels(paper)["others (notebook), first"])


def test_archive_records_hold_the_scorecard_rows_and_every_runs_iterations(page):
    results = page.results
    results.settings["seed"] = 0
    rec = trace_records.archive_records(results, page.profile)
    card = rec[rec.part == "scorecard"]
    assert card[["table", "row", "column", "ours"]].to_dict("records") == [
        {k: r[k] for k in ("table", "row", "column", "ours")} for r in scorecard.scorecard_rows(page)]
    its = rec[rec.part == "iterations"].set_index(["row", "column"])["ours"]
    # fake runs: seed 0 records iterations 1..4, seed 1 records 1..3 (smoke cap 10: both spent the budget)
    assert its[("updated", "seed 0")] == 4 and its[("updated", "seed 1")] == 3 and len(its) == 2 * len(LOSS_IMPLEMENTATIONS)
    assert set(rec[rec.part == "iterations"]["runs"]) == {"budget spent"}
    fig3 = card[card.table == "figure3"]
    assert len(fig3) and fig3["runs"].str.contains("its 2 runs took 3-4").all()


def test_archived_iterations_spread_beside_the_papers_run(page):
    from pategan_audit.archive import Archive
    from pategan_audit.pages.blocks import SaveTable

    page.results.settings["seed"] = 0
    records = trace_records.archive_records(page.results, page.profile)
    save, show, caption = losses.archived_iterations(Archive("traces_paper", records, {"profile": "smoke"}))
    assert isinstance(save, SaveTable) and save.name == "figure3_iterations_archived"
    got = save.frame
    assert list(got.index) == list(LOSS_IMPLEMENTATIONS)
    assert got.loc["updated", ["runs", "stopped by the budget", "fewest", "most"]].tolist() == [2, 2, 3, 4]
    assert got.loc["updated", "paper (one run)"] == "158" and got.loc["corrected", "paper (one run)"] == "—"
    assert "traces_paper" in caption.markdown


def test_archived_iterations_without_the_archive_says_how_to_compute_it(monkeypatch):
    import pategan_audit.archive as A

    monkeypatch.setattr(A, "read_archive", lambda name, **kw: None)
    (note,) = losses.archived_iterations()
    assert "python -m pategan_audit.archive traces_paper" in note.markdown


def test_figure3_compares_capped_runs_only_at_the_authors_cap(page, monkeypatch):
    from pategan_audit.traces.profiles import TraceProfile

    capped = TraceProfile("capped", seen_max_iter=4, loss_max_iter=4, loss_runs=2, moment_iterations=40)
    fig3 = lambda: {r["row"] for r in trace_records.rows_of(page.results, capped, 0) if r["table"] == "figure3"}  # noqa: E731
    assert fig3() == set()  # seed 0's fake runs reach iteration 4 = this cap: not comparable below the authors' cap
    monkeypatch.setattr(trace_records, "AUTHORS_CAP", 4)
    assert fig3() == {"updated", "synthcity", "borealis", "smartnoise"}  # at the authors' cap: all comparable
