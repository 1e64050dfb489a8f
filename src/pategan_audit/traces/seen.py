"""Fig. 2: which training records each teacher saw (paper §6.1, implementation notes §traces.seen).

For teacher t with seen set S_t (every row it drew in a real mini-batch during training):

    only_t   = |S_t minus the union of S_j, j != t|     (rows no other teacher saw)
    shared_t = |S_t intersected with that union|

Disjoint partitions (borealis, smartnoise, corrected) give shared = 0 and only = block size
(137/138 on Cervical with k = 5); updated's stale index (V4) gives only = 0 and shared = 137
for every teacher; synthcity's per-iteration re-partition (V5) makes every S_t grow towards N.
original and turing have no teachers (V1/V2): their "teachers" are critic-step slots, each of
which draws from all rows (V3/V6); they are recorded but, as in the paper, not plotted.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import runner
from .fitting import TraceRun, call_with, fit_traced
from .profiles import SEEN_IMPLEMENTATIONS, TRACE_DATASET, TRACE_DELTA, TRACE_NUM_TEACHERS

__all__ = ["seen_counts", "seen_run", "records_seen", "seen_table", "HAS_TEACHERS"]

# implementations whose teacher_rows are real PATE teachers (the others: critic-step slots)
HAS_TEACHERS = {"updated": True, "synthcity": True, "borealis": True, "smartnoise": True, "corrected": True,
                "original": False, "turing": False}


def seen_counts(teacher_rows: Sequence[set[int] | Sequence[int] | np.ndarray]) -> pd.DataFrame:
    """Per teacher: ``only``, ``shared`` and ``seen`` (= only + shared) row counts (implementation notes §traces.seen).

    teacher_rows: one collection of row positions per teacher (duplicates inside one teacher's
    collection are counted once).

    >>> seen_counts([{0, 1, 2}, {2, 3}, {4}]).to_dict("list")
    {'teacher': [0, 1, 2], 'only': [2, 1, 1], 'shared': [1, 1, 0], 'seen': [3, 2, 1]}
    """
    if len(teacher_rows) == 0:
        raise ValueError("teacher_rows is empty: the model recorded no teacher (was it fitted with record=True?)")
    sets = [np.unique(np.fromiter((int(r) for r in rows), dtype=np.int64)) for rows in teacher_rows]
    if any((s < 0).any() for s in sets if s.size):
        raise ValueError("row positions must be non-negative integers (positions in the training frame)")
    pooled = np.concatenate(sets) if sets else np.empty(0, dtype=np.int64)
    rows, teachers_per_row = np.unique(pooled, return_counts=True)
    only, shared = [], []
    for s in sets:
        counts = teachers_per_row[np.searchsorted(rows, s)]
        only.append(int((counts == 1).sum()))
        shared.append(int((counts > 1).sum()))
    return pd.DataFrame({
        "teacher": np.arange(len(sets)),
        "only": np.asarray(only, dtype=np.int64),
        "shared": np.asarray(shared, dtype=np.int64),
        "seen": np.asarray([s.size for s in sets], dtype=np.int64),
    })


def _compute_seen(implementation: str, settings: dict, dataset: str) -> dict:
    # Only post-fit state (trace.teacher_rows) is read, so fit_many could fit these; but Fig. 2 is
    # one seed per preset, i.e. nothing to stack (a single fit is what fit_many would do).
    model = fit_traced(implementation, settings, dataset=dataset)
    rows = [np.array(sorted(int(r) for r in s), dtype=np.int32) for s in model.trace.teacher_rows]
    return {"teacher_rows": rows, "iterations": int(model.trace.iterations)}


def seen_run(implementation: str, **run: Any) -> dict:
    """One cached Fig. 2 training run: ``{"teacher_rows": [int32 arrays], "iterations": int}``.

    ``run``: the fields of :class:`~pategan_audit.traces.fitting.TraceRun` (``epsilon``, ``seed``,
    ``max_iter``; optional ``num_teachers``, ``delta``, ``dataset``, ``overrides``)."""
    trace = TraceRun(implementation, **run)
    return trace.cached("teacher_seen", lambda settings: _compute_seen(implementation, settings, trace.dataset))


def records_seen(
    implementations: Sequence[str] = SEEN_IMPLEMENTATIONS,
    *,
    epsilon: float = 1.0,
    seed: int = 0,
    max_iter: int = 1000,
    num_teachers: int = TRACE_NUM_TEACHERS,
    delta: float = TRACE_DELTA,
    dataset: str = TRACE_DATASET,
    n_jobs: int | None = 1,
) -> pd.DataFrame:
    """Fig. 2 table: one training run per implementation, one row per teacher.

    Columns: implementation, teacher, only, shared, seen, has_teachers (False for the
    critic-step slots of original/turing), iterations (run), epsilon, seed, max_iter.
    """
    jobs = [dict(implementation=name, epsilon=epsilon, seed=seed, max_iter=max_iter,
                 num_teachers=num_teachers, delta=delta, dataset=dataset) for name in implementations]
    results = runner.parallel_map(call_with, [(seen_run, job) for job in jobs], n_jobs=n_jobs)
    return seen_table(implementations, results, epsilon=epsilon, seed=seed, max_iter=max_iter)


def seen_table(implementations: Sequence[str], results: Sequence[dict], *, epsilon: float, seed: int, max_iter: int) -> pd.DataFrame:
    """Assemble :func:`seen_run` results into the tidy Fig. 2 table."""
    frames = []
    for name, res in zip(implementations, results):
        counts = seen_counts(res["teacher_rows"])
        counts.insert(0, "implementation", name)
        counts["has_teachers"] = HAS_TEACHERS.get(name, True)
        counts["iterations"] = res["iterations"]
        counts["epsilon"] = float(epsilon)
        counts["seed"] = int(seed)
        counts["max_iter"] = int(max_iter)
        frames.append(counts)
    return pd.concat(frames, ignore_index=True)
