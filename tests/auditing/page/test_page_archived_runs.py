"""pategan_audit.auditing.page.archived_runs: the paper-scale target selection and ablation read
back from their archives (run at smoke into a temp folder), and a clear note when missing."""
import pytest

from pategan_audit import archive
from pategan_audit.auditing.page import archived_runs
from pategan_audit.pages.blocks import SaveTable, ShowTable, Text


@pytest.fixture(scope="module")
def smoke_archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("arch")
    import os

    os.environ["PATEGAN_AUDIT_CACHE"] = str(d / "cache")
    try:
        for name in ("audit_targets_large", "audit_ablation_querybased_large"):
            archive.run_archive(name, profile="smoke", n_jobs=1, directory=d)
    finally:
        os.environ.pop("PATEGAN_AUDIT_CACHE", None)
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
