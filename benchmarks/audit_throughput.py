"""Audit throughput: shadow models per minute, parallel (joblib/loky) vs sequential, one run.

Trains the same shadow models of one Querybased setting (protocols spec D.2; default:
borealis, 50 iterations) twice, with caching disabled — first in-process (``n_jobs=1``, the
baseline), then with ``--jobs`` loky workers — checks that both give identical features, and
reports models/minute, the speed-up ratio and each mode's mean per-model time as measured
inside the workers (ratios are hardware-independent enough to compare across machines;
absolute rates are not). Writes ``results/benchmarks/audit_throughput.json``
atomically.

    .venv/bin/python benchmarks/audit_throughput.py [--preset borealis] [--models 20] [--iterations 50] [--jobs 2]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from pategan_audit import runner
from pategan_audit.auditing import QueryFeaturiser, run_game
from pategan_audit.auditing.settings import AuditSetting


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="borealis")
    ap.add_argument("--models", type=int, default=20, help="shadow models per world")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    runner.activate(runner.RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once here

    setting = AuditSetting("querybased", args.preset, iterations=args.iterations)
    d_out, d_in = setting.data()
    kwargs = dict(n_per_world=args.models, n_synth_rows=setting.n_synth_rows(d_out, d_in),
                  featurise=QueryFeaturiser(), seed=0, cache_namespace=None)
    factory = setting.factory(d_out)
    factory(0).fit(d_out)  # warm-up: imports and first-call overheads stay out of the baseline

    timings = {}
    outputs = {}
    start = time.perf_counter()  # start the loky workers (import torch there) once, timed apart
    run_game(factory, d_out, d_in, options=runner.RunOptions.defaulted(None, n_jobs=args.jobs),
             **{**kwargs, "n_per_world": args.jobs})
    worker_start = time.perf_counter() - start
    for label, n_jobs in (("sequential", 1), ("parallel", args.jobs)):
        start = time.perf_counter()
        outputs[label] = run_game(factory, d_out, d_in, options=runner.RunOptions.defaulted(None, n_jobs=n_jobs), **kwargs)
        timings[label] = time.perf_counter() - start
    identical = bool(np.array_equal(outputs["sequential"].features_in, outputs["parallel"].features_in)
                     and np.array_equal(outputs["sequential"].features_out, outputs["parallel"].features_out))
    n_models = 2 * args.models
    result = {
        "benchmark": "audit_throughput",
        "preset": args.preset,
        "setting": "querybased worst case (D.2)",
        "iterations": args.iterations,
        "shadow_models": n_models,
        "jobs": args.jobs,
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "models_per_minute": {k: round(60 * n_models / v, 2) for k, v in timings.items()},
        "speedup_parallel_vs_sequential": round(timings["sequential"] / timings["parallel"], 3),
        # per-model compute time as each worker measured it (GameOutputs.seconds): a ratio above 1
        # means the workers slowed each other down (shared cores, memory bandwidth, other load)
        "mean_model_seconds": {k: round(float(np.mean([t for w in g.seconds.values() for t in w])), 4)
                               for k, g in outputs.items()},
        "identical_features": identical,
        "worker_start_seconds": round(worker_start, 3),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "note": ("the sequential baseline runs in-process; the parallel run reuses already started loky workers "
                 "(their start-up, incl. a warm-up batch, is worker_start_seconds); ratios, not absolute rates, "
                 "are comparable across machines"),
    }
    path = runner.REPO_ROOT / "results" / "benchmarks" / "audit_throughput.json"
    runner.atomic_write_text(path, json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    main()
