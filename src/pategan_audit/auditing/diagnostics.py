"""Cheap checks that explain audit results (why a channel stays open, why a switch changes nothing).

* :func:`released_rows_move` — does training change the released rows at all? If a preset's
  synthetic table after ``iterations`` equals the one after 1 iteration (same seeds), no switch
  that acts on training can change the audit; only the scaling/metadata can (implementation notes §audit.channels).
* :func:`vote_unanimity` — share of teacher votes that are unanimous (n1 ∈ {0, k}); when it is
  ≈ 1, which rows each teacher saw (the partition violations V4, V5) cannot change the labels.
* :func:`student_labels` — the noisy labels the student received in one fit: comparing them
  between a preset and a variant shows whether a switch reached the student at all.
* :func:`encoder_categories` — the categories a preset's fitted encoder uses per world, to show
  metadata that public bounds do not replace (synthcity's category lists, V12 note).

Each trains a handful of models of one :class:`~pategan_audit.auditing.settings.AuditSetting`
with fixed seeds (deterministic) and never touches the result cache.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np
import pandas as pd

from .settings import AuditSetting

__all__ = ["released_rows_move", "vote_unanimity", "student_labels", "encoder_categories"]


def _world_data(setting: AuditSetting, world: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    if world not in ("out", "in"):
        raise ValueError(f"world must be 'out' or 'in', got {world!r}")
    d_out, d_in = setting.data()
    return d_out, (d_out if world == "out" else d_in)


def _sample(setting: AuditSetting, seed: int, world: str) -> np.ndarray:
    d_out, data = _world_data(setting, world)
    n = setting.n_synth_rows(*setting.data())
    n = len(data) if n == "train_size" else int(n)
    return setting.factory(d_out)(seed).fit(data).sample(n, seed=0).to_numpy(dtype=float)


def released_rows_move(
    setting: AuditSetting, *, seeds: Sequence[int] = (0, 1, 2, 3), world: str = "in", reference_iterations: int = 1
) -> bool:
    """True if any of ``seeds``' synthetic tables after ``setting.iterations`` differs from the
    same seed's table after ``reference_iterations`` (decoded, dtypes as the preset releases them).

    ``world``: fit on D ("in", default) or D′ ("out"). Raises ValueError if the setting does
    not train longer than the reference.
    """
    if setting.iterations <= reference_iterations:
        raise ValueError(f"the setting trains {setting.iterations} iterations; compare with a shorter "
                         f"reference_iterations (< {setting.iterations})")
    short = replace(setting, iterations=int(reference_iterations))
    return any(not np.array_equal(_sample(setting, s, world), _sample(short, s, world)) for s in seeds)


def _recorded_fit(setting: AuditSetting, seed: int, world: str):
    d_out, data = _world_data(setting, world)
    rec = replace(setting, extra_overrides={**setting.extra_overrides, "record": True})
    return rec.factory(d_out)(seed).fit(data)


def vote_unanimity(setting: AuditSetting, *, seed: int = 0, world: str = "in") -> float:
    """Share of the teachers' votes over all queries of one fit that are unanimous (n1 = 0 or
    n1 = k). NaN for presets without teacher votes (original, turing)."""
    model = _recorded_fit(setting, seed, world)
    votes = [np.asarray(v).ravel() for v in model.trace.votes]
    if not votes:
        return float("nan")
    v = np.concatenate(votes)
    k = model.config.num_teachers
    return float(np.mean((v == 0) | (v == k)))


def student_labels(setting: AuditSetting, *, seed: int = 0, world: str = "in") -> np.ndarray:
    """All noisy labels released to the student in one fit (queries of every iteration, in
    order); empty for presets without teacher votes."""
    model = _recorded_fit(setting, seed, world)
    labels = [np.asarray(v, dtype=float).ravel() for v in model.trace.labels]
    return np.concatenate(labels) if labels else np.zeros(0)


def encoder_categories(setting: AuditSetting, *, seed: int = 0) -> pd.DataFrame | None:
    """Categories of each discrete column of the preset's fitted encoder, per world (columns
    "out", "in"); None if the preset has no encoder with a discrete ``layout`` (only synthcity)."""
    cats = {}
    for world in ("out", "in"):
        d_out, data = _world_data(setting, world)
        encoder = getattr(setting.factory(d_out)(seed).fit(data), "encoder", None)
        layout = getattr(encoder, "layout", None)
        if layout is None:
            return None
        cats[world] = {c.name: tuple(float(v) for v in c.categories) for c in layout if c.kind == "discrete"}
    return pd.DataFrame(cats)
