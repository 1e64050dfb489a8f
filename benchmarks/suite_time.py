"""The test suite's time in two source trees, measured in one run (issue 39: "the suite no slower").

CI's wall time is no measure of this: it runs on whichever machine is free and has varied by a
factor of two between landings of nearly the same code. Here both suites run on one machine at
once, so that whatever else the machine does hits both:

* ``--base COMMIT`` is checked out as a temporary git worktree (``train_speed.base_worktree``,
  removed at the end); the new arm is this working tree, copied into another temporary worktree
  at ``HEAD`` so that neither arm shares a result cache or a build folder with the other.
* Each arm runs the README's test command as CI runs it (``pytest -q -p no:cacheprovider
  --timeout=1500``, ``PATEGAN_AUDIT_JOBS=2``) with ``PYTHONPATH`` at its own ``src`` and a JUnit
  XML report; the two start together.
* The reports are compared test by test: the whole suites (wall and the sum of test times), the
  tests both trees have (their times, new over base), those of them in test files that no commit
  between the trees touched (the same test of the same code path: the purest comparison), and
  the tests only one tree has, by file.

``--junit BASE.xml NEW.xml`` compares two reports made earlier the same way instead of running
anything (``--walls`` gives their pytest wall seconds). The 1-minute load average is sampled
every 30 s while the suites run. Writes ``results/benchmarks/suite_time.json`` (or ``--out``)
atomically and prints a summary.

    python benchmarks/suite_time.py --base b192b4e^
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_speed  # noqa: E402  (the sibling benchmark: commits and the base worktree)

from pategan_audit import runner  # noqa: E402
from pategan_audit.runner import atomic_write_text  # noqa: E402

OUT = Path(runner.REPO_ROOT) / "results" / "benchmarks" / "suite_time.json"
PYTEST_ARGS = ["-q", "-p", "no:cacheprovider", "--timeout=1500"]


def read_junit(path: Path) -> dict[tuple[str, str], dict]:
    """``(classname, name) -> {"seconds", "outcome"}`` of every test case in a JUnit XML report."""
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        cases[(case.get("classname") or "", case.get("name") or "")] = {"seconds": float(case.get("time") or 0.0),
                                                                          "outcome": outcome}
    return cases


def file_of_test(classname: str, roots: tuple[Path, ...]) -> str | None:
    """The test file (repository-relative) of a JUnit classname such as ``tests.replicas.test_x.TestY``."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        rel = "/".join(parts[:end]) + ".py"
        if any((root / rel).exists() for root in roots):
            return rel
    return None


def compare(base: dict, new: dict, *, changed_files: set[str], roots: tuple[Path, ...]) -> dict:
    """The comparison the JSON holds (times in seconds, ratios new over base)."""
    def total(cases, keys):
        return round(sum(cases[k]["seconds"] for k in keys), 1)

    common = [k for k in base if k in new]
    files = {k: file_of_test(k[0], roots) for k in set(base) | set(new)}
    untouched = [k for k in common if files[k] is not None and files[k] not in changed_files]
    touched = [k for k in common if k not in untouched]
    only_new = [k for k in new if k not in base]
    only_base = [k for k in base if k not in new]
    by_file: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for k in only_new:
        by_file[files[k] or k[0]][0] += 1
        by_file[files[k] or k[0]][1] += new[k]["seconds"]
    moved = sorted(common, key=lambda k: new[k]["seconds"] - base[k]["seconds"])

    def row(k):
        return {"test": f"{files[k] or k[0]}::{k[1]}", "base_s": base[k]["seconds"], "new_s": new[k]["seconds"]}

    out = {
        "tests": {"base": len(base), "new": len(new), "common": len(common), "only_base": len(only_base),
                  "only_new": len(only_new)},
        "failed": {arm: sorted(f"{files[k] or k[0]}::{k[1]}" for k, v in cases.items() if v["outcome"] in ("failure", "error"))
                   for arm, cases in (("base", base), ("new", new))},
        "sum_of_test_seconds": {"base": total(base, base), "new": total(new, new)},
        "common": {"base_s": total(base, common), "new_s": total(new, common)},
        "common_in_untouched_files": {"tests": len(untouched), "base_s": total(base, untouched),
                                      "new_s": total(new, untouched)},
        "common_in_touched_files": {"tests": len(touched), "base_s": total(base, touched), "new_s": total(new, touched)},
        "only_new_s": total(new, only_new), "only_base_s": total(base, only_base),
        "only_new_by_file": {f: {"tests": n, "seconds": round(s, 1)}
                             for f, (n, s) in sorted(by_file.items(), key=lambda kv: -kv[1][1])},
        "largest_slowdowns": [row(k) for k in moved[-10:][::-1]],
        "largest_speedups": [row(k) for k in moved[:10]],
    }
    for key in ("common", "common_in_untouched_files", "common_in_touched_files"):
        part = out[key]
        part["new_over_base"] = round(part["new_s"] / part["base_s"], 3) if part["base_s"] else None
    return out


def changed_test_files(base: str, new: str) -> set[str]:
    listed = subprocess.run(["git", "diff", "--name-only", base, new, "--", "tests"], cwd=runner.REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout
    return set(listed.split())


def run_suites(base_tree: Path, new_tree: Path, folder: Path) -> tuple[dict, list]:
    """Both suites at once; the JUnit paths and walls, and the load samples taken meanwhile."""
    samples: list = []
    stop = threading.Event()

    def sample():
        while not stop.wait(30):
            samples.append(round(os.getloadavg()[0], 2))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    procs, walls = {}, {}
    for arm, tree in (("base", base_tree), ("new", new_tree)):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PATEGAN_AUDIT_")}  # both arms: CI's settings
        env.update(PYTHONPATH=str(tree / "src"), PATEGAN_AUDIT_JOBS="2")  # its src ahead of the editable install
        log = open(folder / f"{arm}.log", "w")
        procs[arm] = (subprocess.Popen([sys.executable, "-m", "pytest", *PYTEST_ARGS,
                                        f"--junitxml={folder / f'{arm}.xml'}"], cwd=tree, env=env,
                                       stdout=log, stderr=subprocess.STDOUT), time.perf_counter(), log)
    for arm, (proc, start, log) in procs.items():
        rc = proc.wait()
        walls[arm] = {"wall_s": round(time.perf_counter() - start, 1), "exit_code": rc}
        log.close()
    stop.set()
    return walls, samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare this tree with (e.g. b192b4e^)")
    parser.add_argument("--junit", nargs=2, type=Path, metavar=("BASE_XML", "NEW_XML"),
                        help="compare these reports instead of running the suites")
    parser.add_argument("--walls", nargs=2, type=float, metavar=("BASE_S", "NEW_S"),
                        help="with --junit: the pytest wall seconds of each report")
    parser.add_argument("--new", default="HEAD", help="with --junit: the commit the new report ran at")
    parser.add_argument("--note", default=None, help="with --junit: how the reports were made (kept in the JSON)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    base = train_speed.resolve_commit(args.base)
    if not args.junit and base == train_speed.resolve_commit("HEAD"):
        parser.error(f"--base {args.base} is HEAD: name an earlier commit (e.g. --base b192b4e^)")
    meta = {"benchmark": "suite_time", "base": args.base, "base_commit": base, "cpu_count": os.cpu_count(),
            "command": "pytest " + " ".join(PYTEST_ARGS) + " (PATEGAN_AUDIT_JOBS=2), both arms at once"}
    if args.junit:
        new = train_speed.resolve_commit(args.new)
        walls = ({"base": {"wall_s": args.walls[0]}, "new": {"wall_s": args.walls[1]}} if args.walls else None)
        samples = None
        meta["reports"] = "given (--junit)" + (f": {args.note}" if args.note else "")
        result = compare(read_junit(args.junit[0]), read_junit(args.junit[1]),
                         changed_files=changed_test_files(base, new), roots=(Path(runner.REPO_ROOT),))
    else:
        new = train_speed.resolve_commit("HEAD")
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "tests"], cwd=runner.REPO_ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        if dirty:
            parser.error("commit the changes under src/ and tests/ first: the new arm runs HEAD in a clean worktree")
        folder = Path(tempfile.mkdtemp(prefix="pategan_audit_suite_time_"))
        with train_speed.base_worktree(base) as base_tree, train_speed.base_worktree(new) as new_tree:
            walls, samples = run_suites(base_tree, new_tree, folder)
            result = compare(read_junit(folder / "base.xml"), read_junit(folder / "new.xml"),
                             changed_files=changed_test_files(base, new), roots=(base_tree, new_tree))
    meta.update(new_commit=new, walls=walls, loadavg_1min_samples=samples)
    atomic_write_text(args.out, json.dumps({**meta, **result}, indent=2) + "\n")
    if walls:
        print("wall:", {arm: w["wall_s"] for arm, w in walls.items()})
    print(f"tests: {result['tests']}")
    for key in ("common", "common_in_untouched_files", "common_in_touched_files"):
        print(f"{key}: {result[key]}")
    print(f"only in the new tree: {result['tests']['only_new']} tests, {result['only_new_s']} s")


if __name__ == "__main__":
    main()
