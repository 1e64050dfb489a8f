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
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression

from pategan_audit import datasets, runner
from pategan_audit.components.teachers import LogisticTeachers, NeuralTeachers

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20, help="PATE iterations of the neural case")
    parser.add_argument("--refits", type=int, default=10, help="teacher refits (iterations) of the logistic case")
    args = parser.parse_args()
    runner.activate(runner.RunOptions.from_env())  # the PATEGAN_AUDIT_* run variables, read once here
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
