"""Many models as one batched computation: models per second of ``fit_many`` (the replica axis)
against today's per-model path, in the same run, with the same thread count.

Scenarios (audit paper §6.2 and §5; protocols spec D.2, D.3, B.4):

* ``querybased``: the worst-case Querybased game, D (5 rows), 100 iterations, 2 teachers, each
  preset with the overrides of :class:`pategan_audit.auditing.settings.AuditSetting`.
* ``groundhog``: Cervical with the target (686 rows), the paper's 1,000-iteration cap, 5
  teachers (budget-driven presets stop earlier when their accountant says so).
* ``bestof25``: the fits of one best-of-25 utility cell on Cervical (5 models at the paper's
  protocol: full split, 10,000-iteration cap, k = 2). The baseline is 5 separate fits; the
  batched path fits the 5 as one stack, so its ratio is bounded by 5 (the cell's 25 tables
  and 12 classifiers are not part of this measurement).

For each (scenario, preset) the baseline fits ``--single`` models one by one with
``fit_many(batched=False)`` (exactly ``create(...).fit(...)`` per seed) and the batched path
fits ``--replicas`` models (seeds 0..R-1) with ``fit_many``; both run in this process, one torch
thread each (``RunOptions.train_threads``: ``$PATEGAN_AUDIT_TRAIN_THREADS``, default 1), after a warm-up fit. The machine's load
average is recorded before and after every measurement. Rows are appended to
``results/benchmarks/many_models.json`` (atomic writes) as they are measured, so an
interrupted run resumes; ``--refresh`` measures again.

    .venv/bin/python benchmarks/many_models.py [--scenarios querybased groundhog bestof25]
        [--presets original ...] [--replicas 200] [--single 4] [--refresh]

``--project`` prints the projected time of the paper's main audit (2 attacks x 7 presets x
2 worlds x 1,000 models, two channels) on this machine from the measured batched rates.

``--streams-grid R ...`` measures instead the two random-stream modes of ``fit_many`` (issue 40,
item 3): for each R, R models fitted batched with the default per-replica torch generators and
R with ``streams="counter"`` (one counter-based call per iteration for all replicas), in this
process, the same thread count, alternating (``--streams-repeats`` timings per mode, the best
kept), ``--streams-iterations`` iterations each (GroundHog-shaped by
default: Cervical with the target, 5 teachers); small R is repeated up to ``--streams-models``
models so that every timing covers enough work. The presets: those with counter streams, the
WGAN family's ``original``, the neural family (borealis, smartnoise, corrected) and updated by default.
Rows go to ``--streams-out`` (default ``results/benchmarks/many_models_streams.json``); the ratio
is counter over torch models per second.

    .venv/bin/python benchmarks/many_models.py --streams-grid 1 16 64 256 [--streams-iterations 10]
        [--scenarios groundhog] [--presets original borealis] [--device cpu] [--streams-out FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

from pategan_audit import datasets, runner
from pategan_audit.auditing.settings import AuditSetting
from pategan_audit.implementations import PRESETS, batched_support, fit_many
from pategan_audit.implementations.many import _counter_presets

OUT = runner.REPO_ROOT / "results" / "benchmarks" / "many_models.json"
STREAMS_OUT = runner.REPO_ROOT / "results" / "benchmarks" / "many_models_streams.json"
SCENARIOS = ("querybased", "groundhog", "bestof25")
#: the --streams-grid presets by default: the WGAN family's original, the neural family and updated;
#: synthcity also has counter streams but costs about a second per model-iteration here, so it
#: runs only when asked (--presets synthcity)
STREAMS_PRESETS = ("original", "borealis", "smartnoise", "corrected", "updated")


def workload(scenario: str, preset: str, iterations: int | None = None) -> tuple[object, dict, str | None]:
    """(training table, fit_many keyword arguments, label) of one scenario (``iterations``: the
    audit games' cap, default 100 for querybased and 1,000 for groundhog)."""
    if scenario in ("querybased", "groundhog"):
        iterations = iterations or (100 if scenario == "querybased" else 1000)
        setting = AuditSetting(scenario, preset, iterations=iterations)
        d_out, d_in = setting.data()
        factory = setting.factory(d_out)
        kwargs = {"epsilon": factory.epsilon, "delta": factory.delta, "record": False, **factory.overrides}
        return d_in, kwargs, None
    if scenario == "bestof25":
        ds = datasets.load("cervical_cancer")
        kwargs = {"epsilon": 1.0, "delta": 1e-5, "record": False, "num_teachers": 2, "max_iter": 10_000}
        if preset == "updated":
            kwargs["lam"] = 1e-3
        if preset == "corrected":
            kwargs["public_bounds"] = dict(ds.bounds)
        return ds.train, kwargs, ds.label
    raise ValueError(f"unknown scenario {scenario!r}; choose from {SCENARIOS}")


def measure(scenario: str, preset: str, *, replicas: int, single: int) -> dict:
    data, kwargs, label = workload(scenario, preset)
    fit_many(preset, data, seeds=[10_000], label=label, **{**kwargs, "max_iter": 2})  # warm-up (imports, first Adam)
    load_before = os.getloadavg()
    start = time.perf_counter()
    singles = fit_many(preset, data, seeds=range(single), label=label, batched=False, **kwargs)
    t_single = time.perf_counter() - start
    start = time.perf_counter()
    batched = fit_many(preset, data, seeds=range(replicas), label=label, progress=True, **kwargs)
    t_batched = time.perf_counter() - start
    load_after = os.getloadavg()
    same_iterations = all(a.trace.iterations == b.trace.iterations for a, b in zip(singles, batched))
    per_single, per_batched = t_single / single, t_batched / replicas
    return {
        "scenario": scenario, "preset": preset,
        "batched": bool(batched[0].trace.extra.get("batched")),
        "iterations": sorted({m.trace.iterations for m in batched}),
        "single_models": single, "single_seconds": round(t_single, 3),
        "replicas": replicas, "batched_seconds": round(t_batched, 3),
        "models_per_second": {"single": round(1 / per_single, 4), "batched": round(1 / per_batched, 4)},
        "seconds_per_model": {"single": round(per_single, 5), "batched": round(per_batched, 5)},
        "ratio": round(per_single / per_batched, 2),
        "same_iterations_as_single": same_iterations,
        "threads": runner.current_options().train_threads,
        "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load_after],
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _timed_fits(preset: str, data, kwargs: dict, label, *, replicas: int, models: int, streams: str,
                device: str) -> tuple[float, list]:
    """Seconds per model of ``fit_many`` at R = ``replicas``, repeated (fresh seeds) until at
    least ``models`` models are fitted."""
    start, fitted, done = time.perf_counter(), [], 0
    while done < max(models, replicas):
        seeds = range(done, done + replicas)
        fitted = fit_many(preset, data, seeds=seeds, label=label, streams=streams, device=device, **kwargs)
        done += replicas
    return (time.perf_counter() - start) / done, fitted


def measure_streams(scenario: str, preset: str, *, replicas: int, iterations: int, models: int,
                    device: str = "cpu", repeats: int = 2) -> dict:
    """Models per second of ``fit_many`` with ``streams="torch"`` and ``streams="counter"`` at
    R = ``replicas`` (same process, thread count and device). The modes alternate ABBA...
    (``repeats`` timings each) so that a drift in the machine's load favours neither; each mode
    reports its best timing (the least disturbed by other processes) and all of them."""
    data, kwargs, label = workload(scenario, preset, iterations)
    warm = {**kwargs, "max_iter": 2}
    for mode in ("torch", "counter"):  # warm-up (imports, first Adam, first Philox call)
        fit_many(preset, data, seeds=[10_000], label=label, streams=mode, device=device, **warm)
    row: dict = {"scenario": scenario, "preset": preset, "replicas": replicas, "iterations": iterations,
                 "device": device, "threads": runner.current_options().train_threads, "repeats": repeats}
    times: dict[str, list[float]] = {"torch": [], "counter": []}
    loads: dict[str, list] = {"torch": [], "counter": []}
    recorded: dict[str, object] = {}
    for i in range(repeats):
        for mode in (("torch", "counter") if i % 2 == 0 else ("counter", "torch")):
            load_before = os.getloadavg()
            per_model, fitted = _timed_fits(preset, data, kwargs, label, replicas=replicas, models=models,
                                            streams=mode, device=device)
            times[mode].append(per_model)
            loads[mode].append([round(x, 2) for x in (*load_before, *os.getloadavg())])
            recorded[mode] = fitted[0].trace.extra.get("streams")
    for mode in ("torch", "counter"):
        best = min(times[mode])
        row[mode] = {"seconds_per_model": round(best, 5), "models_per_second": round(1 / best, 3),
                     "all_seconds_per_model": [round(t, 5) for t in times[mode]],
                     "models_per_timing": max(models, replicas), "streams_recorded": recorded[mode],
                     "load_before_after": loads[mode]}
    row["ratio_counter_over_torch"] = round(row["torch"]["seconds_per_model"] / row["counter"]["seconds_per_model"], 3)
    row["measured_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return row


def streams_main(args) -> dict:
    """The ``--streams-grid`` run: one row per (scenario, preset, R), appended atomically."""
    out = args.streams_out
    doc = json.loads(out.read_text()) if out.exists() else {"benchmark": "many_models_streams", "rows": []}
    rows = doc["rows"]
    scenarios = [s for s in args.scenarios if s != "bestof25"] if args.scenarios != list(SCENARIOS) else ["groundhog"]
    presets = args.presets if args.presets != list(PRESETS) else list(STREAMS_PRESETS)
    for scenario in scenarios:
        for preset in presets:
            for r in args.streams_grid:
                key = (scenario, preset, r, args.streams_iterations, args.device)
                if not args.refresh and any((x["scenario"], x["preset"], x["replicas"], x["iterations"], x["device"]) == key
                                            for x in rows):
                    continue
                print(f"[many_models streams] {scenario} / {preset}: R = {r}, {args.streams_iterations} iterations",
                      flush=True)
                row = measure_streams(scenario, preset, replicas=r, iterations=args.streams_iterations,
                                      models=args.streams_models, device=args.device, repeats=args.streams_repeats)
                print(f"  torch {row['torch']['models_per_second']}/s  counter {row['counter']['models_per_second']}/s  "
                      f"ratio {row['ratio_counter_over_torch']}  load {os.getloadavg()}", flush=True)
                rows[:] = [x for x in rows if (x["scenario"], x["preset"], x["replicas"], x["iterations"], x["device"]) != key]
                rows.append(row)
                doc.update(cpus=os.cpu_count(), python=platform.python_version(), torch=torch.__version__)
                runner.atomic_write_text(out, json.dumps(doc, indent=2))
    print(f"wrote {out}")
    return doc


def project_main_audit(rows: list[dict], cores: int) -> dict:
    """Seconds of the paper's main audit from measured batched rates: per preset and attack
    2 worlds x 1,000 models, in the paper and the controlled channel (same training cost),
    spread over ``cores`` worker processes (perfect scaling assumed; say so)."""
    rate = {(r["scenario"], r["preset"]): r["seconds_per_model"]["batched"] for r in rows}
    total, parts = 0.0, {}
    for preset in PRESETS:
        for attack in ("querybased", "groundhog"):
            if (attack, preset) not in rate:
                continue
            s = rate[(attack, preset)] * 2 * 1000 * 2
            parts[f"{attack}/{preset}"] = round(s, 1)
            total += s
    return {"core_seconds": round(total, 1), "wall_hours_on_cores": round(total / cores / 3600, 3), "cores": cores,
            "parts_core_seconds": parts,
            "note": "2 worlds x 1,000 models x 2 channels per (attack, preset); sampling/featurising excluded"}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    ap.add_argument("--presets", nargs="+", default=list(PRESETS), choices=PRESETS)
    ap.add_argument("--replicas", type=int, default=200, help="models fitted by fit_many on querybased (bestof25: always 5)")
    ap.add_argument("--groundhog-replicas", type=int, default=64,
                    help="models fitted by fit_many on groundhog (compute-bound there: the ratio does not grow with R)")
    ap.add_argument("--single", type=int, default=4, help="models fitted one by one for the baseline")
    ap.add_argument("--refresh", action="store_true", help="measure rows already in the results file again")
    ap.add_argument("--project", action="store_true", help="print the projected main-audit time and exit")
    ap.add_argument("--streams-grid", type=int, nargs="+", default=None, metavar="R",
                    help="measure streams='torch' against streams='counter' at these R (default scenario groundhog, preset original)")
    ap.add_argument("--streams-iterations", type=int, default=10, help="iterations per model in the --streams-grid run")
    ap.add_argument("--streams-models", type=int, default=16, help="models per timing at least (small R is repeated)")
    ap.add_argument("--streams-repeats", type=int, default=2, help="timings per mode, alternating (ABBA...)")
    ap.add_argument("--device", default="cpu", help="torch device of the --streams-grid run")
    ap.add_argument("--streams-out", type=Path, default=STREAMS_OUT, help="results file of the --streams-grid run")
    args = ap.parse_args(argv)
    runner.activate(runner.RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once here
    if args.streams_grid:
        bad = [r for r in args.streams_grid if r < 1]
        if bad or min(args.streams_iterations, args.streams_models, args.streams_repeats) < 1:
            ap.error("--streams-grid, --streams-iterations, --streams-models and --streams-repeats take positive integers")
        no_counter = [p for p in args.presets if args.presets != list(PRESETS) and p not in _counter_presets()]
        if no_counter:
            ap.error(f"--streams-grid measures presets with counter streams ({', '.join(_counter_presets())}); "
                     f"{', '.join(no_counter)} has none")
        return streams_main(args)

    doc = json.loads(OUT.read_text()) if OUT.exists() else {"benchmark": "many_models", "rows": []}
    rows = doc["rows"]
    if not args.project:
        for scenario in args.scenarios:
            for preset in args.presets:
                key = (scenario, preset)
                if not args.refresh and any((r["scenario"], r["preset"]) == key for r in rows):
                    continue
                replicas, single = {"bestof25": (5, 5), "groundhog": (args.groundhog_replicas, args.single)}.get(
                    scenario, (args.replicas, args.single))
                print(f"[many_models] {scenario} / {preset}: {single} single fits, then {replicas} batched "
                      f"(batched step: {batched_support(preset, **workload(scenario, preset)[1])})", flush=True)
                row = measure(scenario, preset, replicas=replicas, single=single)
                print(f"  ratio {row['ratio']}x  ({row['seconds_per_model']})  load {row['load_after']}", flush=True)
                rows[:] = [r for r in rows if (r["scenario"], r["preset"]) != key] + [row]
                doc.update(cpus=os.cpu_count(), python=platform.python_version(), torch=torch.__version__)
                runner.atomic_write_text(OUT, json.dumps(doc, indent=2))
    doc["main_audit_projection"] = project_main_audit(rows, cores=os.cpu_count() or 1)
    runner.atomic_write_text(OUT, json.dumps(doc, indent=2))
    print(json.dumps(doc["main_audit_projection"], indent=2))
    print(f"wrote {OUT}")
    return doc


if __name__ == "__main__":
    main()
