"""pategan_audit.archive: a run never destroys a stored archive it was not meant to replace
(issue #37). A run of another profile, or a smoke/book run aimed at the archive folder the book
reads, is refused before any computing with a message naming the way out (``--directory``,
``--force``); a write interrupted mid-way leaves the stored pair as it was; a bad ``--directory``
or ``--profile`` is a clear error before any work. The compute functions are replaced by fakes,
and every archive lives in a temporary folder, never in results/archive."""
from __future__ import annotations

import json
import os
import shutil

import pandas as pd
import pytest

from pategan_audit import archive, archive_store

ALL = sorted(archive.ARCHIVES)
#: one archive of each kind: utility (per preset; per cell), audit (per setting; per candidate
#: pair), the calibration archives and the traces (run whole)
KINDS = ["utility_large", "utility_sweep_large", "audit_querybased_large", "audit_targets_large",
         "audit_calibration_large", "traces_paper"]


def _own_profile(name):
    return archive.ARCHIVE_PROFILES.get(name, "large")


def _store(root, name, profile):
    """A small stored archive of ``name`` at ``profile`` under ``root``; returns its files' bytes."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "records.csv").write_text("implementation,cell,x\noriginal,c1,0.5\nturing,c2,0.25\n")
    (folder / "meta.json").write_text(json.dumps({"name": name, "profile": profile, "runs": "stored", "complete": False},
                                                 indent=2) + "\n")
    return _bytes(folder)


def _bytes(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _leftovers(root):
    return sorted(p.name for p in root.iterdir() if p.name.startswith("."))


@pytest.fixture
def computed(monkeypatch):
    """Replace every archive's compute function by a fast fake; the list records its calls."""
    calls = []

    def fake(profile, n_jobs, backend, *, done=None, save=None, only=None):
        calls.append((profile, None if done is None else len(done)))
        records = pd.DataFrame({"implementation": ["smartnoise"], "cell": ["c9"], "x": [0.75]})
        if done is not None:
            records = pd.concat([done, records], ignore_index=True)
        meta = {"profile": profile, "runs": "fake", "complete": True}
        if save is not None:
            save(records, meta)
        return records, meta

    for name in ALL:
        monkeypatch.setitem(archive.ARCHIVES, name, fake)
    return calls


@pytest.mark.parametrize("name", ALL)
def test_a_run_of_another_profile_is_refused_before_computing(name, tmp_path, computed):
    stored = _store(tmp_path, name, _own_profile(name))
    with pytest.raises(archive.ArchiveRefused) as refused:
        archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    text = str(refused.value)
    for part in (name, f"'{_own_profile(name)}'", "'smoke'", "--directory", "--force"):
        assert part in text
    assert computed == []
    assert _bytes(tmp_path / name) == stored  # byte for byte
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("name", KINDS)
def test_the_cli_refuses_it_with_the_message_and_no_traceback(name, tmp_path, computed, capsys):
    stored = _store(tmp_path, name, _own_profile(name))
    with pytest.raises(SystemExit) as stop:
        archive.main([name, "--profile", "smoke", "--directory", str(tmp_path), "--n-jobs", "1"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"archive {name}" in err and "--force" in err and "Traceback" not in err
    assert computed == [] and _bytes(tmp_path / name) == stored


@pytest.mark.parametrize("name", KINDS)
def test_force_replaces_the_stored_archive(name, tmp_path, computed):
    _store(tmp_path, name, _own_profile(name))
    got = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path, force=True)
    assert computed == [("smoke", None)]  # another profile's records are not resumed
    back = archive.read_archive(name, directory=tmp_path)
    assert back.meta["profile"] == "smoke" and back.records["cell"].tolist() == ["c9"] == got.records["cell"].tolist()
    assert _leftovers(tmp_path) == []


def test_the_cli_force_flag_reaches_the_run(tmp_path, computed):
    _store(tmp_path, "audit_calibration_large", "large")
    assert archive.main(["audit_calibration_large", "--profile", "smoke", "--directory", str(tmp_path), "--force"]) == 0
    assert computed == [("smoke", None)]
    assert archive.read_archive("audit_calibration_large", directory=tmp_path).meta["profile"] == "smoke"


@pytest.mark.parametrize("name", ["utility_large", "audit_groundhog_large", "utility_variants_large"])
def test_a_run_of_the_same_profile_still_resumes(name, tmp_path, computed):
    _store(tmp_path, name, "smoke")
    got = archive.run_archive(name, profile="smoke", n_jobs=1, directory=tmp_path)
    assert computed == [("smoke", 2)]  # the two stored rows handed to the run as done
    assert got.records["cell"].tolist() == ["c1", "c2", "c9"]
    assert archive.read_archive(name, directory=tmp_path).records["cell"].tolist() == ["c1", "c2", "c9"]


@pytest.mark.parametrize("profile", ["smoke", "book"])
def test_a_reduced_run_needs_another_folder_than_the_books(profile, tmp_path, use_archive, computed, capsys):
    """The reviewer's case: ``--profile smoke`` without ``--directory`` replaced the committed
    utility_large. The book's archive folder is a temp folder here (run option and variable)."""
    books = tmp_path / "book_archive"
    use_archive(books)
    stored = _store(books, "utility_large", "large")
    for directory in (None, books):  # named explicitly, it is still the book's folder
        with pytest.raises(archive.ArchiveRefused, match="--directory DIR"):
            archive.run_archive("utility_large", profile=profile, n_jobs=1, directory=directory)
    # with no archive stored yet, too: nothing is created there
    with pytest.raises(archive.ArchiveRefused, match=f"a {profile} run of archive traces_paper"):
        archive.run_archive("traces_paper", profile=profile, n_jobs=1)
    assert not (books / "traces_paper").exists()
    with pytest.raises(SystemExit):
        archive.main(["audit_calibration_large", "--profile", profile])
    assert "--directory" in capsys.readouterr().err
    assert computed == [] and _bytes(books / "utility_large") == stored
    # elsewhere it runs; in the book's folder only when forced
    archive.run_archive("utility_large", profile=profile, n_jobs=1, directory=tmp_path / "out")
    archive.run_archive("traces_paper", profile=profile, n_jobs=1, force=True)
    assert computed == [(profile, None), (profile, None)]
    assert archive.read_archive("traces_paper").meta["profile"] == profile


def test_the_archives_own_profile_may_write_the_books_folder(tmp_path, use_archive, computed):
    use_archive(tmp_path)
    archive.run_archive("audit_ablation_groundhog_large", n_jobs=1)  # its own: resolvable
    assert computed == [("resolvable", None)]


@pytest.mark.parametrize("name, valid", [("utility_large", "paper, book, large, smoke"),
                                         ("audit_querybased_large", "resolvable"), ("traces_paper", "smoke, book, paper")])
def test_an_unknown_profile_lists_the_valid_ones_before_computing(name, valid, tmp_path, computed, capsys):
    with pytest.raises(archive.ArchiveRefused, match="unknown profile 'huge'") as refused:
        archive.run_archive(name, profile="huge", n_jobs=1, directory=tmp_path)
    assert valid in str(refused.value)
    with pytest.raises(SystemExit):
        archive.main([name, "--profile", "huge", "--directory", str(tmp_path)])
    assert "unknown profile 'huge'" in capsys.readouterr().err
    assert computed == [] and not (tmp_path / name).exists()


def test_a_directory_that_is_a_file_is_refused_before_computing(tmp_path, computed, capsys):
    file = tmp_path / "notes.txt"
    file.write_text("not a folder")
    for directory in (file, file / "below"):
        with pytest.raises(archive.ArchiveRefused, match=r"--directory .*is a file, not a folder"):
            archive.run_archive("audit_calibration_large", profile="smoke", n_jobs=1, directory=directory)
    with pytest.raises(SystemExit):
        archive.main(["utility_large", "--profile", "smoke", "--directory", str(file)])
    assert "--directory" in capsys.readouterr().err and computed == []
    (tmp_path / "arch").mkdir()
    (tmp_path / "arch" / "utility_large").write_text("a file where the archive's folder goes")
    with pytest.raises(archive.ArchiveRefused, match="is a file"):
        archive.run_archive("utility_large", profile="smoke", n_jobs=1, directory=tmp_path / "arch")
    assert computed == []


def test_an_unwritable_directory_is_refused_before_computing(tmp_path, monkeypatch, computed):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anyway: stand in for a user who may not
            real = os.access
            monkeypatch.setattr(os, "access", lambda p, mode, **k: False if str(p).startswith(str(locked))
                                else real(p, mode, **k))
        for directory in (locked, locked / "new" / "deeper"):
            with pytest.raises(archive.ArchiveRefused, match=r"--directory .*is not writable"):
                archive.run_archive("utility_sweep_large", profile="smoke", n_jobs=1, directory=directory)
        assert computed == []
    finally:
        locked.chmod(0o700)


def test_an_interrupted_write_leaves_the_stored_archive_intact(tmp_path, monkeypatch):
    """Stopped while the new pair is written (here: while meta.json goes to disk, after
    records.csv did), the stored records.csv and meta.json stay as they were."""
    stored = _store(tmp_path, "utility_large", "smoke")
    new = pd.DataFrame({"implementation": ["x"], "cell": ["new"], "x": [1.0]})
    real = archive_store.atomic_write_text

    def stopped(path, text):
        if path.name == "meta.json":
            raise KeyboardInterrupt
        return real(path, text)

    monkeypatch.setattr(archive_store, "atomic_write_text", stopped)
    with pytest.raises(KeyboardInterrupt):
        archive.write_archive("utility_large", new, {"profile": "smoke"}, directory=tmp_path)
    assert _bytes(tmp_path / "utility_large") == stored
    assert _leftovers(tmp_path) == []
    monkeypatch.setattr(archive_store, "atomic_write_text", real)

    class Unprintable:  # stopped while the meta is serialised
        def __str__(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        archive.write_archive("utility_large", new, {"profile": "smoke", "odd": Unprintable()}, directory=tmp_path)
    assert _bytes(tmp_path / "utility_large") == stored and _leftovers(tmp_path) == []
    archive.write_archive("utility_large", new, {"profile": "smoke"}, directory=tmp_path)
    assert archive.read_archive("utility_large", directory=tmp_path).records["cell"].tolist() == ["new"]


def test_a_run_stopped_between_chunks_keeps_the_last_finished_chunk(tmp_path, monkeypatch):
    """A resumable run replaces the stored pair only when a chunk finishes: stopped in its second
    chunk, the folder holds the first chunk's records and their meta, and snapshots/ is kept."""
    _store(tmp_path, "utility_sweep_large", "smoke")
    (tmp_path / "utility_sweep_large" / "snapshots" / "cell").mkdir(parents=True)
    (tmp_path / "utility_sweep_large" / "snapshots" / "cell" / "state.pt").write_bytes(b"fit state")

    def stopped(profile, n_jobs, backend, *, done=None, save=None, only=None):
        first = pd.concat([done, pd.DataFrame({"implementation": ["corrected"], "cell": ["c3"], "x": [0.1]})],
                          ignore_index=True)
        save(first, {"profile": profile, "complete": False, "settings_done": 3})
        raise KeyboardInterrupt  # the second chunk never finishes

    monkeypatch.setitem(archive.ARCHIVES, "utility_sweep_large", stopped)
    with pytest.raises(KeyboardInterrupt):
        archive.run_archive("utility_sweep_large", profile="smoke", n_jobs=1, directory=tmp_path)
    back = archive.read_archive("utility_sweep_large", directory=tmp_path)
    assert back.records["cell"].tolist() == ["c1", "c2", "c3"] and back.meta["settings_done"] == 3
    assert (tmp_path / "utility_sweep_large" / "snapshots" / "cell" / "state.pt").read_bytes() == b"fit state"
    assert _leftovers(tmp_path) == []


def test_a_killed_writes_staging_folder_is_removed_by_the_next_write(tmp_path):
    stale = tmp_path / ".utility_large.writing-999999999-abc"  # no such process
    stale.mkdir()
    (stale / "records.csv").write_text("half")
    mine = tmp_path / f".utility_large.writing-{os.getpid()}-xyz"  # a live process's: kept
    mine.mkdir()
    archive.write_archive("utility_large", pd.DataFrame({"a": [1]}), {"profile": "smoke"}, directory=tmp_path)
    assert not stale.exists() and mine.exists()
    shutil.rmtree(mine)


def test_a_stored_archive_without_a_readable_meta_is_not_replaced_unless_forced(tmp_path, computed):
    stored = _store(tmp_path, "audit_calibration_large", "smoke")
    (tmp_path / "audit_calibration_large" / "meta.json").write_text("{ half a json")
    stored = _bytes(tmp_path / "audit_calibration_large")
    with pytest.raises(archive.ArchiveRefused, match="names no profile"):
        archive.run_archive("audit_calibration_large", profile="smoke", n_jobs=1, directory=tmp_path)
    assert computed == [] and _bytes(tmp_path / "audit_calibration_large") == stored
    archive.run_archive("audit_calibration_large", profile="smoke", n_jobs=1, directory=tmp_path, force=True)
    assert computed == [("smoke", None)]
