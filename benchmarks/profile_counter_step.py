"""Where the time of a counter-stream group goes (issue 40, item 3): ``fit_many`` of one preset
in the GroundHog-shaped workload of ``benchmarks/many_models.py`` at R replicas with
``streams="counter"``, under ``torch.profiler`` on the CPU and, when given, a GPU. Writes the
operator table (self time, sorted) and the wall time of set-up, training and write-back, so a
session lent an accelerator can see whether the group iteration is bound by the Philox draws, the
critic's kernels or per-replica host work.

    .venv/bin/python benchmarks/profile_counter_step.py [--preset original] [--replicas 1600]
        [--iterations 20] [--device cuda] [--out results/benchmarks/profile_counter_step.txt]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from many_models import workload  # noqa: E402

from pategan_audit import runner  # noqa: E402
from pategan_audit.implementations import fit_many  # noqa: E402


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="original")
    ap.add_argument("--replicas", type=int, default=1600)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--rows", type=int, default=40, help="operator rows in the table")
    ap.add_argument("--out", type=Path, default=runner.REPO_ROOT / "results" / "benchmarks" / "profile_counter_step.txt")
    args = ap.parse_args(argv)
    data, kwargs, label = workload("groundhog", args.preset, args.iterations)
    run = dict(label=label, streams="counter", device=args.device)
    fit_many(args.preset, data, seeds=[10_000], **run, **{**kwargs, "max_iter": 2})  # warm-up
    lines = [f"preset {args.preset}, R = {args.replicas}, {args.iterations} iterations, device {args.device}, "
             f"torch {torch.__version__}, training threads {runner.current_options().train_threads}, load {os.getloadavg()}"]
    for its in (1, args.iterations):  # set-up and write-back with one iteration, then the run
        start = time.perf_counter()
        fit_many(args.preset, data, seeds=range(args.replicas), **run, **{**kwargs, "max_iter": its})
        if args.device != "cpu":
            torch.cuda.synchronize()
        wall = time.perf_counter() - start
        lines.append(f"{its} iteration(s): {wall:.3f} s wall, {wall / args.replicas * 1e3:.3f} ms per model")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device != "cpu" else [])
    with profile(activities=activities) as prof:
        fit_many(args.preset, data, seeds=range(args.replicas), **run, **kwargs)
    key = "self_cuda_time_total" if args.device != "cpu" else "self_cpu_time_total"
    lines.append(prof.key_averages().table(sort_by=key, row_limit=args.rows))
    text = "\n".join(lines)
    runner.atomic_write_text(args.out, text)
    print(text)
    return text


if __name__ == "__main__":
    main()
