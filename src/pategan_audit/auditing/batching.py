"""Shadow models in chunks through :func:`pategan_audit.implementations.fit_many` (the replica axis).

The audit's many-model workloads (the game's shadow models, the mini-MIAs of target selection)
train hundreds of models of one preset that differ only in their seed and in which of two tables
they see. When the generator factory is a :class:`~pategan_audit.implementations.factory.PresetFactory`
whose preset has a batched step, those models are fitted in *chunks*: one ``fit_many`` call per
chunk (the models of a chunk are stacked along a replica axis and pay the framework overhead once),
and the chunks are the jobs of :func:`pategan_audit.runner.parallel_map`. Results are cached per
model as before, so a resumed run trains only the models that are missing.

Any other factory, or a preset without a batched step (``fit_many`` would only fit its models one
by one), keeps one job per model: finer resume and load balance at no cost in speed.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable, Hashable, Sequence, TypeVar

import numpy as np

from .. import runner
from ..implementations.factory import PresetFactory

__all__ = ["DEFAULT_CHUNK_SIZE", "uses_fit_many", "split_chunks", "check_chunk_size", "run_in_chunks"]

T = TypeVar("T", bound=Hashable)

#: Models per ``fit_many`` call (at most; fewer so that every worker gets a chunk). Large enough
#: for the replica axis to pay off, small enough that an interrupted run loses little.
DEFAULT_CHUNK_SIZE = 200


def uses_fit_many(make_generator: Any, batched: bool) -> bool:
    """True when the models of ``make_generator`` should be fitted in chunks through ``fit_many``:
    ``batched`` is on, the factory is a :class:`PresetFactory` and its preset (with its overrides)
    has a batched step."""
    return bool(batched) and isinstance(make_generator, PresetFactory) and make_generator.batched()


def check_chunk_size(chunk_size: Any) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    return int(chunk_size)


def split_chunks(groups: Sequence[Sequence[T]], *, chunk_size: int, n_jobs: int) -> list[list[T]]:
    """Cut each group (models that share a training table, e.g. one world) into chunks of at most
    ``chunk_size`` items, smaller when that leaves a worker idle: the chunk size is
    ``min(chunk_size, ceil(total / n_jobs))`` and each group is split into near-equal pieces.
    Chunks never mix groups; items keep their order.

    >>> split_chunks([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], chunk_size=200, n_jobs=2)
    [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
    >>> split_chunks([[1, 2, 3, 4, 5]], chunk_size=2, n_jobs=1)
    [[1, 2], [3, 4], [5]]
    """
    chunk_size = check_chunk_size(chunk_size)
    total = sum(len(g) for g in groups)
    if total == 0:
        return []
    size = max(1, min(chunk_size, math.ceil(total / max(1, int(n_jobs)))))
    chunks: list[list[T]] = []
    for group in groups:
        group = list(group)
        if not group:
            continue
        pieces = math.ceil(len(group) / size)
        q, r = divmod(len(group), pieces)
        start = 0
        for p in range(pieces):
            stop = start + q + (1 if p < r else 0)
            chunks.append(group[start:stop])
            start = stop
    return chunks



def run_in_chunks(items: Sequence[T], *, lookup: Callable[[T], tuple[bool, Any]], group: Callable[[T], Hashable],
                  job: Callable[[list[T]], list], chunk_size: int, options: runner.RunOptions,
                  label: str | None = None) -> list:
    """Results of ``items`` in order: the cached ones read here (``lookup(item) -> (found,
    value)``), the missing ones computed by ``job(chunk) -> [value per item]`` (one
    ``fit_many`` call, values cached per model by the job) on chunks of items that share
    ``group(item)`` (one training table), the chunks being the jobs of :func:`runner.run_map`
    (``options``; ``label``: the progress bar's label when ``options.progress`` is True)."""
    done: dict = {}
    for item in items:
        found, value = lookup(item)
        if found:
            done[item] = value
    todo = [item for item in items if item not in done]
    if todo:
        groups: dict[Hashable, list[T]] = {}
        for item in todo:
            groups.setdefault(group(item), []).append(item)
        workers = runner.resolve_jobs(options.n_jobs)
        chunks = split_chunks(list(groups.values()), chunk_size=chunk_size, n_jobs=workers)
        desc = options.label(label)
        options = replace(options, progress=f"{desc} ({len(todo)} models in {len(chunks)} chunks)" if desc else False)
        results = runner.run_map(job, chunks, options, n_jobs=max(1, min(workers, len(chunks))))
        for chunk, res in zip(chunks, results):
            done.update(zip(chunk, res))
    return [done[item] for item in items]
