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
