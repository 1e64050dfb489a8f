"""Cost probe for issue 41's utility and audit runs: the fit time of MST, AIM and PrivBayes
(:mod:`pategan_audit.alternatives`, dpmm 0.1.9) at ε = 1 on Cervical's training split, at 4, 8
and 16 uniform bins from the public bounds (the paper's audit setting, ``ganev2025elusive`` §6.2),
``n_jobs=1``, seeded noise. Then one MST fit on Epileptic at 8 bins if MST on Cervical at 8 bins
took under 120 s.

``--bins B`` probes only the three mechanisms at ``B`` bins on Cervical, fit and sample timed
apart (no Epileptic cell). 8 is the defended setting: at 8, Cervical's 0/1 columns and its counts
with at most 8 values (STDs_number, STDs_N_diagnosis) keep one code per value, the wide ones get
8 equal-width bins, and a pairwise marginal has at most 64 cells, about 11 of the 686 training
rows per cell, while at 16 it has 256 cells (under 3 rows per cell, below the ε = 1 noise) and
the clique sizes that bound MST's and AIM's inference grow fourfold per pair. Each fitted model
draws as many rows as the training split and the row records whether that sample is degenerate
(distinct rows, the label's counts, columns constant in the sample but not in the data).

Each fit runs in a child process that is stopped after ``--cap`` seconds (recorded as
"over <cap> s"); cells not started before ``--budget`` seconds of the whole probe are recorded as
"not run (probe budget)". Per fit: wall seconds, the child's CPU seconds (less sensitive to other
jobs on the machine than wall time; for a stopped fit, the CPU seconds it had used, a lower
bound) and the 1-minute load average before and after. Results are
written atomically after every cell, so a stopped probe leaves what it measured.

Run (needs the ``alternatives`` extra): ``nice -n 19 python benchmarks/alternatives_cost.py``;
writes ``results/benchmarks/alternatives_cost.json``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import time
from pathlib import Path

from pategan_audit import runner

OUT = Path(runner.REPO_ROOT) / "results" / "benchmarks" / "alternatives_cost.json"
ORDER = [("priv-bayes", 4), ("mst", 4), ("aim", 4), ("mst", 8), ("priv-bayes", 8), ("priv-bayes", 16), ("aim", 8),
         ("mst", 16), ("aim", 16)]


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _fit(dataset: str, mechanism: str, bins: int, seed: int, queue) -> None:
    from pategan_audit import datasets
    from pategan_audit.alternatives import DPMMGenerator

    runner.single_thread()
    ds = datasets.load(dataset)
    model = DPMMGenerator(mechanism, epsilon=1.0, delta=1e-5, seed=seed, bins=bins, domain=ds.bounds, n_jobs=1)
    cpu, wall = time.process_time(), time.perf_counter()
    model.fit(ds.train, label=ds.label)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    cpu, wall = time.process_time(), time.perf_counter()
    synth = model.sample(len(ds.train), seed=0)
    constant = [c for c in ds.train.columns if synth[c].nunique() == 1 and ds.train[c].nunique() > 1]
    queue.put({"wall_s": fit_wall, "cpu_s": fit_cpu, "rows_sampled": len(synth),
               "sample_wall_s": time.perf_counter() - wall, "sample_cpu_s": time.process_time() - cpu,
               "sample_distinct_rows": int(len(synth.drop_duplicates())),
               "data_distinct_rows": int(len(ds.train.drop_duplicates())),
               "sample_label_counts": {str(k): int(v) for k, v in synth[ds.label].value_counts().sort_index().items()},
               "data_label_counts": {str(k): int(v) for k, v in ds.train[ds.label].value_counts().sort_index().items()},
               "columns_constant_in_sample_only": constant})


def timed_fit(dataset: str, mechanism: str, bins: int, *, seed: int, cap: float) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_fit, args=(dataset, mechanism, bins, seed, queue))
    load_before, start = os.getloadavg()[0], time.perf_counter()
    proc.start()
    proc.join(cap)
    row = {"dataset": dataset, "mechanism": mechanism, "bins": bins, "epsilon": 1.0, "n_jobs": 1,
           "load_before": round(load_before, 2)}
    if proc.is_alive():
        cpu = _cpu_seconds(proc.pid)  # includes the child's start-up (imports, data loading)
        proc.terminate()
        proc.join()
        row.update(status=f"over {cap:.0f} s", wall_s=None, cpu_s=None,
                   cpu_s_when_stopped=None if cpu is None else round(cpu, 1))
    elif proc.exitcode != 0:
        row.update(status=f"failed (exit code {proc.exitcode})", wall_s=None, cpu_s=None)
    else:
        got = queue.get()
        row.update(status="ok", wall_s=round(got.pop("wall_s"), 1), cpu_s=round(got.pop("cpu_s"), 1),
                   process_wall_s=round(time.perf_counter() - start, 1))
        row.update({k: round(v, 2) if isinstance(v, float) else v for k, v in got.items()})
    row["load_after"] = round(os.getloadavg()[0], 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=600.0, help="seconds after which one fit is stopped")
    parser.add_argument("--budget", type=float, default=3600.0, help="seconds after which no new fit starts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bins", type=int, default=None,
                        help="probe only PrivBayes, MST and AIM at this many bins on Cervical (e.g. 8)")
    args = parser.parse_args()
    if args.cap <= 0 or args.budget <= 0:
        parser.error("--cap and --budget must be > 0 seconds")
    if args.bins is not None and args.bins < 2:
        parser.error("--bins must be an integer >= 2 (e.g. --bins 8)")
    import dpmm  # noqa: F401  (fail here, before any fit, when the extra is missing)
    from importlib.metadata import version

    start, rows = time.perf_counter(), []
    meta = {"dpmm": version("dpmm"), "numpy": version("numpy"), "python": platform.python_version(),
            "cpus": os.cpu_count(), "cap_s": args.cap, "budget_s": args.budget, "seed": args.seed,
            "domain": "public bounds (Dataset.bounds)", "noise": "seeded", "delta": 1e-5, "epsilon": 1.0,
            "n_iters": "dpmm's defaults", "sample_rows": "as many as the training split, seed 0",
            "load_1min_at_start": round(os.getloadavg()[0], 2), "nice": os.nice(0)}
    if args.bins is None:
        cells = [("cervical_cancer", m, b) for m, b in ORDER] + [("epileptic_seizure", "mst", 8)]
    else:
        cells = [("cervical_cancer", m, args.bins) for m in ("priv-bayes", "mst", "aim")]
    for dataset, mechanism, bins in cells:
        gate = next((r for r in rows if r["mechanism"] == "mst" and r["bins"] == 8), {})
        if dataset == "epileptic_seizure" and not (gate.get("wall_s") or 120) < 120:
            rows.append({"dataset": dataset, "mechanism": mechanism, "bins": bins,
                         "status": "not run (MST on Cervical at 8 bins took 120 s or more, or did not finish)"})
        elif time.perf_counter() - start > args.budget:
            rows.append({"dataset": dataset, "mechanism": mechanism, "bins": bins, "status": "not run (probe budget)"})
        else:
            rows.append(timed_fit(dataset, mechanism, bins, seed=args.seed, cap=args.cap))
        print(rows[-1], flush=True)
        runner.atomic_write_text(OUT, json.dumps({"meta": meta, "fits": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
