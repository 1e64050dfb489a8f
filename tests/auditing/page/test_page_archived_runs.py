"""pategan_audit.pages.auditing.archived_runs: the paper-scale target selection and ablation read
back from their archives (run at smoke into a temp folder), and a clear note when missing."""
import pandas as pd
import pytest

from pategan_audit import archive, runner
from pategan_audit.pages.auditing import archived_runs
from pategan_audit.pages.blocks import SaveTable, ShowTable, Text


@pytest.fixture(scope="module")
def smoke_archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("arch")
    with runner.using(runner.RunOptions(cache_dir=str(d / "cache"))):
        for name in ("audit_targets_large", "audit_ablation_querybased_large"):
            archive.run_archive(name, profile="smoke", n_jobs=1, directory=d)
    return {name: archive.read_archive(name, directory=d)
            for name in ("audit_targets_large", "audit_ablation_querybased_large", "audit_ablation_groundhog_large")}


def test_missing_archives_name_the_command(smoke_archives):
    blocks = archived_runs.ablation_large(None, archives={**smoke_archives, "audit_ablation_querybased_large": None})
    notes = [b.markdown for b in blocks if isinstance(b, Text)]
    assert any("python -m pategan_audit.archive audit_ablation_querybased_large" in n for n in notes)
    assert any("python -m pategan_audit.archive audit_ablation_groundhog_large" in n for n in notes)


def test_targets_table_ranks_by_auc_beside_the_paper(smoke_archives):
    a = smoke_archives["audit_targets_large"]
    blocks = archived_runs.targets_large(None, archive=a)
    table = next(b.frame for b in blocks if isinstance(b, SaveTable))
    aucs = table["AUC (ours)"].dropna().tolist()  # a smoke candidate can have no AUC (constant scores)
    assert aucs == sorted(aucs, reverse=True) and aucs
    assert table["row (paper)"].iloc[0] == 397 and table["AUC (paper)"].iloc[0] == pytest.approx(0.6659)
    assert f"row {a.meta['target']}" in blocks[0].markdown


def test_targets_table_starts_at_the_largest_auc_and_keeps_every_candidate():
    """Rank 1 is the best candidate and no candidate falls off the end (the index starts at 1)."""
    from pategan_audit import reference

    records = pd.DataFrame({"row": [5, 174, 397], "auc": [0.55, 0.72, 0.59], "distance": [1.0, 1.2, 2.1]})
    table = archived_runs.targets_table(records, reference.target_selection_reference())
    assert table["row (ours)"].tolist() == [174, 397, 5] and table.index.tolist() == [1, 2, 3]
    assert table.loc[1, "AUC (ours)"] == pytest.approx(0.72) and table.loc[3, "distance (ours)"] == pytest.approx(1.0)
    assert table.loc[1, "row (paper)"] == 397


def test_ablation_rows_carry_a_range_and_say_whether_the_change_is_resolved(smoke_archives):
    table = archived_runs.ablation_with_spread(smoke_archives["audit_ablation_querybased_large"].records)
    assert (table["ε_emp 90% low"] <= table["ε_emp"] + 1e-9).all() and (table["ε_emp"] <= table["ε_emp 90% high"] + 1e-9).all()
    base = table["variant"] == "as benchmarked"
    assert set(table.loc[base, "change"]) == {""}
    assert set(table.loc[~base, "change"]) <= {"resolved", "within spread"}
    blocks = archived_runs.ablation_large(None, archives=smoke_archives)
    assert any(isinstance(b, ShowTable) for b in blocks)


def test_equal_ranges_through_different_float_paths_are_not_resolved(smoke_archives, monkeypatch):
    """synthcity's GroundHog 'all fixed' sat at the ceiling like 'as benchmarked', yet the page
    called it resolved: the two ranges differed in the last bits."""
    records = smoke_archives["audit_ablation_querybased_large"].records
    monkeypatch.setattr(archived_runs.verdicts, "eps_interval",
                        lambda r: (3.0540000000000003, 3.0540000000000003) if r["variant"] == "as benchmarked"
                        else (3.054, 3.054))
    table = archived_runs.ablation_with_spread(records)
    assert set(table.loc[table["variant"] != "as benchmarked", "change"]) == {"within spread"}


def test_single_switch_findings_name_the_switches_that_resolve_a_drop():
    import pandas as pd

    rows = [("original", "as benchmarked", 1.98, 0.0, ""), ("original", "V3 fixed", 2.18, 0.2, "within spread"),
            ("original", "V10 fixed", 0.0, -1.98, "resolved"), ("original", "all fixed", 0.0, -1.98, "resolved"),
            ("synthcity", "as benchmarked", 3.05, 0.0, ""), ("synthcity", "O1 fixed (beyond Table 2)", 3.05, 0.0, "within spread"),
            ("synthcity", "all fixed", 3.05, 0.0, "within spread"),
            ("borealis", "as benchmarked", 0.0, 0.0, ""), ("borealis", "V13 fixed", 0.0, 0.0, "within spread"),
            ("turing", "as benchmarked", 1.6, 0.0, ""), ("turing", "V6 fixed", 2.9, 1.3, "resolved")]
    table = pd.DataFrame(rows, columns=["implementation", "variant", "ε_emp", "Δε vs as benchmarked", "change"])
    text = archived_runs.single_switch_findings(table)
    assert "original: 1.98 as benchmarked; V10 fixed alone 0.00; all fixed 0.00" in text
    assert "V3" not in text  # within the spread
    assert "synthcity: 3.05 as benchmarked, no single switch lowers it beyond the spread; all fixed 3.05" in text
    assert "borealis: 0.00 as benchmarked, nothing to lower" in text
    assert "turing: 1.60 as benchmarked, no single switch lowers it" in text  # a resolved rise is not a fix


def test_auc_standard_error_matches_a_monte_carlo():
    """Hanley-McNeil's standard error against the spread of AUCs of simulated mini-MIAs
    (normal scores, shift 0.6: AUC ≈ 0.66, 100 + 100 models as in the archive)."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = np.r_[np.ones(100), np.zeros(100)]
    aucs = [roc_auc_score(y, np.r_[rng.normal(0.6, 1, 100), rng.normal(0, 1, 100)]) for _ in range(2000)]
    se = archived_runs.auc_standard_error(float(np.mean(aucs)), 100, 100)
    assert se == pytest.approx(np.std(aucs), rel=0.1)
    assert archived_runs.auc_standard_error(0.5, 100, 100) > archived_runs.auc_standard_error(0.9, 100, 100)
    with pytest.raises(ValueError, match="0 <= auc <= 1"):
        archived_runs.auc_standard_error(1.2, 100, 100)


def test_target_findings_place_the_papers_rows_among_ours():
    import pandas as pd

    from pategan_audit import reference

    records = pd.DataFrame({"row": [5, 174, 397, 9], "auc": [0.55, 0.72, 0.59, float("nan")]})
    text = archived_runs.target_findings(records, reference.target_selection_reference(), 100)
    assert text.startswith("Our pick is **row 174** (AUC 0.720), ahead of row 397 (0.590) by 0.130")
    assert "row 397 (the paper's 1st, AUC 0.666): our 2nd of 3, AUC 0.590" in text
    assert "row 573 (the paper's 3rd, AUC 0.637): not among our candidates" in text
    assert "rests on 0.008, 0.1 standard errors: within two, a draw at this scale" in text
    assert "by 0.130, 2.6 standard errors: beyond two, more than a draw" in text


def test_a_caption_names_each_machine_of_a_resumed_run():
    from pategan_audit.archive import Archive

    meta = {"cpus": 16, "sessions": [{"cpus": 2, "device": "cpu"}, {}, {"cpus": 16, "device": "cuda"}]}
    a = Archive(name="x", records=pd.DataFrame({"a": [1]}), meta=meta)
    assert "in sessions on 2 cores, unrecorded cores and 16 cores with a cuda device for the fits" in a.caption()
    one = Archive(name="x", records=pd.DataFrame({"a": [1]}), meta={"cpus": 2, "sessions": [{"cpus": 2}, {"cpus": 2, "device": "cpu"}]})
    assert " on 2 cores in " in one.caption()
