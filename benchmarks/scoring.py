"""Where a utility cell's scoring time goes, and serial vs parallel scoring, in one run
(paper §5, App. C; design.md §4).

1. Per classifier: the seconds of ``fit`` and of scoring the test split (predict/decision scores
   plus AUROC/AUPRC) of each of the twelve classifiers, on one Epileptic Seizure and one ISOLET
   table. The table is *synthetic*: drawn from ``smartnoise`` (ε = 1) after a short fit
   (``--gen-iter`` iterations), so that the classifiers see a generated table, not the real split;
   the generator's fit and draw seconds are recorded beside the panel's.
2. A cell's S tables (``--tables``, drawn from the same smartnoise model) scored three ways:
   the serial path the cells used before (``evaluate_table`` per table, one after the other),
   and :func:`pategan_audit.utility.run.score_tables` (every (table, classifier) pair a job) at 1
   and 2 workers. The records are compared value for value (``identical``: bit-equal AUROC/AUPRC);
   the ratios are wall-time ratios against the serial path in the same run.

Every job runs with one torch/BLAS thread (the runner's configuration), the serial arm too. The
1-minute load average before and after each part is recorded: other jobs on the machine slow
both arms, and a 2-worker arm cannot run faster than the free cores allow. ``--quick`` is a smoke
check (1,000-row stratified training subsample, ``mlp_max_iter=200``, 2 tables); it is never
run by the test suite.

Run: ``python benchmarks/scoring.py [--quick] [--tables 3]``; writes
``results/benchmarks/scoring.json`` (``scoring_quick.json`` with ``--quick``) atomically.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from pategan_audit import runner
from pategan_audit.classifiers import (CLASSIFIERS, ClassifierKnobs, _raw_scores, evaluate_table, make_classifier,
                                       prepare_table, score_metrics)
from pategan_audit.implementations import create
from pategan_audit.utility.cells import derive_seed, teacher_count, teacher_ratio, to_training_dtypes
from pategan_audit.utility.run import load_dataset, score_tables

DATASETS = ("epileptic_seizure", "isolet")
OUT = runner.REPO_ROOT / "results" / "benchmarks"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def synthetic_tables(name: str, *, subsample: int | None, gen_iter: int, n: int, seed: int) -> tuple[list, dict]:
    """``n`` tables drawn from one smartnoise model fitted on ``name``'s training split, as a
    utility cell draws them (training dtypes restored), and the generator's seconds."""
    data = load_dataset(name, subsample)
    k = teacher_count(n_train=len(data.train), ratio=teacher_ratio(name))
    start = time.perf_counter()
    model = create("smartnoise", epsilon=1.0, delta=1e-5, seed=derive_seed(seed, 0), num_teachers=k,
                   max_iter=gen_iter, record=False).fit(data.train, label=data.label)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    tables = [(to_training_dtypes(model.sample(len(data.train), seed=derive_seed(seed, 0, s, 1)), data.train),
               derive_seed(seed, 0, s, 2)) for s in range(n)]
    draw_s = (time.perf_counter() - start) / n
    return tables, {"generator": "smartnoise", "epsilon": 1.0, "teachers": k, "iterations": model.trace.iterations,
                    "fit_seconds": round(fit_s, 3), "draw_seconds_per_table": round(draw_s, 3),
                    "rows": len(data.train), "columns": data.train.shape[1]}


def per_classifier(synth: pd.DataFrame, test: pd.DataFrame, *, seed: int, knobs: ClassifierKnobs) -> list[dict]:
    """Fit and scoring seconds of each classifier on one table (the classifier's own fit and its
    test scores; the same random states as the panel)."""
    table = prepare_table(synth, test, classifiers=CLASSIFIERS, seed=seed)
    rows = []
    with runner.job_threads(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped LR/SVM/MLP iterations warn, as in the panel itself
        for name, s in zip(table.classifiers, table.seeds):
            model = make_classifier(name, seed=s, knobs=knobs)
            start = time.perf_counter()
            model.fit(table.X_train, table.y_train.astype(float) if name == "XGB" else table.y_train)
            fit_s = time.perf_counter() - start
            start = time.perf_counter()
            raw, fitted = _raw_scores(model, name, table.X_test)
            column = raw[:, 0] if name == "XGB" else raw[:, int(np.flatnonzero(np.asarray(fitted) == 1)[0])]
            auroc, _ = score_metrics(table.y_test, column)
            score_s = time.perf_counter() - start
            rows.append({"classifier": name, "fit_s": round(fit_s, 4), "score_s": round(score_s, 4),
                         "auroc": round(auroc, 4)})
    total = sum(r["fit_s"] + r["score_s"] for r in rows)
    for r in rows:
        r["share_of_panel"] = round((r["fit_s"] + r["score_s"]) / total, 4)
    return rows


def serial_vs_parallel(tables: list, test: pd.DataFrame, *, knobs: ClassifierKnobs) -> dict:
    """Wall seconds of scoring ``tables``: the serial path (``evaluate_table`` per table) and
    :func:`score_tables` at 1 and 2 workers, with the scores compared exactly."""
    load_before = _load()
    start = time.perf_counter()
    with runner.job_threads():
        serial = [evaluate_table(t, test, classifiers=CLASSIFIERS, seed=s, knobs=knobs) for t, s in tables]
    t_serial = time.perf_counter() - start
    out = {"tables": len(tables), "jobs": len(tables) * len(CLASSIFIERS), "serial_s": round(t_serial, 2)}
    for workers in (1, 2):
        start = time.perf_counter()
        scored = score_tables(tables, test, classifiers=CLASSIFIERS, knobs=knobs,
                              options=runner.RunOptions.defaulted(None, n_jobs=workers))
        wall = time.perf_counter() - start
        same = all(a[["classifier", "auroc", "auprc"]].equals(b[["classifier", "auroc", "auprc"]])
                   for a, (b, _) in zip(serial, scored))
        out[f"parallel_{workers}"] = {"wall_s": round(wall, 2), "ratio_vs_serial": round(t_serial / wall, 3),
                                      "identical": bool(same),
                                      "core_seconds": round(sum(sec for _, sec in scored), 2)}
    out["load_before"], out["load_after"] = load_before, _load()
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke check: 1,000 training rows, mlp_max_iter=200, 2 tables")
    ap.add_argument("--tables", type=int, default=None, help="tables of the serial-vs-parallel part (default 3; quick 2)")
    ap.add_argument("--gen-iter", type=int, default=20, help="smartnoise iterations before drawing the tables")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--parallel-on", default="epileptic_seizure", choices=DATASETS,
                    help="dataset of the serial-vs-parallel part")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    runner.activate(runner.RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once here
    n_tables = args.tables if args.tables is not None else (2 if args.quick else 3)
    if n_tables < 1 or args.gen_iter < 1:
        raise SystemExit("--tables and --gen-iter must be positive integers")
    subsample = 1000 if args.quick else None
    knobs = ClassifierKnobs(mlp_max_iter=200 if args.quick else 1000, xgb_n_jobs=1)
    runner.single_thread()
    doc: dict = {"benchmark": "scoring", "quick": args.quick, "subsample": subsample, "knobs": knobs.as_dict(),
                 "cpus": os.cpu_count(), "threads_per_job": 1, "python": platform.python_version(),
                 "seed": args.seed, "datasets": {},
                 "table_source": f"smartnoise (ε=1) after {args.gen_iter} iterations, training dtypes restored"}
    name = "scoring_quick.json" if args.quick else "scoring.json"
    for ds in args.datasets:
        n = n_tables if ds == args.parallel_on else 1
        tables, gen = synthetic_tables(ds, subsample=subsample, gen_iter=args.gen_iter, n=n, seed=args.seed)
        test = load_dataset(ds, subsample).test
        load_before = _load()
        rows = per_classifier(tables[0][0], test, seed=tables[0][1], knobs=knobs)
        entry = {"generator": gen, "per_classifier": rows,
                 "panel_fit_s": round(sum(r["fit_s"] for r in rows), 2),
                 "panel_score_s": round(sum(r["score_s"] for r in rows), 2),
                 "load_before": load_before, "load_after": _load()}
        print(f"{ds}: panel fit {entry['panel_fit_s']} s, scoring {entry['panel_score_s']} s; "
              f"generator fit {gen['fit_seconds']} s ({gen['iterations']} iterations)")
        for r in sorted(rows, key=lambda r: -r["share_of_panel"]):
            print(f"  {r['classifier']:<20} fit {r['fit_s']:>8.3f} s  score {r['score_s']:>7.3f} s  {r['share_of_panel']:.1%}")
        if ds == args.parallel_on:
            entry["serial_vs_parallel"] = serial_vs_parallel(tables, test, knobs=knobs)
            print(json.dumps(entry["serial_vs_parallel"], indent=2))
        doc["datasets"][ds] = entry
        doc["measured_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        runner.atomic_write_text(OUT / name, json.dumps(doc, indent=2))
    return doc


if __name__ == "__main__":
    main()
