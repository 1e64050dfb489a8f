"""The archive table of the book's "How to reproduce" page, built from the committed archives.

One row per archive of :data:`pategan_audit.archive.ARCHIVES` (the paper-scale runs behind
``ganev2025elusive`` §5, §6.1 and §6.2): the paper's tables and figures it feeds, its protocol and
status, compute, machine, the code that computed it (and whether that code changed since,
:mod:`pategan_audit.provenance`) and the command that regenerates it. Every column but the first is
read from the archive's ``meta.json``; an archive not computed says so, with its command.
:func:`write_table` writes the markdown that ``book/reproduce.md`` includes (:mod:`pategan_audit.pages.bookhook`);
``python -m pategan_audit.pages.archives OUT.md`` writes it without a book build.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..archive import ARCHIVE_PROFILES, ARCHIVES, Archive, read_archive
from ..provenance import Tree, compare_archive, working_tree
from ..runner import atomic_write_text

__all__ = ["FEEDS", "COLUMNS", "NOT_COMPUTED", "INTERPRETERS", "regenerate_command", "protocol", "status",
           "compute", "machine", "archive_row", "archive_table", "table_markdown", "write_table", "main"]

#: The paper's tables and figures (or, beyond the paper, what the book shows) each archive feeds: the
#: one column not read from meta.json (the pages that read an archive are not recorded in it).
FEEDS: dict[str, str] = {
    "utility_large": "Table 4 (Cervical, Epileptic), Tables 5, 7, 10, Setting A; Figures 1, 8, 9 at ε = 1",
    "audit_querybased_large": "Figures 5a and 12: Querybased, paper channel",
    "audit_querybased_controlled_large": "Figure 5a's game in the controlled channel (beyond the paper)",
    "audit_groundhog_large": "Figures 5b and 12: GroundHog, paper and controlled channel",
    "audit_querybased_fixed_size_large": "Figure 5a's game with equal output sizes (beyond the paper)",
    "audit_calibration_large": "Figure 5's calibration lines: reference generators (beyond the paper)",
    "audit_calibration_channels_large": "what each side channel leaks on its own (beyond the paper)",
    "utility_gnmax_large": "Table 4's protocol for gnmax beside corrected (beyond the paper)",
    "utility_sweep_large": "Figures 1, 6-9: privacy-utility curves over the ε grid",
    "utility_tables_large": "Table 4 (Credit, ISOLET), Tables 8, 9, Setting A",
    "utility_best25_large": "Table 4 (Epileptic, ISOLET) at the paper's best of 25, Setting A (Epileptic)",
    "audit_ablation_querybased_large": "§6.2's violations fixed one at a time: Querybased",
    "audit_ablation_groundhog_large": "§6.2's violations fixed one at a time: GroundHog",
    "audit_targets_large": "§6.2's GroundHog target selection",
    "audit_corrected_large": "corrected in every channel of both attacks (beyond the paper)",
    "audit_gnmax_large": "gnmax in every channel of both attacks (beyond the paper)",
    "utility_variants_large": "Tables 6, 11, 12",
    "traces_paper": "Figures 2, 3, 4, 11",
    "utility_mnist_large": "Figure 10 (MNIST)",
    "audit_past_ceiling_querybased": "Figure 5a past the ceiling: 10,000 test outputs per world where 1,000 hit it "
                                     "(beyond the paper)",
    "audit_past_ceiling_groundhog": "Figure 5b past the ceiling: 2,000 test outputs per world where 1,000 hit it "
                                    "(beyond the paper)",
    "utility_alternatives_large": "PrivBayes, AIM and MST beside the privacy-utility curves (beyond the paper)",
    "audit_alternatives_large": "AIM, MST and PrivBayes in Figure 5a's game, controlled channel (beyond the paper)",
}

COLUMNS = ("archive", "feeds", "protocol", "status", "compute", "machine", "code", "regenerate")
_HEADERS = {"archive": "archive", "feeds": "the paper's tables and figures", "protocol": "protocol",
            "status": "status", "compute": "compute (measured)", "machine": "machine", "code": "code",
            "regenerate": "regenerate"}
NOT_COMPUTED = "not computed"
#: the interpreter of the archives whose code needs an optional extra: the marginal mechanisms' (dpmm)
#: environment of their own, built by ``make venv-alt``; every other archive runs in the project's
ALT_INTERPRETER = ".venv-alt/bin/python"
INTERPRETERS: dict[str, str] = {"utility_alternatives_large": ALT_INTERPRETER, "audit_alternatives_large": ALT_INTERPRETER}


def regenerate_command(name: str, profile: str | None = None) -> str:
    """The command that computes archive ``name`` (resuming where it is partial), with the interpreter
    of its environment where it needs an extra (:data:`INTERPRETERS`); ``--profile`` only where
    ``profile`` is not the archive's default."""
    if name not in ARCHIVES:
        raise ValueError(f"unknown archive {name!r}; the archives are {sorted(ARCHIVES)}")
    default = ARCHIVE_PROFILES.get(name, "large")
    extra = f" --profile {profile}" if profile and profile != default else ""
    return f"{INTERPRETERS.get(name, 'python')} -m pategan_audit.archive {name}{extra}"


def _count(n: int) -> str:
    return f"{int(n):,}"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _core_hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.2g}" if hours < 1 else f"{hours:.1f}"


def _settings(meta: Mapping) -> list[Mapping]:
    settings = meta.get("settings")
    return [s for s in settings if isinstance(s, Mapping)] if isinstance(settings, list) else []


def _caps(values) -> list[int]:
    return sorted({int(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)})


def _cells_protocol(cells: list[Mapping]) -> list[str]:
    """Per dataset (datasets of one protocol together): best of n (models × synthetic tables) and the
    iteration cap of its synthetic-data cells."""
    per: dict[str, tuple[set, set]] = {}
    for c in cells:
        best, caps = per.setdefault(str(c.get("dataset", "?")), (set(), set()))
        if c.get("n_models") and c.get("n_tables"):
            best.add((int(c["n_models"]), int(c["n_tables"])))
        caps.update(_caps([c.get("max_iter")]))
    groups: dict[str, list[str]] = {}
    for dataset, (best, caps) in per.items():
        if not best and not caps:
            continue
        text = ", ".join(f"{m} × {t} = {m * t}" for m, t in sorted(best, key=lambda mt: (mt[0] * mt[1], mt)))
        text = (f"best of {text}" if text else "") + (", " if text and caps else "")
        text += ("cap " + "/".join(_count(c) for c in _caps(caps))) if caps else ""
        groups.setdefault(text, []).append(dataset)
    return [f"{', '.join(datasets)}: {text}" for text, datasets in groups.items()]


def _settings_caps(settings: list[Mapping]) -> list[str]:
    """Per attack: the iteration cap of most settings and the presets capped otherwise."""
    out = []
    for attack in dict.fromkeys(str(s.get("attack", "?")) for s in settings):
        part = [s for s in settings if str(s.get("attack", "?")) == attack and isinstance(s.get("iterations"), int)]
        if not part:
            continue
        counts = pd.Series([int(s["iterations"]) for s in part]).value_counts()
        main = int(counts.index[0])
        others = dict.fromkeys(f"{s.get('implementation')} {_count(s['iterations'])}" for s in part
                               if int(s["iterations"]) != main)
        out.append(f"{attack} cap {_count(main)}" + (f" ({', '.join(others)})" if others else ""))
    return out


def protocol(meta: Mapping) -> str:
    """Profile, best of n (models × synthetic tables) and iteration cap per dataset, training rows where
    subsampled, shadow models (or outputs) per world and their iteration caps, as ``meta`` records them."""
    knobs = meta.get("profile_knobs") or {}
    cells = [c for c in meta.get("cells") or [] if isinstance(c, Mapping)]
    settings = _settings(meta)
    parts = [f"profile `{meta.get('profile', '?')}`", *_cells_protocol(cells)]
    rows = _caps(c.get("subsample") for c in cells)
    if rows:
        parts.append("training rows subsampled to " + ", ".join(_count(r) for r in rows))
    if "candidates" in meta and knobs.get("target_models"):
        parts.append(f"{_count(knobs['target_models'])} models per world for each of "
                     f"{_count(len(meta['candidates']))} candidates")
        if knobs.get("target_iterations"):
            parts.append(f"cap {_count(knobs['target_iterations'])}")
    elif not cells and knobs.get("n_per_world"):
        parts.append(f"{_count(knobs['n_per_world'])} {'shadow models' if settings else 'outputs'} per world"
                     + (" ({} / {} / {} train / validation / test)".format(*map(_count, knobs["outputs"]))
                        if knobs.get("outputs") else ""))
    parts += _settings_caps(settings)
    trace = meta.get("settings")
    if isinstance(trace, Mapping):  # the trace runs: one setting, a cap per figure
        caps = _caps(v for k, v in trace.items() if k.endswith("max_iter") or k.endswith("_iterations"))
        if caps:
            parts.append("cap " + "/".join(_count(c) for c in caps))
    return "; ".join(parts)


def _progress(meta: Mapping) -> tuple[int | None, int | None, str]:
    if meta.get("cells"):
        return meta.get("settings_done"), len(meta["cells"]), "cells"
    if "candidates" in meta:
        return meta.get("candidates_done"), len(meta["candidates"]), "candidates"
    if _settings(meta):
        return meta.get("settings_done"), len(_settings(meta)), "settings"
    return None, None, "parts"


def status(meta: Mapping) -> str:
    """"complete", or, for an archive saved part by part (``"complete": false``), "partial: k of n
    cells" (settings, candidates). An archive written once at its end records no ``complete``: it is
    complete."""
    if meta.get("complete", True) is not False:
        return "complete"
    done, total, unit = _progress(meta)
    return f"partial: {done} of {total} {unit}" if done is not None and total else "partial"


def compute(meta: Mapping) -> str:
    """Wall-clock time and the core-hours measured (CPU time of the run's processes), as recorded."""
    wall = meta.get("wall_seconds")
    text = f"{_duration(float(wall))} wall-clock" if isinstance(wall, (int, float)) else "wall-clock not recorded"
    cores = meta.get("core_seconds_measured")
    if isinstance(cores, (int, float)) and cores > 0:
        return f"{text}, {_core_hours(float(cores))} core-hours"
    return f"{text}, core time not measured"


def machine(meta: Mapping) -> str:
    """The machines the run used: each recorded (CPU count, device) of its sessions, else the CPU
    count of the meta; sessions that recorded neither are counted."""
    sessions = [s for s in meta.get("sessions") or [] if isinstance(s, Mapping)]
    recorded = list(dict.fromkeys((s["cpus"], s.get("device") or "cpu") for s in sessions if s.get("cpus")))
    if not recorded:
        cpus = meta.get("cpus")
        return f"{cpus} CPUs" if cpus else "not recorded"
    text = "; ".join(f"{cpus} CPUs" + ("" if device == "cpu" else f" + {device}") for cpus, device in recorded)
    unrecorded = sum(1 for s in sessions if not s.get("cpus"))
    return text + (f" ({unrecorded} of {len(sessions)} sessions unrecorded)" if unrecorded else "")


def _code(archive: Archive, now: Tree | None) -> str:
    commit = str(archive.meta.get("git_commit") or "")[:10] or "no commit recorded"
    comparison = compare_archive(archive, now=now)
    n = len(comparison.changed) + len(comparison.new) + len(comparison.removed)
    since = {"changed": f"{n} computing module{'s' if n != 1 else ''} changed since",
             "unchanged": "computing code unchanged since"}.get(comparison.status, "provenance unknown")
    return f"`{commit}`: {since}"


def archive_row(name: str, archive: Archive | None, *, now: Tree | None = None) -> dict[str, str]:
    """The table row of archive ``name`` (``archive``: :func:`~pategan_audit.archive.read_archive`'s
    answer, None where it has not been computed)."""
    feeds = FEEDS.get(name)
    if feeds is None:
        raise ValueError(f"archive {name!r} has no entry in pategan_audit.pages.archives.FEEDS; add the paper's "
                         "tables and figures it feeds there")
    if archive is None:
        return {"archive": name, "feeds": feeds, "protocol": "", "status": NOT_COMPUTED, "compute": "",
                "machine": "", "code": "", "regenerate": regenerate_command(name)}
    meta = archive.meta
    return {"archive": name, "feeds": feeds, "protocol": protocol(meta), "status": status(meta),
            "compute": compute(meta), "machine": machine(meta), "code": _code(archive, now),
            "regenerate": regenerate_command(name, meta.get("profile"))}


def archive_table(directory: str | os.PathLike | None = None, *, names: Sequence[str] | None = None,
                  now: Tree | None = None) -> pd.DataFrame:
    """One row per archive (:data:`~pategan_audit.archive.ARCHIVES`, utility then traces then auditing,
    each in definition order; or ``names``),
    read from ``directory`` (default: the committed archives), columns :data:`COLUMNS`."""
    if names is None:  # utility, then traces, then auditing: the book's order of sections
        order = ("utility_", "traces_", "audit_")
        names = sorted(ARCHIVES, key=lambda n: next((i for i, p in enumerate(order) if n.startswith(p)), len(order)))
    names = list(names)
    unknown = [n for n in names if n not in ARCHIVES]
    if unknown:
        raise ValueError(f"unknown archives {unknown}; the archives are {sorted(ARCHIVES)}")
    now = now or working_tree()
    rows = [archive_row(n, read_archive(n, directory=directory), now=now) for n in names]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _cell(text: str, column: str) -> str:
    text = str(text).replace("|", "\\|").replace("\n", " ")
    return f"`{text}`" if column in ("archive", "regenerate") else text


def table_markdown(table: pd.DataFrame) -> str:
    """``table`` (:func:`archive_table`) as a MyST/GitHub markdown table, with a line counting the
    archives complete, partial and not computed."""
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass the output of archive_table")
    lines = ["| " + " | ".join(_HEADERS[c] for c in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_cell(r[c], c) for c in COLUMNS) + " |" for _, r in table.iterrows()]
    states = table["status"].astype(str)
    partial = int(states.str.startswith("partial").sum())
    missing_n = int((states == NOT_COMPUTED).sum())
    summary = (f"{len(table)} archives: {len(table) - partial - missing_n} complete, {partial} partial, "
               f"{missing_n} not computed.")
    return summary + "\n\n" + "\n".join(lines) + "\n"


def write_table(path: str | os.PathLike, directory: str | os.PathLike | None = None) -> bool:
    """Write the archive table's markdown to ``path`` atomically; return True if its content changed
    (an unchanged file is left alone, so the page that includes it is not re-read)."""
    path = Path(path)
    text = table_markdown(archive_table(directory))
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pategan_audit.pages.archives", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="markdown file to write (the book includes book/_generated/archives.md)")
    parser.add_argument("--directory", default=None, help="archives folder (default: results/archive)")
    args = parser.parse_args(argv)
    changed = write_table(args.out, args.directory)
    print(f"{'wrote' if changed else 'unchanged'}: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
