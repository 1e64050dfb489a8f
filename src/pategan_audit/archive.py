"""Archived runs: results of profiles too large for a book build, committed with the project.

The result cache (:mod:`pategan_audit.runner`) is keyed by the package's source hash, so any
edit of the computing code invalidates it — right for a cache, wrong for results that took
hours to compute. An *archive* is the tidy result table of one such run (``records.csv``) plus a
``meta.json`` that says exactly what produced it, both under ``results/archive/<name>/`` and
tracked by git; the book's pages read them (:func:`read_archive`) and never recompute them.

This module is the command and the one table of archives (:data:`ARCHIVES`): each domain declares
its own beside its code (``utility/archives.py``: §5's tables and figures; ``auditing/archives.py``:
§6.2's audits, calibration, target selection, ablation; ``traces/archives.py``: §6.1's traces), and
the store they share (writing, reading, resuming, refusing) is :mod:`pategan_audit.archive_store`.

Re-create one (resumes from the result cache if interrupted)::

    python -m pategan_audit.archive utility_large --n-jobs 2
    python -m pategan_audit.archive audit_querybased_large --n-jobs 2

A run never replaces a stored archive of another profile, and a ``smoke`` or ``book`` run never
writes into the archive folder the book reads, unless told with ``--force``; check the pipeline
elsewhere::

    python -m pategan_audit.archive utility_large --profile smoke --directory out/arch
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from . import archive_store as store
from . import runner
from .archive_store import Archive, ArchiveRefused, archive_dir, check_folder, read_archive, run_session, write_archive
from .auditing import archives as auditing_archives
from .auditing.archives import ALL_PRESETS, CEILING_MARGIN, CEILING_SOURCES, PAST_CEILING_CELLS, SETTING_COLUMNS
from .implementations.many import resolve_device
from .traces import archives as traces_archives
from .utility import archives as utility_archives
from .utility.archives import (ARCHIVE_ADABOOST, BEST25_TABLES, GNMAX_DATASETS, MNIST_DESCRIPTION, MNIST_MAX_ITER,
                               MNIST_SUBSAMPLE, MNIST_TABLES, SWEEP_DESCRIPTION, SWEEP_PRESETS, SWEEP_TABLES,
                               TABLE4_ARCHIVES, TABLES_ADABOOST, TABLES_DESCRIPTION, TABLES_TABLES, UTILITY_TABLE_ARCHIVES,
                               VARIANTS_ADABOOST, VARIANTS_TABLES, best25_cells, gnmax_cells, mnist_cells, spread_presets,
                               sweep_cells, tables_cells, variants_cells)

__all__ = ["ARCHIVES", "ARCHIVE_PROFILES", "RESUMABLE", "Archive", "ArchiveRefused", "archive_dir", "archive_profiles",
           "check_run", "drop_presets", "read_archive", "write_archive", "run_archive", "main",
           # the domains' archive definitions that pages, tests and benchmarks read here
           "ALL_PRESETS", "ARCHIVE_ADABOOST", "BEST25_TABLES", "CEILING_MARGIN", "CEILING_SOURCES", "GNMAX_DATASETS",
           "MNIST_DESCRIPTION", "MNIST_MAX_ITER", "MNIST_SUBSAMPLE", "MNIST_TABLES", "PAST_CEILING_CELLS",
           "SETTING_COLUMNS", "SWEEP_DESCRIPTION", "SWEEP_PRESETS", "SWEEP_TABLES", "TABLE4_ARCHIVES", "TABLES_ADABOOST",
           "TABLES_DESCRIPTION", "TABLES_TABLES", "UTILITY_TABLE_ARCHIVES", "VARIANTS_ADABOOST", "VARIANTS_TABLES",
           "best25_cells", "gnmax_cells", "mnist_cells", "spread_presets", "sweep_cells", "tables_cells", "variants_cells"]

#: each domain's archive definitions, by the prefix of their names (which also says the kind of
#: profile they run at: utility, audit or trace profiles)
_DOMAINS = (("utility_", utility_archives), ("audit_", auditing_archives), ("traces_", traces_archives))

#: name -> function(profile, n_jobs, backend) returning (records, meta); a resumable archive's also
#: takes ``done``, ``save`` and ``only`` (:func:`pategan_audit.archive_store.run_session`)
ARCHIVES: dict[str, Callable[..., tuple[pd.DataFrame, dict]]] = {
    name: run for _, spec in _DOMAINS for name, run in spec.ARCHIVES.items()}
#: archives committed at another profile than ``large`` (each domain says why): the GroundHog
#: ablation (``resolvable``), the audits past the ceiling (``ceiling10k``, ``ceiling2k``) and the
#: traces (the trace profile ``paper``)
ARCHIVE_PROFILES: dict[str, str] = {name: p for _, spec in _DOMAINS for name, p in spec.ARCHIVE_PROFILES.items()}
#: archives that save after every setting and resume from what an earlier session saved
RESUMABLE: tuple[str, ...] = tuple(name for _, spec in _DOMAINS for name in spec.RESUMABLE)


def archive_profiles(name: str) -> tuple[str, ...]:
    """The profiles archive ``name`` can run at: those of its kind (``utility_*``: utility
    profiles, ``audit_*``: audit profiles, ``traces_*``: trace profiles)."""
    for prefix, spec in _DOMAINS:
        if name.startswith(prefix):
            return tuple(spec.PROFILES)
    raise ValueError(f"archive {name!r}: no profile kind (its name starts with none of utility_, audit_, traces_)")


def check_run(name: str, profile: str, *, directory: str | os.PathLike | None = None, force: bool = False) -> Path:
    """Refuse (:class:`ArchiveRefused`) a run of archive ``name`` at ``profile`` before any
    computing: a profile not of the archive's kind, a folder that cannot be written, or a run that
    would replace a stored archive of another profile or (``smoke``/``book``) write into the folder
    the book reads, unless ``force`` (:func:`pategan_audit.archive_store.check_run`). Returns the
    archive root."""
    return store.check_run(name, profile, profiles=archive_profiles, directory=directory, force=force)


def run_archive(name: str, *, profile: str | None = None, n_jobs: int | None = None, backend: str | None = None,
                directory: str | os.PathLike | None = None, only: Sequence[str] | None = None,
                redo: Sequence[str] | None = None, force: bool = False) -> Archive:
    """Compute archive ``name`` at ``profile`` (default: the archive's committed profile,
    :data:`ARCHIVE_PROFILES`, ``large`` for all but one; ``smoke`` to check the pipeline in
    seconds) through the result cache (so it resumes) and write it.

    Archives in :data:`RESUMABLE` are written after every finished setting with
    ``"complete": false`` in their meta, so a session that ends mid-run leaves committable
    partial records; the next run at the same profile keeps them and computes the rest (wall
    and core seconds add up over sessions; ``sessions`` lists each one's code state).

    ``redo``: presets whose rows are stale (their preset changed since they were computed): their
    records are dropped and computed again with the code as it is now, the others are kept;
    ``sessions`` names the presets each session computed.

    Before any computing the run is refused (:func:`check_run`) when it would replace a stored
    archive of another profile, or write a ``smoke``/``book`` run into the archive folder the book
    reads; ``directory`` elsewhere, or ``force=True``, is the way out. Each save replaces the
    stored pair only once a setting or cell has finished (:func:`write_archive`)."""
    if name not in ARCHIVES:
        raise ValueError(f"unknown archive {name!r}; choose one of {', '.join(ARCHIVES)}")
    profile = profile or ARCHIVE_PROFILES.get(name, "large")
    if redo:
        if name not in RESUMABLE:
            raise ValueError(f"--redo needs a resumable archive ({', '.join(RESUMABLE)}); {name} runs whole")
        if only and set(only) != set(redo):
            raise ValueError("give --redo or --only, not both: --redo PRESETS recomputes just those presets")
        only = list(redo)
    if only and name not in RESUMABLE:
        raise ValueError(f"--only needs a resumable archive ({', '.join(RESUMABLE)}); {name} runs whole")
    check_run(name, profile, directory=directory, force=force)
    return run_session(name, ARCHIVES[name], profile=profile, resumable=name in RESUMABLE,
                       device=str(resolve_device()),  # where fit_many runs (RunOptions.device); checked before any work
                       n_jobs=n_jobs, backend=backend, directory=directory, only=only, redo=redo)


def drop_presets(name: str, presets: Sequence[str], *, reason: str,
                 directory: str | os.PathLike | None = None) -> Archive:
    """Remove the rows of ``presets`` from resumable archive ``name`` (their preset changed since
    they were computed and they are not to be shown as its results), keeping every other row;
    ``meta.json`` records what was dropped, when and why, and marks the archive incomplete so
    that the next run computes them again. Use it when there is no time to recompute now
    (``--redo`` drops and recomputes in one run)."""
    if name not in RESUMABLE:
        raise ValueError(f"--drop needs a resumable archive ({', '.join(RESUMABLE)}); {name} runs whole")
    if not reason.strip():
        raise ValueError("say why the rows are dropped (reason=...); it is kept in meta.json")
    check_folder(name, directory)
    current = read_archive(name, directory=directory)
    if current is None:
        raise ValueError(f"archive {name!r} does not exist")
    present = set(current.records["implementation"].astype(str))
    missing = sorted(set(presets) - present)
    if missing:
        raise ValueError(f"{missing}: no rows of these presets in {name}; it holds {sorted(present)}")
    stale = current.records["implementation"].astype(str).isin(set(presets))
    records = current.records[~stale].reset_index(drop=True)
    meta = {k: v for k, v in current.meta.items() if k != "name"}
    ran = records.groupby(list(SETTING_COLUMNS)).ngroups if set(SETTING_COLUMNS) <= set(records.columns) \
        else len(set(records["implementation"].astype(str)))
    total = len(meta.get("settings", [])) or None
    meta.update(complete=False, dropped=[*meta.get("dropped", []), {
        "presets": sorted(presets), "rows": int(stale.sum()), "reason": reason,
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}])
    if "settings_done" in meta:
        meta["settings_done"] = ran
        if total and isinstance(meta.get("runs"), str):
            meta["runs"] = re.sub(r"\d+ of (\d+) settings", f"{ran} of \\1 settings", meta["runs"])
    write_archive(name, records, meta, directory=directory)
    return read_archive(name, directory=directory)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pategan_audit.archive", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=sorted(ARCHIVES), help="which archived run to (re)compute")
    parser.add_argument("--profile", default=None, help="profile to run (default: the archive's own, large for all "
                        "but audit_ablation_groundhog_large; smoke checks the pipeline)")
    parser.add_argument("--directory", default=None, help="where to write (default: $PATEGAN_AUDIT_ARCHIVE, else results/archive)")
    parser.add_argument("--n-jobs", type=int, default=None, help="parallel workers (default: all cores)")
    parser.add_argument("--only", default="", help="comma-separated presets: run only their settings this time "
                        "(resumable audit archives; the rest stay to do)")
    parser.add_argument("--redo", default="", help="comma-separated presets whose rows are stale (the preset changed): "
                        "drop them and compute them again, keeping the rest (resumable archives)")
    parser.add_argument("--drop", default="", help="comma-separated presets whose rows are stale: remove them now "
                        "(with --reason) without recomputing; the next run computes them")
    parser.add_argument("--reason", default="", help="why --drop removes the rows (kept in meta.json)")
    parser.add_argument("--force", action="store_true", help="write even where the run would replace a stored "
                        "archive of another profile, or put a smoke/book run into the archive folder the book reads")
    parser.add_argument("--dask-scheduler", default="", help="address of a Dask scheduler (tcp://host:8786)")
    args = parser.parse_args(argv)
    if args.n_jobs is not None and args.n_jobs < 1:
        parser.error(f"--n-jobs must be a positive number of workers, got {args.n_jobs} (leave it out for all cores)")
    try:  # the PATEGAN_AUDIT_* run variables, read once here and checked before any work
        options = runner.activate(runner.RunOptions.from_env(n_jobs=args.n_jobs))
    except ValueError as exc:
        parser.error(str(exc))
    try:
        if args.drop:
            dropped = drop_presets(args.name, [n.strip() for n in args.drop.split(",") if n.strip()],
                                   reason=args.reason, directory=args.directory)
            print(f"dropped {args.drop} from {args.name}: {len(dropped.records)} records left", file=sys.stderr)
            return 0
        # every refusal comes before the Dask client and any computing
        check_run(args.name, args.profile or ARCHIVE_PROFILES.get(args.name, "large"), directory=args.directory,
                  force=args.force)
    except ArchiveRefused as exc:
        parser.error(str(exc))
    backend = None
    if args.dask_scheduler:
        from distributed import Client

        try:
            Client(args.dask_scheduler, timeout=30)
        except OSError as exc:
            parser.error(f"--dask-scheduler {args.dask_scheduler}: cannot reach it ({exc}); start one (`dask scheduler`) "
                         "or fix the address (tcp://host:8786)")
        backend = "dask"
    only = [n.strip() for n in args.only.split(",") if n.strip()] or None
    redo = [n.strip() for n in args.redo.split(",") if n.strip()] or None
    with runner.using(options):  # every map of the run sends these options to its jobs
        archive = run_archive(args.name, profile=args.profile, n_jobs=options.n_jobs, backend=backend,
                              directory=args.directory, only=only, redo=redo, force=args.force)
    print(f"wrote {archive_dir(args.directory) / args.name}: {len(archive.records)} records; {archive.caption()}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
