"""The archive store: where the committed large-scale runs (``results/archive/<name>/``) are
written, read back and resumed (``ganev2025elusive`` §5, §6.1, §6.2 at the paper's scale).

An *archive* is the tidy result table of one run too large for a book build (``records.csv``) and
a ``meta.json`` that says what produced it: the profile and its knobs, the cells or settings run,
the code (commit, source hash, each computing module's blob id: :mod:`pategan_audit.provenance`),
the time, cores and library versions. This module is the plumbing every archive shares: atomic
writes (:func:`write_archive`), reads (:func:`read_archive`), the refusals checked before any
computing (:func:`check_run`), the resumable loop (:func:`accumulate`) and one run's sessions and
meta (:func:`run_session`). It imports no domain package: which cells an archive runs is declared
beside each domain's code (``utility/archives.py``, ``auditing/archives.py``,
``traces/archives.py``) and assembled by the command, :mod:`pategan_audit.archive`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from . import runner
from .provenance import code_state, compare_archive
from .runner import REPO_ROOT, atomic_write_text, source_hash

__all__ = ["Archive", "ArchiveRefused", "REDUCED_PROFILES", "accumulate", "archive_dir", "check_folder", "check_run",
           "code_at_start", "read_archive", "run_options", "run_session", "snapshots_in", "versions", "write_archive"]

#: one archive's computation: ``compute(profile, n_jobs, backend)`` returns (records, meta); a
#: resumable one also takes ``done`` (the records an earlier session saved), ``save(records, meta)``
#: (called after every finished step) and ``only`` (the presets to compute this time)
Compute = Callable[..., "tuple[pd.DataFrame, dict]"]


def archive_dir(override: str | os.PathLike | None = None) -> Path:
    """``override``, else the run option ``archive_dir`` in force (``$PATEGAN_AUDIT_ARCHIVE`` at an
    entry point), else ``<repo>/results/archive``."""
    if override is not None:
        return Path(override)
    chosen = runner.current_options().archive_dir
    return Path(chosen) if chosen else REPO_ROOT / "results" / "archive"


def run_options(n_jobs: int | None, backend: str | None, progress: bool | str = False) -> runner.RunOptions:
    """The run options of one of an archive's maps: the options the CLI read
    (:func:`pategan_audit.archive.main`, in force here) with this map's workers, backend and progress label."""
    return runner.RunOptions.defaulted(None, n_jobs=n_jobs, backend=backend, progress=progress)


@dataclass
class Archive:
    """One archived run: its tidy ``records`` and the ``meta`` describing how they were made."""

    name: str
    records: pd.DataFrame
    meta: dict

    def caption(self) -> str:
        """Provenance sentence for a caption: profile, what ran, when, how long, which code, and
        whether the modules its computation depends on have changed since (:mod:`.provenance`)."""
        m = self.meta
        hours = m.get("core_seconds", 0.0) / 3600
        wall = m.get("wall_seconds", 0.0) / 60
        commit = (m.get("git_commit") or "unknown")[:10]
        code = compare_archive(self)
        same = code.sentence() + ("; rerun the archive to refresh it" if code.status == "changed" else "")
        return (f"archived run `{self.name}` at profile `{m.get('profile')}` ({m.get('profile_description', '')}); "
                f"{m.get('runs', '')}; computed {m.get('finished', '?')[:10]} {self._where()} in "
                f"{wall:.0f} min wall-clock ({hours:.1f} core-hours), code at commit {commit} "
                f"({same}); the book build reads this archive and does not recompute it")

    def _where(self) -> str:
        """"on N cores", or, for a run resumed on several machines, each session's cores and device
        (sessions from before devices were recorded ran on CPUs)."""
        sessions = self.meta.get("sessions") or []
        machines = list(dict.fromkeys((s.get("cpus"), s.get("device") or "cpu") for s in sessions))
        if len(machines) < 2:
            return f"on {self.meta.get('cpus', '?')} cores"
        each = [(f"{cpus} cores" if cpus else "unrecorded cores")
                + ("" if device == "cpu" else f" with a {device} device for the fits") for cpus, device in machines]
        return "in sessions on " + ", ".join(each[:-1]) + " and " + each[-1]



def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def code_at_start(name: str | None = None) -> dict[str, Any]:
    """Commit and source hash of the code *as the run starts*, whether ``src/`` had uncommitted
    edits then, and the hash of each computing module archive ``name`` depends on (every
    archive's when None; :func:`pategan_audit.provenance.code_state`), which the caption compares."""
    dirty = _git("status", "--porcelain", "--", "src")
    return {"git_commit": _git("rev-parse", "HEAD"), "src_uncommitted_changes": bool(dirty) if dirty is not None else None,
            "source_hash": source_hash(), **code_state(name)}


def versions() -> dict[str, str]:
    import numpy
    import sklearn
    import torch

    try:  # the audit archives run without it (e.g. on an accelerator machine that lacks it)
        import xgboost
        xgb = xgboost.__version__
    except ImportError:
        xgb = "not installed"
    return {"python": platform.python_version(), "numpy": numpy.__version__, "pandas": pd.__version__,
            "scikit-learn": sklearn.__version__, "torch": torch.__version__, "xgboost": xgb}



def write_archive(name: str, records: pd.DataFrame, meta: dict, *, directory: str | os.PathLike | None = None) -> Path:
    """Write ``records.csv`` and ``meta.json`` of archive ``name``; returns its folder.

    Both files are written in full into a temporary sibling folder (``.<name>.writing-<pid>-*``)
    first, then moved over the stored pair with :func:`os.replace` (records, then meta): a write
    interrupted before that leaves the stored archive as it was, never a half-written file or a
    new ``records.csv`` beside the old ``meta.json``. ``snapshots/`` in the folder is left alone."""
    if not isinstance(records, pd.DataFrame) or records.empty:
        raise ValueError(f"archive {name!r}: records must be a non-empty DataFrame")
    root = archive_dir(directory)
    texts = {"records.csv": records.to_csv(index=False),
             "meta.json": json.dumps({"name": name, **meta}, indent=2, default=str) + "\n"}
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(root, name)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.writing-{os.getpid()}-", dir=root))
    try:
        for file, text in texts.items():
            atomic_write_text(staging / file, text)  # flushed to disk before it replaces anything
        for file in texts:
            os.replace(staging / file, folder / file)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _remove_stale_staging(root: Path, name: str) -> None:
    """Remove the staging folders of ``name`` that a killed write left (their process is gone)."""
    for stale in root.glob(f".{name}.writing-*"):
        pid = stale.name[len(f".{name}.writing-"):].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def read_archive(name: str, *, directory: str | os.PathLike | None = None) -> Archive | None:
    """The archive ``name``, or ``None`` if it has not been computed (pages then say so)."""
    folder = archive_dir(directory) / name
    if not (folder / "records.csv").exists() or not (folder / "meta.json").exists():
        return None
    meta = json.loads((folder / "meta.json").read_text())
    return Archive(name=name, records=pd.read_csv(folder / "records.csv"), meta=meta)



# --------------------------------------------------------------------------------------------
# what a run may write where: checked before any computing


class ArchiveRefused(ValueError):
    """A run refused before any computing (unknown profile, unusable folder, or a stored archive
    it would replace); the message says the way out."""


#: profiles that check a pipeline rather than produce an archive: never written into the archive
#: folder the book reads unless told (``--directory`` elsewhere, or ``--force``)
REDUCED_PROFILES = ("smoke", "book")



def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it (messages name folders as typed)."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT.resolve()))
    except ValueError:
        return str(path)


def check_folder(name: str, directory: str | os.PathLike | None) -> Path:
    """The archive root a run of ``name`` writes to, if it is (or can be made) a writable folder;
    otherwise :class:`ArchiveRefused` naming the option that chose it."""
    root = archive_dir(directory)
    option = (f"--directory {directory}" if directory is not None else
              f"the run option archive_dir, $PATEGAN_AUDIT_ARCHIVE ({root})" if runner.current_options().archive_dir
              else f"the archive folder {root}")
    for path in (root, root / name):
        if path.exists() and not path.is_dir():
            raise ArchiveRefused(f"{option}: {path} is a file, not a folder; give --directory a folder (it is created "
                                 "if missing)")
    probe = root
    while not probe.exists():  # the nearest existing folder must let us create the rest
        probe = probe.parent
    if not probe.is_dir():
        raise ArchiveRefused(f"{option}: {probe} is a file, not a folder; give --directory a folder")
    target = root / name if (root / name).is_dir() else probe
    if not os.access(target, os.W_OK | os.X_OK):
        raise ArchiveRefused(f"{option}: {target} is not writable; give --directory a folder you can write to")
    return root


def _stored_profile(folder: Path) -> tuple[bool, str | None]:
    """(whether ``folder`` holds an archive, the profile its ``meta.json`` names or None when unreadable)."""
    if not (folder / "records.csv").exists() and not (folder / "meta.json").exists():
        return False, None
    try:
        profile = json.loads((folder / "meta.json").read_text()).get("profile")
    except (OSError, ValueError, AttributeError):
        return True, None
    return True, (str(profile) if profile is not None else None)


def check_run(name: str, profile: str, *, profiles: Callable[[str], Sequence[str]],
              directory: str | os.PathLike | None = None, force: bool = False) -> Path:
    """Refuse (:class:`ArchiveRefused`) a run of archive ``name`` at ``profile`` before any
    computing when the profile is not one of the archive's kind, the folder cannot be written, or
    the run would replace what the folder holds: a stored archive of another profile (its
    records and meta are not this run's), or (a ``smoke``/``book`` run) the archive folder the book
    reads. ``force`` allows both replacements. ``profiles(name)``: the profiles archive ``name``
    can run at. Returns the archive root."""
    root = check_folder(name, directory)  # first: it needs no profile
    valid = tuple(profiles(name))
    if profile not in valid:
        raise ArchiveRefused(f"unknown profile {profile!r} for archive {name}; choose one of {', '.join(valid)}")
    if force:
        return root
    way_out = ("write this run elsewhere with --directory DIR (run_archive(..., directory=DIR)), or write there on "
               "purpose with --force (force=True)")
    held, stored = _stored_profile(root / name)
    if held and stored != profile:
        what = f"a run at profile {stored!r}" if stored else "an archive whose meta.json names no profile (unreadable)"
        raise ArchiveRefused(f"archive {name} in {_shown(root / name)} holds {what}; this run is at profile {profile!r} "
                             f"and would replace its records.csv and meta.json: {way_out}")
    if profile in REDUCED_PROFILES and root.resolve() == archive_dir().resolve():
        raise ArchiveRefused(f"a {profile} run of archive {name} would write into {_shown(root)}, the archive folder "
                             f"the book reads; a {profile} run checks the pipeline: {way_out}")
    return root


def accumulate(parts: list, steps: list, compute: Callable[[Any], pd.DataFrame], *,
                save: Callable[[pd.DataFrame, dict], None] | None,
                meta_now: Callable[[pd.DataFrame], dict]) -> tuple[pd.DataFrame, dict]:
    """``compute`` each step, appending its records to ``parts`` (the earlier sessions' records
    first) and saving everything so far after each step; returns the records and their meta."""
    for step in steps:
        parts.append(compute(step))
        records = pd.concat(parts, ignore_index=True)
        if save is not None:
            save(records, meta_now(records))
    records = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return records, meta_now(records)


# --------------------------------------------------------------------------------------------
# one run of an archive: its sessions, resumed from what an earlier one saved


def run_session(name: str, compute: Compute, *, profile: str, resumable: bool, device: str,
                n_jobs: int | None = None, backend: str | None = None, directory: str | os.PathLike | None = None,
                only: Sequence[str] | None = None, redo: Sequence[str] | None = None) -> Archive:
    """Run ``compute`` (archive ``name``'s computation) at ``profile`` and write its records and
    meta; the caller has checked the run (:func:`check_run`). ``device``: where its fits run
    (``RunOptions.device``, resolved), recorded per session.

    A ``resumable`` archive is written after every finished step with ``"complete": false`` in its
    meta and resumes from the records an earlier session at the same profile saved (wall and core
    seconds add up over sessions; ``sessions`` lists each one's code state); ``redo``: the presets
    whose stored rows are dropped and computed again; ``only``: the presets computed this time."""
    started = datetime.now(timezone.utc)
    code = code_at_start(name)
    t0 = time.perf_counter()
    command = f"python -m pategan_audit.archive {name} --profile {profile}" + (f" --n-jobs {n_jobs}" if n_jobs else "")
    previous = read_archive(name, directory=directory) if resumable else None
    if previous is not None and previous.meta.get("profile") != profile:
        previous = None  # another profile's records are not this run's
    if previous is not None and redo:
        stale = previous.records["implementation"].astype(str).isin(set(redo))
        previous = Archive(name=previous.name, records=previous.records[~stale].reset_index(drop=True),
                           meta=previous.meta)
    before = previous.meta if previous is not None else {}
    sessions = list(before.get("sessions", []))
    flushed = runner.current_options().flush_denormal
    # where the jobs run (backend, Dask scheduler and workers, threads per job): recorded per session;
    # a Dask cluster without workers fails here, before any work
    execution = runner.execution_info(backend, n_jobs)

    def finish_meta(meta: dict) -> dict:
        wall = time.perf_counter() - t0
        this = {"started": started.isoformat(timespec="seconds"),
                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wall_seconds": round(wall, 1),
                "device": device, "flush_denormal": flushed, "cpus": os.cpu_count(), "execution": execution, **code,
                **({"presets": sorted(only), "redone": bool(redo)} if only else {})}
        meta = {**meta, "started": before.get("started", this["started"]), "finished": this["finished"],
                "wall_seconds": round(before.get("wall_seconds", 0.0) + wall, 1),
                "core_seconds": round(meta.pop("core_seconds_measured", 0.0), 1), "n_jobs": n_jobs,
                "cpus": os.cpu_count(), "execution": execution, **code, "versions": versions(), "command": command}
        if resumable:
            meta["sessions"] = sessions + [this]
        if before.get("dropped"):
            meta["dropped"] = before["dropped"]  # what an earlier --drop removed, and why
        return meta

    if resumable:
        def save(records: pd.DataFrame, meta: dict) -> None:
            write_archive(name, records, finish_meta(dict(meta)), directory=directory)

        # stopped fits go on from their snapshots, kept on the work tree (not committed) beside the
        # partial records: <archive>/<name>/snapshots/<cell id>/ (RunOptions.snapshots)
        with snapshots_in(archive_dir(directory) / name / "snapshots"):
            records, meta = compute(profile, n_jobs, backend, done=previous.records if previous is not None else None,
                                   save=save, **({"only": tuple(only)} if only else {}))
    else:
        records, meta = compute(profile, n_jobs, backend)
    meta = finish_meta(meta)
    write_archive(name, records, meta, directory=directory)
    return Archive(name=name, records=records, meta={"name": name, **meta})


@contextlib.contextmanager
def snapshots_in(folder: Path):
    """Run the block under the run options in force with ``snapshots`` at ``folder`` (every job
    is sent these options); an empty folder is removed afterwards."""
    try:
        with runner.using(dataclasses.replace(runner.current_options(), snapshots=str(folder))):
            yield
    finally:
        with contextlib.suppress(OSError):
            folder.rmdir()
