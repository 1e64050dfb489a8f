"""Train one preset with the §6.1 settings and hand back the fitted model (shared by Figs. 2, 3, 4).

The recording the authors bolted onto each implementation (``add_X_index``, ``record_teachers``,
``record_moments``; implementations spec §10 "test hooks") is here the presets' own
:class:`~pategan_audit.implementations.base.TrainingTrace` plus per-iteration callbacks.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from .profiles import TRACE_DATASET, TRACE_DELTA, TRACE_LAMBDAS, TRACE_NUM_TEACHERS

__all__ = ["training_data", "trace_settings", "fit_traced", "derived_seed"]


@lru_cache(maxsize=4)
def _load(dataset: str) -> tuple[pd.DataFrame, str, dict]:
    from .. import datasets

    ds = datasets.load(dataset)
    return ds.train, ds.label, dict(ds.bounds)


def training_data(dataset: str = TRACE_DATASET) -> tuple[pd.DataFrame, str]:
    """The training split and label column the traces are run on (a copy, safe to modify)."""
    train, label, _ = _load(dataset)
    return train.copy(), label


def _with_public_bounds(implementation: str, settings: dict[str, Any], dataset: str) -> dict[str, Any]:
    """Presets that never read bounds from the data (``bounds="public"``, i.e. corrected) get the
    training split's min/max as their public bounds, as the paper treats them (§5, protocols A)."""
    import dataclasses

    from ..implementations.registry import get_config_class

    defaults = {f.name: f.default for f in dataclasses.fields(get_config_class(implementation))}
    if settings.get("bounds", defaults.get("bounds")) == "public" and settings.get("public_bounds") is None:
        return {**settings, "public_bounds": dict(_load(dataset)[2])}
    return settings


def derived_seed(seed: int, *tags: int) -> int:
    """A 32-bit seed derived from ``seed`` and integer ``tags`` (independent streams per purpose)."""
    return int(np.random.SeedSequence([int(seed), *map(int, tags)]).generate_state(1)[0])


def trace_settings(
    implementation: str,
    *,
    epsilon: float,
    seed: int,
    max_iter: int,
    num_teachers: int = TRACE_NUM_TEACHERS,
    delta: float = TRACE_DELTA,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``implementations.create`` of one §6.1 run.

    PATE presets get the lambda the authors ran (:data:`TRACE_LAMBDAS`); ``overrides`` win.
    """
    if not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer iteration cap, got {max_iter!r}")
    if not isinstance(num_teachers, int) or num_teachers < 1:
        raise ValueError(f"num_teachers must be a positive integer, got {num_teachers!r}")
    settings: dict[str, Any] = dict(
        epsilon=float(epsilon), delta=float(delta), seed=int(seed), num_teachers=num_teachers, max_iter=max_iter, record=True
    )
    if implementation in TRACE_LAMBDAS:
        settings["lam"] = TRACE_LAMBDAS[implementation]
    settings.update(overrides or {})
    return settings


def _create(implementation: str, settings: dict[str, Any]):
    from ..implementations.registry import create

    return create(implementation, **settings)


def fit_traced(
    implementation: str,
    settings: dict[str, Any],
    *,
    dataset: str = TRACE_DATASET,
    callbacks: Iterable[Callable[[Any, int], None]] = (),
):
    """Create ``implementation`` with ``settings``, attach ``callbacks``, fit it on ``dataset``."""
    model = _create(implementation, _with_public_bounds(implementation, settings, dataset))
    model.callbacks.extend(callbacks)
    train, label = training_data(dataset)
    model.fit(train, label=label)
    return model
