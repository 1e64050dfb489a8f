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

``--scenario querybased`` times the fit on the audit's worst case instead (``datasets.worst_case("in")``:
five rows of three 0/1 columns, public bounds {0, 1}; §6.2's Querybased game fits 2,000 of them per
audit at 1,000 shadow models per world), and ``--n-iters N [N ...]`` passes ``n_iters=N`` to the mechanism
(the iterations of private-pgm's inference, a post-processing of the noisy measurements: it
changes utility, not the privacy guarantee; MST's own selection step runs 2,500 more whatever
``n_iters`` is). ``--out`` names the JSON file.

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

import pandas as pd

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


def _table(dataset: str) -> tuple[pd.DataFrame, str | None, dict]:
    """Training rows, label and public bounds of a probed dataset (``querybased``: the audit's worst case)."""
    from pategan_audit import datasets

    if dataset == "querybased":
        return datasets.worst_case("in"), None, {c: (0.0, 1.0) for c in ("A", "B", "C")}
    ds = datasets.load(dataset)
    return ds.train, ds.label, ds.bounds


def _fit(dataset: str, mechanism: str, bins: int, seed: int, n_iters: int | None, queue) -> None:
    from pategan_audit.alternatives import DPMMGenerator

    runner.single_thread()
    train, label, bounds = _table(dataset)
    model = DPMMGenerator(mechanism, epsilon=1.0, delta=1e-5, seed=seed, bins=bins, domain=bounds, n_jobs=1,
                          model_kwargs={} if n_iters is None else {"n_iters": n_iters})
    cpu, wall = time.process_time(), time.perf_counter()
    model.fit(train, label=label)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    cpu, wall = time.process_time(), time.perf_counter()
    synth = model.sample(len(train), seed=0)
    constant = [c for c in train.columns if synth[c].nunique() == 1 and train[c].nunique() > 1]
    counts = {}
    if label is not None:
        counts = {"sample_label_counts": {str(k): int(v) for k, v in synth[label].value_counts().sort_index().items()},
                  "data_label_counts": {str(k): int(v) for k, v in train[label].value_counts().sort_index().items()}}
    queue.put({"wall_s": fit_wall, "cpu_s": fit_cpu, "rows_sampled": len(synth),
               "sample_wall_s": time.perf_counter() - wall, "sample_cpu_s": time.process_time() - cpu,
               "sample_distinct_rows": int(len(synth.drop_duplicates())),
               "data_distinct_rows": int(len(train.drop_duplicates())), **counts,
               "columns_constant_in_sample_only": constant})


def timed_fit(dataset: str, mechanism: str, bins: int, *, seed: int, cap: float, n_iters: int | None = None) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_fit, args=(dataset, mechanism, bins, seed, n_iters, queue))
    load_before, start = os.getloadavg()[0], time.perf_counter()
    proc.start()
    proc.join(cap)
    row = {"dataset": dataset, "mechanism": mechanism, "bins": bins, "epsilon": 1.0, "n_jobs": 1,
           "n_iters": "default" if n_iters is None else n_iters, "load_before": round(load_before, 2)}
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


def _iterations(text: str) -> int | None:
    """An ``--n-iters`` value: an integer, or ``default`` for dpmm's own (None)."""
    return None if text == "default" else int(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=600.0, help="seconds after which one fit is stopped")
    parser.add_argument("--budget", type=float, default=3600.0, help="seconds after which no new fit starts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bins", type=int, default=None,
                        help="probe only PrivBayes, MST and AIM at this many bins on Cervical (e.g. 8)")
    parser.add_argument("--scenario", choices=("cervical", "querybased"), default="cervical",
                        help="querybased: the three mechanisms on the audit's five-row worst case")
    parser.add_argument("--n-iters", type=_iterations, nargs="+", default=None,
                        help="private-pgm inference iterations, one cell per value: integers or 'default' (dpmm's)")
    parser.add_argument("--mechanisms", nargs="+", default=None, choices=("priv-bayes", "mst", "aim"),
                        help="with --bins or --scenario querybased: only these mechanisms")
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON file to write")
    args = parser.parse_args()
    if args.cap <= 0 or args.budget <= 0:
        parser.error("--cap and --budget must be > 0 seconds")
    if args.bins is not None and args.bins < 2:
        parser.error("--bins must be an integer >= 2 (e.g. --bins 8)")
    if args.n_iters is not None and min((n for n in args.n_iters if n is not None), default=1) < 1:
        parser.error("--n-iters must be an integer >= 1 (e.g. --n-iters 1000)")
    import dpmm  # noqa: F401  (fail here, before any fit, when the extra is missing)
    from importlib.metadata import version

    start, rows = time.perf_counter(), []
    meta = {"dpmm": version("dpmm"), "numpy": version("numpy"), "python": platform.python_version(),
            "cpus": os.cpu_count(), "cap_s": args.cap, "budget_s": args.budget, "seed": args.seed,
            "domain": "public bounds (Dataset.bounds)", "noise": "seeded", "delta": 1e-5, "epsilon": 1.0,
            "n_iters": "dpmm's defaults" if args.n_iters is None else "per fit", "scenario": args.scenario,
            "sample_rows": "as many as the training split, seed 0",
            "load_1min_at_start": round(os.getloadavg()[0], 2), "nice": os.nice(0)}
    mechanisms = args.mechanisms or ("priv-bayes", "mst", "aim")
    if args.scenario == "querybased":  # three 0/1 columns: two values each, whatever the bins
        meta["domain"] = "public bounds {0, 1} of the worst case"
        cells = [("querybased", m, args.bins or 2) for m in mechanisms]
    elif args.bins is None:
        cells = [("cervical_cancer", m, b) for m, b in ORDER] + [("epileptic_seizure", "mst", 8)]
    else:
        cells = [("cervical_cancer", m, args.bins) for m in mechanisms]
    cells = [(*cell, n) for n in (args.n_iters or [None]) for cell in cells]
    for dataset, mechanism, bins, n_iters in cells:
        gate = next((r for r in rows if r["mechanism"] == "mst" and r["bins"] == 8), {})
        if dataset == "epileptic_seizure" and not (gate.get("wall_s") or 120) < 120:
            rows.append({"dataset": dataset, "mechanism": mechanism, "bins": bins,
                         "status": "not run (MST on Cervical at 8 bins took 120 s or more, or did not finish)"})
        elif time.perf_counter() - start > args.budget:
            rows.append({"dataset": dataset, "mechanism": mechanism, "bins": bins, "status": "not run (probe budget)"})
        else:
            rows.append(timed_fit(dataset, mechanism, bins, seed=args.seed, cap=args.cap, n_iters=n_iters))
        print(rows[-1], flush=True)
        runner.atomic_write_text(args.out, json.dumps({"meta": meta, "fits": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
