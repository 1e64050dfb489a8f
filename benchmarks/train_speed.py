"""Training-speed benchmark: batched teachers vs a plain per-teacher loop, in one run (design.md §4).

Two comparisons, each as a ratio against a straightforward baseline timed in the same process:

1. Neural teachers (borealis/smartnoise/corrected): one PATE iteration's teacher work, i.e.
   ``n_T = 5`` update rounds (B real rows of the teacher's block + B generated rows) and
   ``n_S = 5`` voting rounds on B generated rows. Ours: :class:`NeuralTeachers` (one batched
   network, hand-written forward/backward without autograd, fused Adam). Baseline: k separate
   ``nn.Sequential`` teachers,
   each with its own ``torch.optim.Adam``, updated and queried one after the other (same maths).
   Architecture: smartnoise's teacher ``{⌊2D/3⌋, ⌊D/3⌋, 1}``.
2. Logistic-regression teachers (updated, synthcity): one iteration's k fits on ``m`` real + ``m``
   generated rows. Ours: :class:`LogisticTeachers` (exact batched Newton solver, warm start;
   truncated Newton with float32 conjugate gradients for D > 64).
   Baseline: k fresh scikit-learn ``LogisticRegression()`` fits, as updated does upstream.

Data: the training split of each dataset min-max scaled to [0, 1]; generated rows are uniform
noise (the generator's cost is the same in both arms and left out); float32 tensors, as the
presets hold them; the scikit-learn arm stacks them onto float64 real rows, as upstream does. Settings: Epileptic Seizure
(D = 179, k = 11) and Cervical Cancer (D = 29, k = 5), as asked in the project issue.

Timing: the two arms alternate within every repeat (batched, baseline, batched, ...) so that a
change in machine load hits both; each arm's median over the repeats is reported, with the
ratio of medians as ``speedup`` and the ratio of minima as ``speedup_best``. The logistic arm
times steady-state refits: in training every refit but the first starts from the previous
iteration's coefficients, so ours is primed with one untimed refit (the cold first refit of a
run is amortised over thousands of iterations). The 1-minute load average before and after the
run is recorded, since other jobs on the machine distort both arms.

Run: ``python benchmarks/train_speed.py [--repeats 5]``; prints a table and writes
``results/benchmarks/train_speed.json`` atomically.

3. A whole fit, two source trees (``--single-fit --base COMMIT``): is a single fit of each preset
   no slower than at ``COMMIT`` (issue 39, "Done when")? ``COMMIT`` is checked out as a detached
   git worktree under the temporary directory (removed at the end, also on error); two
   long-lived worker processes, one importing the package from that tree's ``src`` and one from
   this working tree's, each time ``create(name, seed=s, **kw).fit(cervical_train, label)`` on
   the same pickled training frame, with the run options' training threads (default 1). After
   one untimed warm-up fit each, the arms alternate ABBA over ``--rounds`` (default 5), so a
   change in machine load hits both: the ratio of medians survives a busy machine that the
   absolute seconds do not. Process CPU time (in the worker) and wall time of every fit, and
   the 1-minute load average before and after each, are recorded. ``max_iter`` per preset
   (:data:`SINGLE_FIT_KWARGS`) makes one fit take about 1-3 s here; smartnoise and corrected stop
   by their budget at ε = 1. The two trees must fit the same numbers (the redesign kept every
   digest): ``sample(50, seed=0)`` of each pair of fits is compared to 1e-6 and a preset that
   differs is reported. The new arm is the working tree, so the JSON lists its uncommitted
   changes under ``src``. A worker runs this script (``--worker``), so the base tree must have
   the modules imported below. ``python benchmarks/train_speed.py --single-fit --base COMMIT
   [--presets ...] [--rounds 5] [--pairs 1]`` prints a table and writes
   ``results/benchmarks/train_speed_single_fit.json`` atomically.

   ``--pairs P`` starts P fresh pairs of workers one after the other (the first started arm
   alternating) and pools their fits: two processes of identical code differ by up to about 20 %
   here even on a quiet machine (measured with ``--base HEAD``), a difference that stays with the
   process (its memory layout, its allocator's history), not with the code, so one pair cannot
   tell the trees apart to better than that. The row's ratios are then over all pairs, and
   ``pair_cpu_ratios`` lists each pair's paired CPU ratio; run ``--base HEAD`` beside it to see
   the spread that identical code gives.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import pickle
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

from pategan_audit import datasets, runner
from pategan_audit.components.teachers import LogisticTeachers, NeuralTeachers
from pategan_audit.implementations import create

SETTINGS = [("epileptic_seizure", 11), ("cervical_cancer", 5)]
B, N_T, N_S = 64, 5, 5


def scaled_train(name: str) -> torch.Tensor:
    df = datasets.load(name).train
    x = df.to_numpy(dtype=np.float64)
    lo, hi = x.min(axis=0), x.max(axis=0)
    return torch.as_tensor((x - lo) / np.where(hi > lo, hi - lo, 1.0), dtype=torch.float32)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def compare(batched, baseline, repeats: int) -> dict:
    """Alternate the two arms ``repeats`` times; medians, minima and their ratios."""
    t_b, t_l = [], []
    for _ in range(repeats):
        t_b.append(_timed(batched))
        t_l.append(_timed(baseline))
    med_b, med_l = float(np.median(t_b)), float(np.median(t_l))
    return {"batched_s": med_b, "loop_s": med_l, "speedup": med_l / med_b, "speedup_best": min(t_l) / min(t_b)}


def neural_case(X: torch.Tensor, k: int, iterations: int, repeats: int) -> dict:
    N, D = X.shape
    sizes = [D, max(1, 2 * D // 3), max(1, D // 3), 1]
    g = torch.Generator().manual_seed(0)
    real = [X[torch.randint(0, N, (k, B), generator=g)] for _ in range(N_T)]
    fake = [torch.rand(k, B, D, generator=g) for _ in range(N_T)]
    queries = [torch.rand(B, D, generator=g) for _ in range(N_S)]

    batched = NeuralTeachers(k, sizes, hidden_activation="leaky_relu:0.2", weight_init="xavier_uniform",
                             bias_init="torch_default", generator=torch.Generator().manual_seed(1))

    def run_batched():
        for _ in range(iterations):
            for r in range(N_T):
                batched.train_step(real[r], fake[r])
            with torch.no_grad():
                for q in queries:
                    batched.votes(q)

    def make_module():
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.LeakyReLU(0.2)]
        return torch.nn.Sequential(*layers[:-1], torch.nn.Sigmoid())

    torch.manual_seed(1)
    modules = [make_module() for _ in range(k)]
    optims = [torch.optim.Adam(m.parameters(), lr=1e-4) for m in modules]
    bce = torch.nn.BCELoss()

    def run_loop():
        for _ in range(iterations):
            for r in range(N_T):
                for t in range(k):
                    optims[t].zero_grad()
                    loss = bce(modules[t](real[r][t])[:, 0], torch.ones(B)) + bce(modules[t](fake[r][t])[:, 0], torch.zeros(B))
                    loss.backward()
                    optims[t].step()
            with torch.no_grad():
                for q in queries:
                    sum((m(q)[:, 0] > 0.5).long() for m in modules)

    run_batched(), run_loop()  # warm-up (first optimiser creation imports torch._dynamo)
    return {"case": "neural", "k": k, "D": D, "iterations": iterations, **compare(run_batched, run_loop, repeats)}


def logistic_case(X: torch.Tensor, k: int, iterations: int, repeats: int) -> dict:
    N, D = X.shape
    m = N // k
    g = torch.Generator().manual_seed(2)
    perm = torch.randperm(N, generator=g)[: k * m].reshape(k, m)
    real = X[perm]  # float32, like the presets' X_ and generator output
    fakes = [torch.rand(k, m, D, generator=g) * 0.9 + 0.05 for _ in range(iterations)]
    ours = LogisticTeachers(k)

    def run_batched():
        for it in range(iterations):
            ours.refit(real, fakes[it])

    y = np.r_[np.ones(m), np.zeros(m)]
    # upstream holds the real rows as a float64 array; stacking the float32 generator output
    # onto them gives float64, so its lbfgs runs in float64 (fed float32, it would run in float32)
    real64 = real.numpy().astype(np.float64)

    def run_sklearn():
        for it in range(iterations):
            for t in range(k):
                LogisticRegression().fit(np.concatenate([real64[t], fakes[it][t].numpy()]), y)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs ConvergenceWarning at max_iter = 100, as upstream
        run_batched(), run_sklearn()  # warm-up; leaves ours warm-started, as in training
        timing = compare(run_batched, run_sklearn, repeats)
    return {"case": "logistic", "k": k, "D": D, "rows_per_teacher": 2 * m, "iterations": iterations, **timing}


#: the presets the single-fit comparison times, in this order
SINGLE_FIT_PRESETS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected", "gnmax")
#: settings of each timed fit, the same in both trees: about 1-3 s of CPU per fit on Cervical
#: (measured per iteration at one thread: original 15 ms, updated 12 ms, synthcity 0.35 s, turing
#: 13 ms, borealis 27 ms); smartnoise and corrected keep their cap and stop by their budget at
#: ε = 1 (about 33 iterations); a gnmax iteration is ``generator_steps`` student steps (1,000 by
#: default, about 10 s), so one iteration of 200. The paper's k = max(2, N // 1000) = 2 teachers
#: (gnmax: its own rule from N, ε, δ); corrected and gnmax get the dataset's bounds as public.
SINGLE_FIT_KWARGS: dict[str, dict[str, Any]] = {
    "original": {"max_iter": 100, "num_teachers": 2},
    "updated": {"max_iter": 120, "num_teachers": 2},
    "synthcity": {"max_iter": 4, "num_teachers": 2},
    "turing": {"max_iter": 110, "num_teachers": 2},
    "borealis": {"max_iter": 55, "num_teachers": 2},
    "smartnoise": {"num_teachers": 2},
    "corrected": {"num_teachers": 2},
    "gnmax": {"max_iter": 1, "generator_steps": 200},
}
PUBLIC_BOUNDS_PRESETS = ("corrected", "gnmax")
SINGLE_FIT_DATASET = "cervical_cancer"
SAMPLE_ROWS, SAMPLE_SEED, SAMPLE_TOLERANCE = 50, 0, 1e-6
WORKTREE_PREFIX = "pategan_audit_train_speed_"


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=runner.REPO_ROOT, capture_output=True, text=True)


def resolve_commit(ref: str) -> str:
    """The full commit id of ``ref`` in this repository; a ValueError naming the fix when there is none."""
    done = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0 or not done.stdout.strip():
        raise ValueError(f"--base {ref!r} is not a commit of this repository: pass a commit id, tag or branch "
                         f"that `git rev-parse` knows (e.g. --base b192b4e^, the parent of the redesign's first "
                         f"commit; `git log --oneline` lists them)")
    return done.stdout.strip()


@contextlib.contextmanager
def base_worktree(commit: str) -> Iterator[Path]:
    """A detached git worktree of ``commit`` under the temporary directory, removed on leaving
    (also on error). A worktree of the same commit left there by a killed run is reused."""
    path = Path(tempfile.gettempdir()) / f"{WORKTREE_PREFIX}{commit[:12]}"
    if path.exists():
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.returncode != 0 or head.stdout.strip() != commit:
            raise RuntimeError(f"{path} exists and is not a worktree of {commit}: remove it "
                               f"(`git worktree remove --force {path}`, or delete it and run `git worktree prune`)")
    else:
        added = _git("worktree", "add", "--detach", str(path), commit)
        if added.returncode != 0:
            raise RuntimeError(f"git worktree add {path} {commit} failed: {added.stderr.strip()}")
    try:
        yield path
    finally:
        if _git("worktree", "remove", "--force", str(path)).returncode != 0:
            shutil.rmtree(path, ignore_errors=True)
            _git("worktree", "prune")


class FitWorker:
    """A long-lived Python process that imports ``pategan_audit`` from ``src`` and times fits on
    request (pickled messages over its stdin/stdout; see :func:`worker_main`)."""

    def __init__(self, name: str, src: Path, threads: int):
        self.name, self.src = name, Path(src).resolve()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PATEGAN_AUDIT_")}  # both arms: defaults
        env["PYTHONPATH"] = str(self.src)  # ahead of the virtualenv's editable install of this tree
        env["PATEGAN_AUDIT_TRAIN_THREADS"] = str(threads)  # read by either tree (run options or its own parser)
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(self.src)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.hello = self._receive()

    def _receive(self) -> dict:
        try:
            reply = pickle.load(self.proc.stdout)
        except EOFError:
            raise RuntimeError(f"the {self.name} worker ({self.src}) exited with code {self.proc.wait()}; "
                               "its error is printed above") from None
        if "error" in reply:
            raise RuntimeError(f"the {self.name} worker ({self.src}) failed:\n{reply['error']}")
        return reply

    def call(self, **message: Any) -> dict:
        pickle.dump(message, self.proc.stdin)
        self.proc.stdin.flush()
        return self._receive()

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # end of input: the worker returns
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def worker_main(expected_src: str) -> None:
    """The worker's loop: refuse to run on a package imported from another tree, then answer
    ``{"op": "data", "train", "label"}`` and ``{"op": "fit", "preset", "seed", "kwargs"}`` until stdin closes."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything the library prints goes to stderr, never into the pipe
    inp = sys.stdin.buffer
    import pategan_audit

    package = Path(pategan_audit.__file__).resolve()
    if not package.is_relative_to(Path(expected_src).resolve()):
        pickle.dump({"error": f"pategan_audit imported from {package}, not from {expected_src}"}, out)
        out.flush()
        return
    if hasattr(runner, "activate") and hasattr(runner.RunOptions, "from_env"):
        runner.activate(runner.RunOptions.from_env())  # this tree's run options; an older tree reads the variable itself
    runner.single_thread()
    warnings.simplefilter("ignore")  # both arms alike; the comparison of samples shows any difference in numbers
    # the package's path inside its tree (the trees are named by the commits in the results)
    pickle.dump({"package": str(package.relative_to(Path(expected_src).resolve().parent)), "torch": torch.__version__}, out)
    out.flush()
    state: dict[str, Any] = {}
    while True:
        try:
            message = pickle.load(inp)
        except EOFError:
            return
        try:
            if message["op"] == "data":
                state.update(train=message["train"], label=message["label"])
                reply: dict[str, Any] = {"ok": True}
            else:
                cpu0, wall0 = time.process_time(), time.perf_counter()
                model = create(message["preset"], seed=message["seed"], **message["kwargs"]).fit(
                    state["train"], label=state["label"])
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
                sample = model.sample(SAMPLE_ROWS, seed=SAMPLE_SEED)
                reply = {"cpu_s": cpu, "wall_s": wall, "iterations": int(model.trace.iterations),
                         "columns": list(sample.columns), "sample": sample.to_numpy(dtype=np.float64)}
        except Exception:
            reply = {"error": traceback.format_exc()}
        pickle.dump(reply, out)
        out.flush()


def fit_kwargs(preset: str, bounds: dict, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The timed fit's settings of ``preset`` (:data:`SINGLE_FIT_KWARGS`, ``extra`` on top; public bounds where needed)."""
    kwargs = {"record": False, **SINGLE_FIT_KWARGS[preset], **(extra or {})}
    if preset in PUBLIC_BOUNDS_PRESETS:
        kwargs["public_bounds"] = dict(bounds)
    return kwargs


def sample_difference(a: dict, b: dict) -> float:
    """Largest absolute difference of two fits' samples (inf when their columns or shapes differ)."""
    if a["columns"] != b["columns"] or a["sample"].shape != b["sample"].shape:
        return math.inf
    diff = np.abs(a["sample"] - b["sample"])
    nan_a, nan_b = np.isnan(a["sample"]), np.isnan(b["sample"])
    if (nan_a != nan_b).any():
        return math.inf
    return float(np.max(np.where(nan_a, 0.0, diff), initial=0.0))


def ratios(fits: dict[str, list[dict]]) -> dict[str, float]:
    """Per measure (CPU, wall): each arm's median, new/base of the medians, and the median of the
    per-round new/base ratios (``_paired``), from the arms' fits in round order."""
    out: dict[str, float] = {}
    for measure in ("cpu_s", "wall_s"):
        med = {arm: float(np.median([f[measure] for f in fits[arm]])) for arm in ("base", "new")}
        out[f"base_{measure}"], out[f"new_{measure}"] = med["base"], med["new"]
        out[f"{measure[:-2]}_ratio"] = med["new"] / med["base"]
        out[f"{measure[:-2]}_ratio_paired"] = float(np.median([n[measure] / b[measure]  # per round, then median
                                                               for n, b in zip(fits["new"], fits["base"])]))
    return out


def time_preset(workers: dict[str, FitWorker], preset: str, kwargs: dict, rounds: int) -> dict:
    """One untimed warm-up fit per arm, then ``rounds`` timed fits per arm in ABBA order (round r's
    seed r + 1 in both); medians, new/base ratios, the samples' largest difference and the load."""
    fits: dict[str, list[dict]] = {"base": [], "new": []}
    warm = {arm: workers[arm].call(op="fit", preset=preset, seed=0, kwargs=kwargs) for arm in ("base", "new")}
    worst = sample_difference(warm["base"], warm["new"])
    for r in range(rounds):
        order = ("base", "new") if r % 2 == 0 else ("new", "base")
        got = {}
        for arm in order:
            load_before = os.getloadavg()[0]
            got[arm] = workers[arm].call(op="fit", preset=preset, seed=r + 1, kwargs=kwargs)
            got[arm]["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        worst = max(worst, sample_difference(got["base"], got["new"]))
        for arm in order:
            fits[arm].append({k: got[arm][k] for k in ("cpu_s", "wall_s", "iterations", "load")})
    row: dict[str, Any] = {"preset": preset, **ratios(fits)}
    loads = [x for arm in fits for f in fits[arm] for x in f["load"]]
    row.update(iterations_base=sorted({f["iterations"] for f in fits["base"]}),
               iterations_new=sorted({f["iterations"] for f in fits["new"]}),
               load_min=min(loads), load_max=max(loads), samples_equal=worst <= SAMPLE_TOLERANCE,
               sample_max_abs_diff=worst if math.isfinite(worst) else "columns, shapes or missing values differ",
               fits=fits)
    return row


def pool_pairs(rows: list[dict]) -> dict:
    """One preset's rows of several worker pairs (:func:`time_preset`, one per pair) as one row:
    medians and ratios over all the pairs' fits, each fit tagged with its pair, and the pairs' own
    paired CPU ratios (``pair_cpu_ratios``); one row is returned as it is."""
    if len(rows) == 1:
        return rows[0]
    fits = {arm: [{**f, "pair": i} for i, r in enumerate(rows) for f in r["fits"][arm]] for arm in ("base", "new")}
    row: dict[str, Any] = {"preset": rows[0]["preset"], **ratios(fits)}
    worst = [r["sample_max_abs_diff"] for r in rows]
    row.update(iterations_base=sorted({i for r in rows for i in r["iterations_base"]}),
               iterations_new=sorted({i for r in rows for i in r["iterations_new"]}),
               load_min=min(r["load_min"] for r in rows), load_max=max(r["load_max"] for r in rows),
               samples_equal=all(r["samples_equal"] for r in rows),
               sample_max_abs_diff=next((w for w in worst if isinstance(w, str)), None) or max(worst),
               pair_cpu_ratios=[r["cpu_ratio_paired"] for r in rows], fits=fits)
    return row


def check_single_fit(base: str, presets: Sequence[str], rounds: int, pairs: int = 1) -> str:
    """The base's commit id, once the presets, the rounds and the pairs are known good (ValueErrors naming the fix)."""
    unknown = sorted(set(presets) - set(SINGLE_FIT_PRESETS))
    if unknown or not presets:
        raise ValueError(f"--presets {unknown or list(presets)}: choose among {', '.join(SINGLE_FIT_PRESETS)}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"--rounds {rounds}: use a positive integer (timed fits per arm)")
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        raise ValueError(f"--pairs {pairs}: use a positive integer (fresh worker pairs, one after the other)")
    return resolve_commit(base)


def single_fit(base: str, presets: Sequence[str] = SINGLE_FIT_PRESETS, rounds: int = 5, *, pairs: int = 1,
               extra_kwargs: dict[str, dict[str, Any]] | None = None, out: Path | None = None) -> dict:
    """Time a whole fit of each preset in the tree of commit ``base`` and in this working tree
    (module docstring, item 3); write the JSON (``out``, default ``results/benchmarks/
    train_speed_single_fit.json``) and return it. Inputs are checked before any worktree or worker starts."""
    commit = check_single_fit(base, presets, rounds, pairs)
    head = resolve_commit("HEAD")
    changed = [line[3:] for line in _git("status", "--porcelain", "--", "src").stdout.splitlines()]
    threads = runner.current_options().train_threads
    ds = datasets.load(SINGLE_FIT_DATASET)
    load_before = os.getloadavg()[0]
    per_pair: dict[str, list[dict]] = {preset: [] for preset in presets}
    kwargs_of = {preset: fit_kwargs(preset, ds.bounds, (extra_kwargs or {}).get(preset)) for preset in presets}
    with contextlib.ExitStack() as tree_stack:
        tree = tree_stack.enter_context(base_worktree(commit))
        for pair in range(pairs):
            arms = (("base", tree / "src"), ("new", runner.REPO_ROOT / "src"))
            with contextlib.ExitStack() as stack:
                workers = {}
                for arm, src in (arms if pair % 2 == 0 else arms[::-1]):  # which starts first alternates
                    workers[arm] = FitWorker(arm, src, threads)
                    stack.callback(workers[arm].close)
                for worker in workers.values():
                    worker.call(op="data", train=ds.train, label=ds.label)
                hello = {arm: workers[arm].hello for arm in ("base", "new")}
                for preset in presets:
                    row = time_preset(workers, preset, kwargs_of[preset], rounds)
                    per_pair[preset].append(row)
                    print(f"  pair {pair + 1}/{pairs} {preset}: new/base CPU {row['cpu_ratio']:.3f}, "
                          f"wall {row['wall_ratio']:.3f}", flush=True)
    rows = []
    for preset in presets:
        row = pool_pairs(per_pair[preset])
        row["kwargs"] = {k: ("dataset bounds" if k == "public_bounds" else v) for k, v in kwargs_of[preset].items()}
        rows.append(row)
    payload = {"benchmark": "train_speed_single_fit", "base": base, "base_commit": commit, "head_commit": head,
               "new_tree": "this working tree's src (HEAD plus the uncommitted changes listed)",
               "uncommitted_src_changes": changed, "dataset": SINGLE_FIT_DATASET, "rounds": rounds, "pairs": pairs,
               "order": "per worker pair: warm-up fit per arm, then ABBA (base, new | new, base | ...), round r "
                        "seeded r + 1; pairs one after the other, the first started arm alternating",
               "torch": torch.__version__, "python": platform.python_version(), "cpu_count": os.cpu_count(),
               "threads": threads, "sample_rows": SAMPLE_ROWS, "sample_seed": SAMPLE_SEED,
               "sample_tolerance": SAMPLE_TOLERANCE, "workers": hello,
               "loadavg_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)], "results": rows}
    path = Path(out) if out is not None else runner.REPO_ROOT / "results" / "benchmarks" / "train_speed_single_fit.json"
    runner.atomic_write_text(path, json.dumps(payload, indent=2, default=float))
    return payload


def print_single_fit(payload: dict) -> None:
    print(f"base {payload['base']} = {payload['base_commit'][:12]}, new = working tree at {payload['head_commit'][:12]}"
          f"; {payload.get('pairs', 1)} worker pair(s) x {payload['rounds']} ABBA rounds, {payload['threads']} thread(s), "
          f"{payload['cpu_count']} cores")
    print(f"{'preset':<11} {'base CPU s':>10} {'new CPU s':>9} {'new/base':>8} {'paired':>6} {'base wall':>9} {'new wall':>8}"
          f" {'new/base':>8} {'iters':>6} {'load':>9} {'samples':>8}")
    for r in payload["results"]:
        iters = "/".join(str(i) for i in sorted(set(r["iterations_base"]) | set(r["iterations_new"])))
        print(f"{r['preset']:<11} {r['base_cpu_s']:>10.3f} {r['new_cpu_s']:>9.3f} {r['cpu_ratio']:>8.3f} {r['cpu_ratio_paired']:>6.3f}"
              f" {r['base_wall_s']:>9.3f} {r['new_wall_s']:>8.3f} {r['wall_ratio']:>8.3f} {iters:>6}"
              f" {r['load_min']:>4.1f}-{r['load_max']:<4.1f} {'equal' if r['samples_equal'] else 'DIFFER':>8}"
              + (f"  pairs {' '.join(f'{x:.2f}' for x in r['pair_cpu_ratios'])}" if "pair_cpu_ratios" in r else ""))
    differ = [r["preset"] for r in payload["results"] if not r["samples_equal"]]
    if differ:
        print("samples differ beyond", payload["sample_tolerance"], "between the trees for:",
              ", ".join(f"{r['preset']} ({r['sample_max_abs_diff']})" for r in payload["results"] if not r["samples_equal"]))
    load = payload["loadavg_1min_before_after"]
    print(f"load average (1 min) before/after: {load[0]} / {load[1]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20, help="PATE iterations of the neural case")
    parser.add_argument("--refits", type=int, default=10, help="teacher refits (iterations) of the logistic case")
    parser.add_argument("--single-fit", action="store_true", help="time whole fits in two source trees (item 3)")
    parser.add_argument("--base", help="with --single-fit: the commit to compare this working tree with")
    parser.add_argument("--presets", nargs="+", default=list(SINGLE_FIT_PRESETS), help="with --single-fit")
    parser.add_argument("--rounds", type=int, default=5, help="with --single-fit: timed fits per arm (ABBA)")
    parser.add_argument("--pairs", type=int, default=1, help="with --single-fit: fresh worker pairs, pooled")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # the single-fit worker process (FitWorker)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args.worker)
        return
    runner.activate(runner.RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once here
    if args.single_fit:
        if not args.base:
            parser.error("--single-fit needs --base COMMIT (e.g. --base b192b4e^)")
        try:
            check_single_fit(args.base, args.presets, args.rounds, args.pairs)
        except ValueError as exc:
            parser.error(str(exc))
        print_single_fit(single_fit(args.base, args.presets, args.rounds, pairs=args.pairs))
        print("written results/benchmarks/train_speed_single_fit.json")
        return
    runner.single_thread()
    load_before = os.getloadavg()[0]
    rows = []
    for name, k in SETTINGS:
        X = scaled_train(name)
        rows.append({"dataset": name, **neural_case(X, k, args.iterations, args.repeats)})
        rows.append({"dataset": name, **logistic_case(X, k, args.refits, args.repeats)})
    load = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    print(f"{'dataset':<18} {'case':<9} {'k':>3} {'D':>4} {'batched s':>10} {'baseline s':>11} {'speedup':>8} {'best':>6}")
    for r in rows:
        print(f"{r['dataset']:<18} {r['case']:<9} {r['k']:>3} {r['D']:>4} {r['batched_s']:>10.3f} {r['loop_s']:>11.3f}"
              f" {r['speedup']:>7.1f}x {r['speedup_best']:>5.1f}x")
    print(f"load average (1 min) before/after: {load[0]} / {load[1]} on {os.cpu_count()} cores")
    payload = {"benchmark": "train_speed", "torch": torch.__version__, "python": platform.python_version(),
               "cpu_count": os.cpu_count(), "threads": torch.get_num_threads(), "repeats": args.repeats,
               "loadavg_1min_before_after": load, "results": rows}
    path = runner.REPO_ROOT / "results" / "benchmarks" / "train_speed.json"
    runner.atomic_write_text(path, json.dumps(payload, indent=2))
    print(f"written {path.relative_to(runner.REPO_ROOT)}")


if __name__ == "__main__":
    main()
