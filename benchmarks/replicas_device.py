"""The replica axis on an accelerator: ``fit_many`` on ``--device`` against ``fit_many`` on the
CPU, the same replicas, in the same run.

Two parts, both printed as a table and written to ``--out`` (atomic writes, one JSON document):

* **agreement**: the same seeds fitted for a few iterations on the CPU and on the device. The
  random draws stay on each replica's CPU generators, so the two runs differ only by float
  rounding: the script reports the relative L2 distance of the generators' parameters
  (``max_rel_param_diff``) and whether every replica stopped at the same iteration.
* **throughput**: the GroundHog workload of ``many_models.py`` (Cervical with the target, k = 5,
  ``--iterations`` iterations) for each preset, fitted as R batched replicas on the CPU (the
  baseline, ``--cpu-replicas`` models) and on the device for each R of ``--replicas`` (one chunk
  each). The ratio is CPU seconds per model over device seconds per model; both sides use the
  torch thread count of ``fit_many`` (``RunOptions.train_threads``: ``$PATEGAN_AUDIT_TRAIN_THREADS``, default 1), and the load
  average is recorded around every measurement.

    python benchmarks/replicas_device.py --device cuda [--presets original smartnoise]
        [--agreement-presets original smartnoise borealis updated synthcity turing corrected]
        [--replicas 100 400 1600] [--cpu-replicas 100] [--iterations 100] [--out FILE]

Needs no xgboost; runs on the accelerator machine's own torch.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from many_models import workload  # noqa: E402  (the GroundHog workload, shared with many_models.py)

from pategan_audit import runner  # noqa: E402
from pategan_audit.implementations import fit_many  # noqa: E402

OUT = runner.REPO_ROOT / "results" / "benchmarks" / "replicas_device.json"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _parameters(model) -> np.ndarray:
    """All floating parameters of a fitted model's networks, flattened (CPU, float64)."""
    parts = []
    for value in vars(model).values():
        if isinstance(value, torch.nn.Module):
            parts += [p.detach().cpu().double().ravel() for p in value.parameters()]
    if not parts:
        raise ValueError(f"{type(model).__name__} holds no torch networks to compare")
    return torch.cat(parts).numpy()


def agreement(preset: str, device: torch.device, *, replicas: int = 4, iterations: int = 5) -> dict:
    data, kwargs, label = workload("groundhog", preset)
    kw = {**kwargs, "max_iter": iterations}
    cpu = fit_many(preset, data, seeds=range(replicas), label=label, device="cpu", **kw)
    dev = fit_many(preset, data, seeds=range(replicas), label=label, device=device, **kw)
    diffs = []
    for a, b in zip(cpu, dev):
        pa, pb = _parameters(a), _parameters(b)
        diffs.append(float(np.linalg.norm(pa - pb) / max(np.linalg.norm(pa), 1e-30)))
    return {"preset": preset, "replicas": replicas, "iterations": iterations,
            "max_rel_param_diff": max(diffs),
            "same_iterations": all(a.trace.iterations == b.trace.iterations for a, b in zip(cpu, dev)),
            "batched": bool(dev[0].trace.extra.get("batched"))}


def timed(preset: str, device: torch.device, replicas: int, iterations: int) -> dict:
    data, kwargs, label = workload("groundhog", preset)
    kw = {**kwargs, "max_iter": iterations}
    fit_many(preset, data, seeds=[10_000, 10_001], label=label, device=device, **{**kw, "max_iter": 2})  # warm-up
    load_before = os.getloadavg()
    _sync(device)
    t0 = time.perf_counter()
    models = fit_many(preset, data, seeds=range(replicas), label=label, device=device, max_replicas=replicas, **kw)
    _sync(device)
    seconds = time.perf_counter() - t0
    its = sorted({m.trace.iterations for m in models})
    return {"preset": preset, "device": str(device), "replicas": replicas, "iterations": its,
            "seconds": round(seconds, 3), "seconds_per_model": round(seconds / replicas, 5),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()]}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--presets", nargs="+", default=["original", "smartnoise"])
    ap.add_argument("--agreement-presets", nargs="+", default=None, help="presets checked for agreement (default: --presets)")
    ap.add_argument("--replicas", nargs="+", type=int, default=[100, 400, 1600])
    ap.add_argument("--cpu-replicas", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    runner.activate(runner.RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once here
    device = torch.device(args.device)
    out = Path(args.out)
    doc = {"benchmark": "replicas_device", "device": str(device),
           "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor(),
           "cpus": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__,
           "threads": runner.current_options().train_threads, "iterations": args.iterations,
           "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "agreement": [], "rows": []}

    def save() -> None:
        runner.atomic_write_text(out, json.dumps(doc, indent=2))

    for preset in args.agreement_presets or args.presets:
        try:
            row = agreement(preset, device)
        except Exception as err:  # a family that cannot run on the device: recorded, the rest goes on
            row = {"preset": preset, "error": f"{type(err).__name__}: {err}"[:500]}
        doc["agreement"].append(row)
        save()
        print(f"[agreement] {preset}: " + (row["error"] if "error" in row else
              f"max rel param diff {row['max_rel_param_diff']:.2e}, same iterations {row['same_iterations']}, "
              f"batched {row['batched']}"), flush=True)
    for preset in args.presets:
        if any(r["preset"] == preset and "error" in r for r in doc["agreement"]):
            continue
        base = timed(preset, torch.device("cpu"), args.cpu_replicas, args.iterations)
        doc["rows"].append({**base, "ratio_vs_cpu": 1.0})
        save()
        print(f"[cpu] {preset} R={args.cpu_replicas}: {base['seconds']} s, {base['seconds_per_model']} s/model", flush=True)
        for r in args.replicas:
            row = timed(preset, device, r, args.iterations)
            row["ratio_vs_cpu"] = round(base["seconds_per_model"] / row["seconds_per_model"], 2)
            doc["rows"].append(row)
            save()
            print(f"[{device}] {preset} R={r}: {row['seconds']} s, {row['seconds_per_model']} s/model, "
                  f"x{row['ratio_vs_cpu']} vs cpu", flush=True)
    print(f"{'preset':<12}{'device':<8}{'R':>6}{'s/model':>10}{'ratio':>8}")
    for row in doc["rows"]:
        print(f"{row['preset']:<12}{row['device']:<8}{row['replicas']:>6}{row['seconds_per_model']:>10}{row['ratio_vs_cpu']:>8}")
    return doc


if __name__ == "__main__":
    main()
