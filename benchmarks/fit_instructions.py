"""Instructions of one single fit per preset in two source trees, counted by callgrind (issue 39,
"a single fit is no slower"): a measure that the machine's load does not move.

``train_speed.py --single-fit`` times fits, and on this 2-core machine two processes of identical
code differ by up to about 20 % in CPU time (its A/A run), more under load. Valgrind's callgrind
counts the instructions a process executes instead: the same binary, inputs and environment give
the same count whatever else the machine does. It does not see everything that costs time
(cache misses, memory layout), so it complements the timed benchmark; it does not replace it.

For each preset and each arm (each ``--base COMMIT``, checked out as a temporary git worktree
by ``train_speed.base_worktree``, and this working tree) one worker process runs under
``valgrind --tool=callgrind --instr-atstart=no``: it loads Cervical Cancer, fits the preset once
untimed (imports, first-call costs), switches instrumentation on (``callgrind_control -i on``),
fits once more with another seed (the settings of ``train_speed.SINGLE_FIT_KWARGS``, one torch
thread) and switches it off. The count is the ``totals:`` line of callgrind's output: the
instructions of that second fit only. The workers run with ``PYTHONHASHSEED=0``: with randomised
string hashing, two runs of the same tree differed by 0.2 % (1,326.0 M and 1,329.1 M for smartnoise). About 5 minutes per arm and preset here (valgrind runs the
imports about 50 times slower even when not counting).

    python benchmarks/fit_instructions.py --base b192b4e^ bcdd9e9 [--presets updated smartnoise original]

prints a table and writes ``results/benchmarks/fit_instructions.json`` (or ``--out``) atomically:
per preset, the count of each base, of the working tree, and new/base for each base.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_speed  # noqa: E402  (the sibling benchmark: worktree, presets and fit settings)

from pategan_audit import runner  # noqa: E402
from pategan_audit.runner import atomic_write_text  # noqa: E402

OUT = runner.REPO_ROOT / "results" / "benchmarks" / "fit_instructions.json"
DEFAULT_PRESETS = ("updated", "smartnoise", "original")


def totals(callgrind_out: str) -> int:
    """The instruction count of a callgrind output file's ``totals:`` line (``summary:`` when
    there is none); a ValueError when it has neither."""
    found = {}
    for line in callgrind_out.splitlines():
        for key in ("totals:", "summary:"):
            if line.startswith(key):
                found[key] = int(line.split()[1])
    if "totals:" in found:
        return found["totals:"]
    if "summary:" in found:
        return found["summary:"]
    raise ValueError("no 'totals:' or 'summary:' line in the callgrind output: did valgrind run to the end?")


def worker(preset: str) -> None:
    """Run inside valgrind: one untimed fit, then one fit with instrumentation switched on."""
    import torch

    from pategan_audit import datasets
    from pategan_audit.implementations import create

    torch.set_num_threads(1)
    ds = datasets.load(train_speed.SINGLE_FIT_DATASET)
    kwargs = train_speed.fit_kwargs(preset, ds.bounds)
    create(preset, seed=0, **kwargs).fit(ds.train, ds.label)
    control = ["callgrind_control", "-i"]
    subprocess.run([*control, "on", str(os.getpid())], check=True, capture_output=True)
    create(preset, seed=1, **kwargs).fit(ds.train, ds.label)
    subprocess.run([*control, "off", str(os.getpid())], check=True, capture_output=True)


def count(src: Path, preset: str) -> int:
    """Instructions of one fit of ``preset`` with the package imported from ``src``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "PYTHONHASHSEED": "0"}  # string hashing decides some dict/set orders: without it, +-0.2 %
        done = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                               sys.executable, __file__, "--worker", preset], env=env, capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"valgrind on {preset} from {src} failed ({done.returncode}): {done.stderr[-2000:]}")
        return totals(out.read_text())


def check(presets: Sequence[str]) -> None:
    """Refuse before any worktree or valgrind starts: unknown presets, no valgrind."""
    unknown = [p for p in presets if p not in train_speed.SINGLE_FIT_KWARGS]
    if unknown:
        raise ValueError(f"unknown presets {unknown}; choose from {', '.join(train_speed.SINGLE_FIT_KWARGS)}")
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            raise ValueError(f"{tool} is not installed: install Debian's valgrind (apt-get install valgrind)")


def compare(bases: Sequence[str], presets: Sequence[str]) -> dict:
    commits = {base: train_speed.resolve_commit(base) for base in bases}
    changed = [line[3:] for line in train_speed._git("status", "--porcelain", "--", "src").stdout.splitlines()]
    rows = []
    for preset in presets:
        n = count(runner.REPO_ROOT / "src", preset)
        row = {"preset": preset, "new_instructions": n, "bases": {}}
        for base, commit in commits.items():
            with train_speed.base_worktree(commit) as tree:
                b = count(tree / "src", preset)
            row["bases"][base] = {"commit": commit, "instructions": b, "new_over_base": n / b}
            print(f"{preset:<11} {base:<10} {b:>15,}  new {n:>15,}  new/base {n / b:.4f}", flush=True)
        rows.append(row)
    version = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    return {"benchmark": "fit_instructions", "bases": commits, "new": train_speed.resolve_commit("HEAD"),
            "new_uncommitted_src": changed, "dataset": train_speed.SINGLE_FIT_DATASET,
            "fit_kwargs": {p: train_speed.SINGLE_FIT_KWARGS[p] for p in presets}, "valgrind": version,
            "python": platform.python_version(), "rows": rows}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", nargs="+", help="the commits to compare this working tree with")
    parser.add_argument("--out", default=str(OUT), help="the JSON file to write")
    parser.add_argument("--presets", nargs="+", default=list(DEFAULT_PRESETS))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return
    if not args.base:
        parser.error("--base COMMIT [COMMIT ...] is needed (e.g. --base b192b4e^)")
    try:
        check(args.presets)
        for base in args.base:
            train_speed.resolve_commit(base)
    except ValueError as exc:
        parser.error(str(exc))
    payload = compare(args.base, args.presets)
    atomic_write_text(args.out, json.dumps(payload, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
