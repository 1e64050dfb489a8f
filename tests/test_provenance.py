"""Archive provenance (pategan_audit.provenance): an edit of presentation code leaves every
archive unchanged, an edit of a preset marks exactly the archives that run it, old archives are
compared with their commit through git, and a commit git cannot read degrades to "unknown"."""
from __future__ import annotations

import subprocess

import pandas as pd
import pytest

from pategan_audit import archive, provenance as P, runner

PRESENTATION_EDITS = ("pages/diagnoses.py", "pages/params.py", "pages/display.py", "pages/scorecard.py",
                      "pages/done_right.py", "pages/utility/large.py", "pages/auditing/paper_scale.py",
                      "pages/plotting/theme.py")


@pytest.fixture(autouse=True)
def _fresh_caches():
    P.working_tree.cache_clear()
    P.git_tree.cache_clear()
    yield
    P.working_tree.cache_clear()
    P.git_tree.cache_clear()


def _edited(tree: P.Tree, edits: dict) -> P.Tree:
    """``tree`` with each path's content replaced (None: the module removed)."""
    sources = dict(tree.sources)
    for path, content in edits.items():
        if content is None:
            sources.pop(path)
        else:
            sources[path] = content
    return P.Tree({p: P.blob_id(s) for p, s in sources.items()}, lambda: sources)


def _appended(tree: P.Tree, *paths: str) -> dict:
    return {p: tree.sources[p] + b"\n# an edit\n" for p in paths}


def _committed() -> dict[str, archive.Archive]:
    found = {name: archive.read_archive(name) for name in archive.ARCHIVES}
    return {name: a for name, a in found.items() if a is not None}


def _head() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=P.REPO_ROOT, capture_output=True, text=True, timeout=10)
    except OSError:
        pytest.skip("git is not installed")
    if out.returncode != 0 or P.git_tree(out.stdout.strip()) is None:
        pytest.skip("not a git clone with the package's history")
    return out.stdout.strip()


def _recorded_now(a: archive.Archive) -> dict:
    """``a``'s meta as a run starting now would write it (per-module hashes of its closure)."""
    return {**{k: v for k, v in a.meta.items() if k != "sessions"}, **P.code_state(a.name)}


def test_presentation_edits_leave_every_archive_unchanged(monkeypatch):
    archives = _committed()
    assert archives, "the committed archives are missing"
    metas = {name: _recorded_now(a) for name, a in archives.items()}
    before = P.working_tree()
    edits = _appended(before, *PRESENTATION_EDITS)
    monkeypatch.setattr(P, "_read_package_file", lambda path: edits.get(path) or before.sources[path])
    P.working_tree.cache_clear()
    assert P.working_tree().blobs["pages/diagnoses.py"] != before.blobs["pages/diagnoses.py"]  # the edit is seen
    for name, a in archives.items():
        result = P.compare(name, metas[name], a.records)
        assert result.status == "unchanged", (name, result)
        assert "unchanged since it was computed" in archive.Archive(name, a.records, metas[name]).caption()


def test_a_preset_edit_marks_exactly_the_archives_that_run_it(monkeypatch):
    archives = _committed()
    metas = {name: _recorded_now(a) for name, a in archives.items()}
    before = P.working_tree()
    edits = _appended(before, "implementations/borealis.py")
    monkeypatch.setattr(P, "_read_package_file", lambda path: edits.get(path) or before.sources[path])
    P.working_tree.cache_clear()
    changed = {name for name, a in archives.items() if P.compare(name, metas[name], a.records).status == "changed"}
    runs_it = {name for name, a in archives.items()
               if "implementations/borealis.py" in P.closure(name, presets=P.archive_presets(a.records, a.meta))}
    assert changed == runs_it
    # archives without a borealis row do not depend on it; those with one do
    assert {"audit_corrected_large", "audit_gnmax_large", "utility_gnmax_large", "audit_calibration_large",
            "audit_targets_large"} & set(archives) <= set(archives) - changed
    assert {"audit_querybased_large", "utility_large", "utility_sweep_large"} & set(archives) <= changed
    for name in changed:
        assert P.compare(name, metas[name], archives[name].records).changed == ("implementations/borealis.py",)
    name = sorted(changed)[0]
    text = archive.Archive(name, archives[name].records, metas[name]).caption()
    assert "implementations/borealis.py changed" in text and "rerun the archive" in text


def test_old_archives_are_compared_with_their_commit_through_git():
    head = _head()
    now = P.git_tree(head)
    records = pd.DataFrame({"implementation": ["corrected", "borealis", "real"]})
    meta = {"git_commit": head, "sessions": [{"git_commit": head}, {"git_commit": head[:12]}]}
    assert P.compare("utility_large", meta, records, now=now).status == "unchanged"
    diagnoses = next(p for p in ("pages/diagnoses.py", "diagnoses.py") if p in now.blobs)  # the commit's layout
    assert P.compare("utility_large", meta, records, now=_edited(now, _appended(now, diagnoses))).status == "unchanged"
    edited = P.compare("utility_large", meta, records, now=_edited(now, _appended(now, "implementations/borealis.py")))
    assert edited.changed == ("implementations/borealis.py",) and edited.against == (head, head[:12])
    only_corrected = pd.DataFrame({"implementation": ["corrected"]})
    assert P.compare("utility_large", meta, only_corrected,
                     now=_edited(now, _appended(now, "implementations/borealis.py"))).status == "unchanged"
    gone = P.compare("utility_large", meta, records, now=_edited(now, {"implementations/neural_loop.py": None}))
    assert gone.removed == ("implementations/neural_loop.py",) and gone.status == "changed"
    assert "implementations/neural_loop.py removed" in gone.sentence()


def test_the_working_tree_hashes_are_git_blob_ids():
    head = _head()
    path = "seeds.py"
    out = subprocess.run(["git", "hash-object", str(P.PACKAGE_DIR / path)], capture_output=True, text=True, check=True)
    assert P.working_tree().blobs[path] == out.stdout.strip()[:P.HASH_DIGITS]
    assert set(P.git_tree(head).blobs) >= {"seeds.py", "implementations/borealis.py"}


def test_a_commit_git_cannot_read_degrades_to_unknown(monkeypatch):
    meta = {"git_commit": "0" * 40}
    result = P.compare("utility_large", meta)
    assert result.status == "unknown"
    assert result.sentence() == "provenance unknown: commit 0000000000 not in this clone"
    assert "provenance unknown: commit 0000000000 not in this clone" in \
        archive.Archive("utility_large", pd.DataFrame({"a": [1]}), meta).caption()
    monkeypatch.setattr(P, "_git", lambda args, stdin=None: None)  # no git at all (a tarball)
    P.git_tree.cache_clear()
    assert P.compare("audit_querybased_large", {"git_commit": "ab" * 20}).sentence() == \
        "provenance unknown: commit abababab" "ab not in this clone"
    assert P.compare("utility_large", {}).sentence() == "provenance unknown: no commit recorded"


def test_one_stale_session_is_enough_to_say_changed():
    now = P.working_tree()
    recorded = P.code_state("audit_corrected_large")["computing_modules"]
    stale = {**recorded, "implementations/corrected.py": "0" * P.HASH_DIGITS}
    meta = {"sessions": [{"computing_modules": stale}, {"computing_modules": recorded}]}
    result = P.compare("audit_corrected_large", meta, pd.DataFrame({"implementation": ["corrected"]}), now=now)
    assert result.changed == ("implementations/corrected.py",)


def test_closures_hold_no_presentation_and_code_state_checks_its_input():
    every = P.closure(None)
    assert every and not [p for p in every if runner.computes_nothing(p)]
    assert {"pages/diagnoses.py", "pages/params.py", "pages/display.py", "archive.py"}.isdisjoint(every)
    assert "implementations/borealis.py" in every and "runner.py" in every
    assert "implementations/borealis.py" not in P.closure("audit_corrected_large", presets={"corrected"})
    assert set(P.code_state("audit_corrected_large")["computing_modules"]) == P.closure("audit_corrected_large")
    with pytest.raises(ValueError, match="package-relative paths"):
        P.code_state(["no/such_module.py"])
