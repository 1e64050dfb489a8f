"""Train one preset with the §6.1 settings and hand back the fitted model (shared by Figs. 2, 3, 4).

The recording the authors bolted onto each implementation (``add_X_index``, ``record_teachers``,
``record_moments``; implementation notes §violations.catalogue "test hooks") is here the presets' own
:class:`~pategan_audit.implementations.base.TrainingTrace` plus per-iteration callbacks.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, TypeVar

import pandas as pd

from .. import runner
from ..implementations.factory import make_generator
from .profiles import TRACE_DATASET, TRACE_DELTA, TRACE_LAMBDAS, TRACE_NUM_TEACHERS

__all__ = ["training_data", "trace_settings", "fit_traced", "TraceRun", "call_with"]

T = TypeVar("T")


@lru_cache(maxsize=4)
def _load(dataset: str) -> tuple[pd.DataFrame, str, dict]:
    from .. import datasets

    ds = datasets.load(dataset)
    return ds.train, ds.label, dict(ds.bounds)


def training_data(dataset: str = TRACE_DATASET) -> tuple[pd.DataFrame, str]:
    """The training split and label column the traces are run on (a copy, safe to modify)."""
    train, label, _ = _load(dataset)
    return train.copy(), label


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


def fit_traced(
    implementation: str,
    settings: dict[str, Any],
    *,
    dataset: str = TRACE_DATASET,
    callbacks: Iterable[Callable[[Any, int], None]] = (),
):
    """Create ``implementation`` with ``settings``, attach ``callbacks``, fit it on ``dataset``.

    A preset that takes public bounds gets the training split's min/max as its public bounds,
    as the paper treats them (``ganev2025elusive`` §5; the public-bounds rule of
    :func:`pategan_audit.implementations.factory.with_public_bounds`)."""
    settings = dict(settings)
    create_kwargs = {k: settings.pop(k) for k in ("epsilon", "delta", "seed") if k in settings}
    model = make_generator(implementation, **create_kwargs, overrides=settings, public_bounds=_load(dataset)[2])
    model.callbacks.extend(callbacks)
    train, label = training_data(dataset)
    model.fit(train, label=label)
    return model


@dataclass(frozen=True)
class TraceRun:
    """One §6.1 training run (``ganev2025elusive`` §6.1): preset, ε, seed, iteration cap, k, δ,
    dataset and preset overrides; :meth:`cached` is the one cached-run helper of the traces."""

    implementation: str
    epsilon: float
    seed: int
    max_iter: int
    num_teachers: int = TRACE_NUM_TEACHERS
    delta: float = TRACE_DELTA
    dataset: str = TRACE_DATASET
    overrides: dict | None = None

    def settings(self) -> dict[str, Any]:
        """The ``create`` keyword arguments of this run (:func:`trace_settings`)."""
        return trace_settings(self.implementation, epsilon=self.epsilon, seed=self.seed, max_iter=self.max_iter,
                              num_teachers=self.num_teachers, delta=self.delta, overrides=self.overrides)

    def cached(self, figure: str, compute: Callable[[dict[str, Any]], T], **extra: Any) -> T:
        """``compute(settings)`` through the result cache (namespace ``"traces"``), keyed by
        ``figure``, the preset, the dataset, the settings and ``extra`` (e.g. a latent seed)."""
        settings = self.settings()
        config = {"figure": figure, "implementation": self.implementation, "dataset": self.dataset,
                  "settings": settings, **extra}
        return runner.cached(config, lambda: compute(settings), namespace="traces")


def call_with(job: tuple[Callable[..., T], dict[str, Any]]) -> T:
    """``fn(**kwargs)`` for ``job = (fn, kwargs)``: the picklable job of the traces' parallel maps."""
    fn, kwargs = job
    return fn(**kwargs)
