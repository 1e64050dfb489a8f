"""Independent redraws of the Cervical Table 4 cells at the paper's protocol (paper §5, Table 4;
issue #36, item 3).

The archive ``results/archive/utility_large`` holds each Cervical Table 4 cell once, at master
seed 0: 5 models x 5 tables, the 10,000-iteration cap, the 12-classifier panel with the
archive's AdaBoost (SAMME, :data:`pategan_audit.archive.ARCHIVE_ADABOOST`). One draw of a
best-of-25 maximum cannot say where the paper's number lies among the draws of the protocol.
This script draws the same cells again (every field equal to the archive's cell except ``seed``)
at other master seeds, so that tolerances can be calibrated on independent redraws and each
paper number judged by its percentile among our draws.

    nice .venv/bin/python benchmarks/redraws.py [--presets smartnoise,borealis] [--seeds 1-5]
    nice .venv/bin/python benchmarks/redraws.py --check --presets smartnoise   # seed 0 == archive?
    .venv/bin/python benchmarks/redraws.py --summary                           # best-of-25 per draw

Outputs (``results/experiments/redraws/``, written atomically after each finished cell):

``table4_cervical.csv``
    The tidy records of :mod:`pategan_audit.utility.run` (a superset of the archive's columns)
    plus ``master_seed``; one block per (preset, master seed).
``table4_cervical.meta.json``
    Provenance: the archive's cells, code state (git commit, source hash), versions, command,
    CPUs, and per cell its wall and core seconds and the machine load at its start and end.
``archive_check.json``
    ``--check``: seed 0 recomputed through this script against the archive's records.

Cells run one at a time in one process with one torch/BLAS thread (the machine is shared); a
rerun skips the (preset, seed) pairs already in the CSV, so an interrupted run resumes.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from pategan_audit import archive, archive_store, runner
from pategan_audit.runner import REPO_ROOT, atomic_write_text, single_thread
from pategan_audit.utility.cells import UtilityCell

ARCHIVE = "utility_large"
DATASET = "cervical_cancer"
#: the presets in order of measured cost per cell (the archive's fit + scoring seconds): the
#: budget-stopped PATE presets first, the two that run the full 10,000 iterations last
PRESETS_BY_COST = ("smartnoise", "corrected", "borealis", "updated", "synthcity", "original", "turing")
OUT_DIR = REPO_ROOT / "results" / "experiments" / "redraws"
RECORDS = "table4_cervical.csv"
META = "table4_cervical.meta.json"
CHECK = "archive_check.json"
#: the columns that must agree for a redraw at seed 0 to be the archive's draw
CHECK_KEYS = ("model", "table", "classifier")
CHECK_VALUES = ("cell", "num_teachers", "n_train", "auroc", "auprc", "status", "single_class", "iterations")
#: how each archived cell fitted its M models: ``"single"``, one fit per model (the archive's first
#: session, before the utility cells fitted through the replica axis), or ``"batched"``, one
#: ``fit_many`` call (turing, recomputed in a later session). Both are the same protocol; their
#: weights agree up to float32 rounding, which the MLP classifier amplifies (AUROC in the 3rd
#: digit on a smartnoise table), so a redraw fits as its archived cell did and seed 0 gives the
#: archive's records (``--check``: smartnoise's 300 equal but one AUROC, 1.1e-16 apart)
ARCHIVE_FIT = {"turing": "batched"}
#: the largest AUROC/AUPRC difference the seed-0 check counts as rounding (a few units in the
#: last place of a double near 1)
ROUNDING = 1e-12


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _log(msg: str) -> None:
    print(f"[redraws {_now()}] {msg}", file=sys.stderr, flush=True)


def archive_cells(meta: dict) -> dict[str, UtilityCell]:
    """The archive's Cervical Setting-B cells by preset, rebuilt from its ``meta["cells"]``.

    A cell's cache key leaves out ``adaboost="SAMME"`` (:func:`pategan_audit.utility.cells._key_fields`),
    so a cell without the field ran the archive's SAMME; each rebuilt cell's key must equal the
    recorded one."""
    cells = {}
    for key in meta.get("cells", []):
        if key.get("kind") != "setting_b" or key.get("dataset") != DATASET:
            continue
        fields = {k: v for k, v in key.items() if k != "kind"}
        fields.setdefault("adaboost", archive.ARCHIVE_ADABOOST)
        cell = UtilityCell(**fields)
        if json.loads(json.dumps(cell.cache_key())) != key:
            raise ValueError(f"archive {ARCHIVE}: the rebuilt {cell.implementation} cell does not match its recorded "
                             f"key; the UtilityCell fields changed since the archive was made")
        cells[cell.implementation] = cell
    if not cells:
        raise ValueError(f"archive {ARCHIVE} holds no {DATASET} Setting-B cells; is results/archive/{ARCHIVE} intact?")
    return cells


def redraw(cell: UtilityCell, seed: int) -> UtilityCell:
    """The archive's ``cell`` at master seed ``seed``, every other field unchanged."""
    return dataclasses.replace(cell, seed=int(seed))


def evaluate_as_archived(cell: UtilityCell) -> pd.DataFrame:
    """:func:`pategan_audit.utility.run.evaluate_cell` of ``cell``, its models fitted as the archive
    fitted them (:data:`ARCHIVE_FIT`): uncached, each draw computed."""
    from pategan_audit.utility.run import _default_factory, evaluate_cell, load_dataset, resolve_teachers

    if ARCHIVE_FIT.get(cell.implementation, "single") == "batched":
        return evaluate_cell(cell)
    data = load_dataset(cell.dataset, cell.subsample)
    factory = _default_factory(cell, resolve_teachers(cell, len(data.train)), data)
    return evaluate_cell(cell, data=data, make_generator=lambda seed: factory(seed))


def parse_seeds(text: str) -> list[int]:
    """``"1-5"``, ``"1,2,7"`` or a mix (``"1-3,8"``) -> sorted distinct non-negative seeds."""
    seeds: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                seeds.update(range(lo, hi + 1))
            elif part:
                seeds.add(int(part))
        except ValueError:
            raise ValueError(f"--seeds {text!r}: give non-negative integers as '1-5' or '1,2,3'") from None
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds {text!r}: give at least one non-negative integer, e.g. '1-5'")
    return sorted(seeds)


def parse_presets(text: str | None, available: Iterable[str]) -> list[str]:
    """The presets asked for (default: all of the archive's), in order of cost."""
    available = list(available)
    asked = [p.strip() for p in text.split(",") if p.strip()] if text else available
    unknown = sorted(set(asked) - set(available))
    if unknown or not asked:
        raise ValueError(f"--presets {text!r}: {unknown or 'none given'} not among the archive's Cervical cells; "
                         f"choose from {', '.join(available)}")
    rank = {p: i for i, p in enumerate(PRESETS_BY_COST)}
    return sorted(dict.fromkeys(asked), key=lambda p: rank.get(p, len(rank)))


def _read_records(path: Path) -> pd.DataFrame | None:
    return pd.read_csv(path) if path.exists() else None


def done_pairs(records: pd.DataFrame | None) -> set[tuple[str, int]]:
    """The (preset, master seed) pairs whose cells the records already hold."""
    if records is None or records.empty:
        return set()
    return set(zip(records["implementation"].astype(str), records["master_seed"].astype(int)))


def _code_state() -> dict[str, Any]:
    return {**archive_store.code_at_start(), "versions": archive_store.versions()}


def run_redraws(cells: dict[str, UtilityCell], presets: Sequence[str], seeds: Sequence[int], *,
                out_dir: Path = OUT_DIR, evaluate: Callable[[UtilityCell], pd.DataFrame] | None = None,
                command: str = "", code_state: Callable[[], dict] = _code_state) -> pd.DataFrame:
    """Draw each (preset, seed) cell not yet in ``out_dir``'s records, preset by preset, and write
    the records and the meta after each finished cell; returns all records.

    ``evaluate``: ``cell -> tidy records`` (default :func:`evaluate_as_archived`)."""
    if 0 in seeds:
        raise ValueError("master seed 0 is the archive's own draw, not a redraw; check it with --check")
    missing = [p for p in presets if p not in cells]
    if missing:
        raise ValueError(f"presets {missing} have no archived Cervical cell; choose from {', '.join(cells)}")
    evaluate = evaluate or evaluate_as_archived
    out_dir = Path(out_dir)
    records_path, meta_path = out_dir / RECORDS, out_dir / META
    records = _read_records(records_path)
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    done = done_pairs(records)
    todo = [(p, s) for p in presets for s in seeds if (p, s) not in done]
    _log(f"{len(todo)} cells to draw ({len(done)} already done): "
         + ", ".join(f"{p}@{s}" for p, s in todo))
    session = {"started": _now(), "command": command, "cpus": os.cpu_count(), "n_jobs": 1, **code_state(),
               "cells": [f"{p}@{s}" for p, s in todo]}
    meta = {
        "name": "redraws_table4_cervical",
        "what": "independent redraws of the Cervical Table 4 cells of archive utility_large at the paper's protocol: "
                "every field of the archived cell except the master seed",
        "archive": ARCHIVE,
        "archive_cells": {p: cells[p].cache_key() for p in cells},
        "adaboost": f"{archive.ARCHIVE_ADABOOST} (the archive's panel)",
        "fit": {p: ARCHIVE_FIT.get(p, "single") for p in cells},
        "runs": "best of 5 models x 5 tables per draw, 10,000-iteration cap, 12 classifiers, one draw per master seed",
        "started": meta.get("started", session["started"]),
        "cells_done": list(meta.get("cells_done", [])),
        "sessions": list(meta.get("sessions", [])) + [session],
    }
    for preset, seed in todo:
        cell = redraw(cells[preset], seed)
        _log(f"start {preset} master seed {seed} (load {os.getloadavg()[0]:.2f})")
        entry = {"implementation": preset, "master_seed": seed, "started": _now(),
                 "load_start": [round(x, 2) for x in os.getloadavg()]}
        t0, c0 = time.perf_counter(), time.process_time()
        result = evaluate(cell).copy()
        entry.update(wall_seconds=round(time.perf_counter() - t0, 1), core_seconds=round(time.process_time() - c0, 1),
                     finished=_now(), load_end=[round(x, 2) for x in os.getloadavg()])
        result["master_seed"] = seed
        entry["cell"] = str(result["cell"].iloc[0]) if len(result) else None
        records = result if records is None or records.empty else pd.concat([records, result], ignore_index=True)
        atomic_write_text(records_path, records.to_csv(index=False))
        meta["cells_done"].append(entry)
        meta["finished"] = entry["finished"]
        meta["wall_seconds"] = round(sum(e["wall_seconds"] for e in meta["cells_done"]), 1)
        meta["core_seconds"] = round(sum(e["core_seconds"] for e in meta["cells_done"]), 1)
        meta["sessions"][-1]["finished"] = entry["finished"]
        atomic_write_text(meta_path, json.dumps(meta, indent=2, default=str) + "\n")
        _log(f"done {preset} master seed {seed}: {entry['wall_seconds']} s wall, {entry['core_seconds']} core s")
    return records if records is not None else pd.DataFrame()


def best_of_25(records: pd.DataFrame) -> pd.DataFrame:
    """Table 4's number per (preset, master seed): the mean over the classifiers of each
    classifier's best over the draw's tables (:func:`pategan_audit.utility.aggregate.best_of_n`)."""
    from pategan_audit.utility.aggregate import best_of_n

    best = best_of_n(records, keys=("implementation", "seed"))
    return best.rename(columns={"seed": "master_seed"})[["implementation", "master_seed", "auroc", "auprc", "n",
                                                         "n_classifiers"]]


def check_archive(cells: dict[str, UtilityCell], presets: Sequence[str], archived: pd.DataFrame, *,
                  evaluate: Callable[[UtilityCell], pd.DataFrame] | None = None) -> dict[str, dict]:
    """Recompute each preset's cell at master seed 0 through this script and compare it with the
    archive's records (after the CSV round trip both went through): same rows, equal values."""
    evaluate = evaluate or evaluate_as_archived
    from io import StringIO

    out = {}
    for preset in presets:
        cell = redraw(cells[preset], 0)
        t0 = time.perf_counter()
        ours = pd.read_csv(StringIO(evaluate(cell).to_csv(index=False)))
        wall = time.perf_counter() - t0
        theirs = archived[(archived["dataset"] == DATASET) & (archived["implementation"] == preset)]
        merged = theirs.merge(ours, on=list(CHECK_KEYS), how="outer", suffixes=("_archive", "_redraw"),
                              indicator=True)
        unmatched = int((merged["_merge"] != "both").sum())
        differing, rows_off = {}, pd.Series(False, index=merged.index)
        for col in CHECK_VALUES:
            a, b = merged[f"{col}_archive"], merged[f"{col}_redraw"]
            same = (a == b) | (a.isna() & b.isna())
            if not same.all():
                differing[col] = int((~same).sum())
                rows_off |= ~same
        scores = max(float((merged[f"{m}_archive"] - merged[f"{m}_redraw"]).abs().max()) for m in ("auroc", "auprc"))
        exact_elsewhere = not set(differing) - {"auroc", "auprc"}
        out[preset] = {"rows_archive": len(theirs), "rows_redraw": len(ours), "rows_unmatched": unmatched,
                       "columns_differing": differing, "max_abs_score_difference": scores,
                       "rows_differing": merged.loc[rows_off, list(CHECK_KEYS)].head(10).to_dict("records"),
                       "identical": unmatched == 0 and not differing,
                       # every record present, every non-score value equal, scores equal to the last
                       # bits of a double (a tie broken by rounding in a classifier's scores)
                       "within_rounding": unmatched == 0 and exact_elsewhere and scores <= ROUNDING,
                       "wall_seconds": round(wall, 1)}
        _log(f"check {preset} seed 0: {out[preset]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", default=None, help=f"comma-separated (default: all, in order of cost: "
                                                     f"{', '.join(PRESETS_BY_COST)})")
    ap.add_argument("--seeds", default="1-5", help="master seeds, e.g. '1-5' or '1,2,3' (default 1-5; 0 is the archive's)")
    ap.add_argument("--out-dir", default=None, help="output folder (default results/experiments/redraws)")
    ap.add_argument("--check", action="store_true", help="recompute master seed 0 and compare with the archive")
    ap.add_argument("--summary", action="store_true", help="print the best-of-25 per draw beside the archive's")
    args = ap.parse_args(argv)
    runner.activate(runner.RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once here
    out_dir = Path(args.out_dir) if args.out_dir else OUT_DIR
    arch = archive.read_archive(ARCHIVE)
    if arch is None:
        raise SystemExit(f"archive {ARCHIVE} not found under results/archive/; it is committed with the project")
    cells = archive_cells(arch.meta)
    try:
        presets = parse_presets(args.presets, cells)
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        ap.error(str(exc))
    command = "python benchmarks/redraws.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.summary:
        records = _read_records(out_dir / RECORDS)
        base = best_of_25(arch.records[(arch.records["dataset"] == DATASET)
                                       & (arch.records["implementation"].isin(list(cells)))])
        table = pd.concat([base] + ([best_of_25(records)] if records is not None else []), ignore_index=True)
        print(table.sort_values(["implementation", "master_seed"]).to_string(index=False))
        return 0
    single_thread()
    if args.check:
        result = check_archive(cells, presets, arch.records)
        path = out_dir / CHECK
        previous = json.loads(path.read_text()) if path.exists() else {}
        previous.update({p: {**r, "checked": _now(), "command": command, **_code_state()} for p, r in result.items()})
        atomic_write_text(path, json.dumps(previous, indent=2, default=str) + "\n")
        return 0 if all(r["within_rounding"] for r in result.values()) else 1
    run_redraws(cells, presets, seeds, out_dir=out_dir, command=command)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
