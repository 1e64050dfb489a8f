"""Digests of every preset and every switchable variant, to prove a refactoring changes no number.

For each registered preset (the six of the audit paper ``ganev2025elusive`` §4, ``corrected``
and ``gnmax``) and each variant a user can switch (the preset's defaults; each violation, bug or
finding of Table 2 fixed alone, :mod:`pategan_audit.implementations.violations`; the behaviour
as released; the "paper" hyperparameters of Table 3 where the preset has them; gnmax's
data-dependent analysis), the harness fits a tiny model (a Cervical subsample, a few iterations,
a fixed seed) and hashes what it produced: samples (``sample(n, seed)``), the accountant's
ε̂ trajectory and moments, the stopping iteration, and the teachers' votes, vote noise and
released labels (the model's :class:`~pategan_audit.implementations.base.TrainingTrace`). The
batched path is hashed too: ``fit_many`` at R = 1 and R = 3 per preset.

    python benchmarks/digests.py --out digests.json            # write {case: sha256[:16]} + combined
    python benchmarks/digests.py --compare digests.json        # exit 1 listing the cases that differ

One torch thread; the same code gives the same digests on the same machine.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch

from pategan_audit import datasets
from pategan_audit.implementations import fit_many, make_generator, with_public_bounds
from pategan_audit.implementations.registry import ALL_NAMES, get_config_class, released_overrides
from pategan_audit.implementations.violations import fix_overrides, violations_for
from pategan_audit.runner import atomic_write_text

ROWS = 120          # Cervical training rows the models see
SAMPLE_ROWS = 40    # rows sampled from each fitted model
SAMPLE_SEED = 7
SEED = 3
#: the tiny training every case shares (per-preset additions in :data:`TINY`)
BASE = {"max_iter": 3, "record": True}
TINY: dict[str, dict[str, Any]] = {
    "original": {"num_teachers": 2},
    "turing": {"num_teachers": 2},
    "updated": {"num_teachers": 4},
    "synthcity": {"num_teachers": 4},
    "borealis": {"num_teachers": 4},
    "smartnoise": {"num_teachers": 4},
    "corrected": {"num_teachers": 4},
    "gnmax": {"num_teachers": 8, "generator_steps": 6, "query_batch": 8, "replay_size": 64},
}
#: λ = 1 (and a budget that pays for one iteration there): where the accountant formulas differ
LAM1: dict[str, Any] = {"lam": 1.0, "epsilon": 10.0}
#: as released, a batch that fits the tiny table (upstream draws B rows per critic step or per teacher block)
RELEASED_TINY: dict[str, dict[str, Any]] = {name: {"batch_size": 16} for name in ("original", "turing", "borealis", "smartnoise")}


def _hash_update(h, value: Any) -> None:
    """Feed ``value`` into ``h`` unambiguously (type, shape and bytes of arrays; repr of scalars)."""
    if isinstance(value, pd.DataFrame):
        h.update(repr((list(value.columns), [str(t) for t in value.dtypes])).encode())
        h.update(value.to_csv(index=False).encode())
    elif isinstance(value, torch.Tensor):
        _hash_update(h, value.detach().cpu().numpy())
    elif isinstance(value, np.ndarray):
        h.update(repr((value.dtype.str, value.shape)).encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(f"[{len(value)}".encode())
        for v in value:
            _hash_update(h, v)
        h.update(b"]")
    elif isinstance(value, dict):
        h.update(f"{{{len(value)}".encode())
        for k in sorted(value, key=str):
            h.update(repr(k).encode())
            _hash_update(h, value[k])
        h.update(b"}")
    elif isinstance(value, (set, frozenset)):
        _hash_update(h, sorted(value))
    else:
        h.update(repr(value).encode())


def _digest(parts: dict[str, Any]) -> str:
    h = hashlib.sha256()
    _hash_update(h, parts)
    return h.hexdigest()[:16]


def model_parts(model) -> dict[str, Any]:
    """What a fitted model produced: samples, ε̂ trajectory, moments, stopping iteration, votes."""
    trace = model.trace
    parts: dict[str, Any] = {
        "samples": model.sample(SAMPLE_ROWS, seed=SAMPLE_SEED),
        "iterations": trace.iterations,
        "eps_hat": [float(e) for e in trace.eps_hat],
        "alpha": list(trace.alpha),
        "votes": list(trace.votes),
        "noise": list(trace.noise),
        "labels": list(trace.labels),
        "teacher_rows": [sorted(int(i) for i in rows) for rows in trace.teacher_rows],
    }
    acc = getattr(model, "accountant", None)
    if acc is not None:
        parts["accountant"] = {"alpha": np.asarray(acc.alpha), "num_queries": int(acc.num_queries),
                               "epsilon": float(acc.epsilon)}
    for key in ("answered", "eps_released", "eps_data_independent", "eps_worst_case", "eps_data_dependent"):
        if key in trace.extra:
            parts[key] = trace.extra[key]
    return parts


def variants(name: str) -> dict[str, dict[str, Any]]:
    """Every switchable variant of ``name``: defaults, each catalogue entry fixed alone, as
    released, the "paper" hyperparameters, gnmax's data-dependent analysis."""
    out: dict[str, dict[str, Any]] = {"default": {}}
    fields = get_config_class(name).__dataclass_fields__
    # at the tiny λ of the defaults every accountant formula charges its data-independent bound;
    # at λ = 1 the data-dependent terms bind, so the accountant switches (V7-V9) change ε̂
    moments = "accountant" in fields and name != "gnmax"  # gnmax's accountant setting is unused
    if moments:
        out["lam1"] = dict(LAM1)
    for v in violations_for(name, kinds=("privacy", "bug", "finding")):
        if v.switchable:
            out[f"fix:{v.id}"] = fix_overrides(name, [v.id])
            if moments and v.field == "accountant":
                out[f"fix:{v.id}@lam1"] = {**fix_overrides(name, [v.id]), **LAM1}
    released = {k: v for k, v in released_overrides(name).items() if k != "max_iter"}  # keep the tiny cap
    if released:
        out["released"] = {**released, **RELEASED_TINY.get(name, {})}
    if "hyperparameters" in fields:
        out["paper"] = {"hyperparameters": "paper"}
    if "conditional" in fields and not any(o.get("conditional") for o in out.values()):
        out["conditional"] = {"conditional": True}
    if name == "gnmax":
        out["data_dependent"] = {"analysis": "data_dependent"}
    return out


def cases(train: pd.DataFrame, label: str, bounds: dict) -> dict[str, Callable[[], str]]:
    """{case name: thunk computing its digest}."""
    out: dict[str, Callable[[], str]] = {}
    for name in ALL_NAMES:
        for variant, extra in variants(name).items():
            overrides = {**BASE, **TINY[name], **extra}
            delta = overrides.pop("delta", 1e-5)  # smartnoise as released takes delta=None (its own rule)
            epsilon = overrides.pop("epsilon", 1.0)

            def single(name=name, overrides=overrides, delta=delta, epsilon=epsilon) -> str:
                model = make_generator(name, epsilon=epsilon, delta=delta, seed=SEED, overrides=overrides,
                                       public_bounds=bounds)
                model.fit(train, label=label)
                return _digest(model_parts(model))

            out[f"{name}/{variant}"] = single
        for r in (1, 3):
            def many(name=name, r=r) -> str:
                overrides = with_public_bounds(name, {**BASE, **TINY[name]}, bounds)
                models = fit_many(name, train, seeds=[SEED + i for i in range(r)], epsilon=1.0, delta=1e-5,
                                  label=label, device="cpu", **overrides)
                return _digest({"batched": [m.trace.extra.get("batched") for m in models],
                                "models": [model_parts(m) for m in models]})

            out[f"{name}/fit_many_R{r}"] = many
    return out


def compute(only: str | None = None) -> dict[str, Any]:
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # the presets' data warnings (constant columns) on the tiny table
    ds = datasets.load("cervical_cancer", subsample=ROWS, seed=SEED)
    train = ds.train
    todo = cases(train, ds.label, dict(ds.bounds))
    digests: dict[str, str] = {}
    seconds: dict[str, float] = {}
    for case, thunk in todo.items():
        if only and only not in case:
            continue
        t0 = time.perf_counter()
        try:
            digests[case] = thunk()
        except Exception as exc:  # a variant that refuses the tiny setting is itself a behaviour to pin
            digests[case] = "error:" + _digest({"type": type(exc).__name__, "msg": str(exc)})
        seconds[case] = round(time.perf_counter() - t0, 2)
        print(f"{case:40s} {digests[case]}  {seconds[case]:.2f}s", file=sys.stderr, flush=True)
    combined = hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]
    return {"combined": combined, "cases": digests, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="write the digests to this JSON file (atomically)")
    p.add_argument("--compare", help="compare with the digests in this JSON file; exit 1 listing the cases that differ")
    p.add_argument("--only", help="only the cases whose name contains this string (e.g. 'gnmax/')")
    args = p.parse_args(argv)
    if args.compare and not os.path.isfile(args.compare):
        p.error(f"--compare {args.compare}: no such file; write one first with --out")
    if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        p.error(f"--out {args.out}: its folder does not exist; create it or pick another path")
    t0 = time.perf_counter()
    result = compute(args.only)
    result["total_seconds"] = round(time.perf_counter() - t0, 1)
    print(f"combined {result['combined']}  ({len(result['cases'])} cases, {result['total_seconds']} s)")
    if args.out:
        atomic_write_text(args.out, json.dumps(result, indent=1, sort_keys=True) + "\n")
    if args.compare:
        with open(args.compare) as f:
            before = {c: d for c, d in json.load(f)["cases"].items() if not args.only or args.only in c}
        now = result["cases"]
        differ = sorted(c for c in set(before) | set(now) if before.get(c) != now.get(c))
        for c in differ:
            print(f"DIFFERS {c}: {before.get(c, '(missing)')} -> {now.get(c, '(missing)')}")
        if differ:
            return 1
        print(f"all {len(now)} cases identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
