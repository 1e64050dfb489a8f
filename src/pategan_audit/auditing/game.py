"""The distinguishing game of paper §6.2 (implementation notes §audit.game), over any fit/sample generator.

For i = 1..n_per_world and each world w ∈ {out, in}: build a fresh generator with its own
seed, fit it on D′ (out) or D (in), draw one synthetic table, restore the training dtypes
(integers rounded, as the authors' ``fix_dtypes``) and featurise it. Worlds are balanced by
construction (not drawn at random), as in the authors' code.

Each shadow model's feature vector is stored with :func:`pategan_audit.runner.cached`, keyed by
(setting, world, index, seed, data, featuriser, synthetic size): an interrupted audit resumes
where it stopped, and the parallel and sequential runs give identical features because each
model's seed depends only on (seed, world, index). How the models are trained:

* **in chunks** (``batched=True``, the default, when ``make_generator`` is a
  :class:`~pategan_audit.implementations.factory.PresetFactory` whose preset has a batched step): the
  missing models of each world are cut into chunks of at most ``chunk_size``
  (:func:`~pategan_audit.auditing.batching.split_chunks`); a chunk is one job of
  :func:`pategan_audit.runner.parallel_map` that reads the entries that exist, fits the missing
  models with one :func:`pategan_audit.implementations.fit_many` call, then samples and
  featurises each model exactly as the per-model path does and writes one cache entry per model
  (same keys as the per-model path: the two paths share their caches). Same seeds, same features
  up to the float rounding of the batched networks;
* **one job per model** otherwise (any fit/sample generator, a preset without a batched step —
  ``fit_many`` would fit it one model at a time anyway — or ``batched=False``).

Both run on joblib/loky processes or, with ``backend="dask"``, on a Dask cluster.
"""
from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import numpy as np
import pandas as pd

from .. import runner
from ..seeds import derive_seed
from .batching import DEFAULT_CHUNK_SIZE, check_chunk_size, run_in_chunks, uses_fit_many

__all__ = ["WORLDS", "GameOutputs", "shadow_seed", "frame_digest", "run_game"]

WORLDS = ("out", "in")


@dataclass
class GameOutputs:
    """Featurised outputs of the game.

    features_out, features_in: (n_per_world, n_features), row i = shadow model i of that world
    (the attack splits them in order into train / validation / test).
    n_synth_rows: synthetic rows drawn per world; seeds: per world, the seed of each model.
    seconds: per world, the wall time each model took to fit, sample and featurise when it was
    computed (one thread; read back from the cache, so it measures the original computation).
    Models trained in a chunk (``fit_many``) get the chunk's wall time divided by its number of
    models.
    """

    features_out: np.ndarray
    features_in: np.ndarray
    n_synth_rows: dict[str, int]
    seeds: dict[str, list[int]]
    seconds: dict[str, list[float]] = dataclasses.field(default_factory=dict)

    @property
    def train_seconds(self) -> float:
        """Total compute time of the shadow models (core-seconds)."""
        return float(sum(sum(v) for v in self.seconds.values()))

    @property
    def n_per_world(self) -> int:
        return len(self.features_out)


def shadow_seed(seed: int, world: str, index: int) -> int:
    """Seed of shadow model ``index`` in ``world``: independent streams per (seed, world, index)."""
    if world not in WORLDS:
        raise ValueError(f"world must be one of {WORLDS}, got {world!r}")
    return derive_seed(seed, WORLDS.index(world), index, reduce="shift31")


def frame_digest(df: pd.DataFrame) -> str:
    """SHA-256 (16 hex) of a table's values, index, column names and dtypes."""
    h = hashlib.sha256()
    h.update(repr(list(df.columns)).encode())
    h.update(repr([str(t) for t in df.dtypes]).encode())
    h.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class _Context:
    make_generator: Callable[[int], Any]
    data: dict[str, pd.DataFrame]
    n_rows: dict[str, int]
    featurise: Callable[[pd.DataFrame], np.ndarray]
    label: str | None
    restore: bool
    cache_namespace: str | None
    cache_key: dict | None
    cache_dir: str | None


def _features(ctx: _Context, model: Any, world: str) -> np.ndarray:
    """Draw the world's synthetic table from a fitted model, restore dtypes, featurise."""
    synth = model.sample(ctx.n_rows[world])
    if ctx.restore:
        from ..components.scalers import restore_dtypes  # lazy: the components package imports torch

        synth = restore_dtypes(synth, ctx.data[world].dtypes, policy="audit")
    return np.asarray(ctx.featurise(synth), dtype=float).reshape(-1)


def _train_one(ctx: _Context, world: str, index: int, seed: int) -> dict:
    start = time.perf_counter()
    model = ctx.make_generator(seed)
    df = ctx.data[world]
    model = model.fit(df, label=ctx.label) if ctx.label is not None else model.fit(df)
    features = _features(ctx, model, world)
    return {"features": features, "seconds": time.perf_counter() - start}


def _entry_key(ctx: _Context, world: str, index: int, seed: int) -> dict:
    key = dict(ctx.cache_key or {})
    key.update({"world": world, "index": index, "seed": seed, "n_rows": ctx.n_rows[world],
                "data": frame_digest(ctx.data[world]), "label": ctx.label, "restore_dtypes": ctx.restore})
    return key


def _lookup(ctx: _Context, item: tuple[str, int, int]) -> tuple[bool, Any]:
    if ctx.cache_namespace is None:
        return False, None
    return runner.lookup_cached(_entry_key(ctx, *item), namespace=ctx.cache_namespace, cache_dir_override=ctx.cache_dir)


def _job(ctx: _Context, item: tuple[str, int, int]) -> dict:
    world, index, seed = item
    if ctx.cache_namespace is None:
        return _train_one(ctx, world, index, seed)
    return runner.cached(_entry_key(ctx, world, index, seed), partial(_train_one, ctx, world, index, seed),
                         namespace=ctx.cache_namespace, cache_dir_override=ctx.cache_dir)


def _chunk_job(ctx: _Context, chunk: list[tuple[str, int, int]]) -> list[dict]:
    """One chunk of missing shadow models of one world (``make_generator`` is a PresetFactory):
    one ``fit_many`` call, then sample + featurise + cache each. ``seconds`` of a model = the
    chunk's wall time / its models."""
    start = time.perf_counter()
    models = ctx.make_generator.fit_many([ctx.data[w] for w, _, _ in chunk], [s for _, _, s in chunk], label=ctx.label)
    features = [_features(ctx, model, w) for model, (w, _, _) in zip(models, chunk)]
    per_model = (time.perf_counter() - start) / len(chunk)
    results = [{"features": f, "seconds": per_model} for f in features]
    if ctx.cache_namespace is not None:
        for item, res in zip(chunk, results):
            runner.store_cached(_entry_key(ctx, *item), res, namespace=ctx.cache_namespace, cache_dir_override=ctx.cache_dir)
    return results


@runner.with_options(n_jobs=1)
def run_game(
    make_generator: Callable[[int], Any],
    d_out: pd.DataFrame,
    d_in: pd.DataFrame,
    *,
    n_per_world: int,
    n_synth_rows: int | str = "train_size",
    featurise: Callable[[pd.DataFrame], np.ndarray],
    seed: int = 0,
    options: runner.RunOptions | None = None,
    cache_namespace: str | None = "audit",
    cache_key: dict | None = None,
    label: str | None = None,
    restore: bool = True,
    batched: bool = True,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> GameOutputs:
    """Train ``n_per_world`` shadow models per world and featurise one synthetic table each.

    make_generator: ``seed -> unfitted generator`` (e.g. ``PresetFactory``); must pickle for
        process backends.
    n_synth_rows: rows per synthetic table: an int (same size in both worlds, the "size
        controlled" channel of implementation notes §audit.channels) or "train_size" (4 vs 5 rows on the worst case, as the authors' code).
    featurise: ``DataFrame -> 1-D array`` (``QueryFeaturiser()``, ``NaiveFeaturiser()``).
    options: how it runs (:class:`~pategan_audit.runner.RunOptions`; default: the options in
        force with one in-process worker, no progress bar).
    cache_namespace: result-cache namespace (None: no caching); ``cache_key`` adds/overrides the
        description of the setting (default: ``runner.describe_for_cache`` of ``make_generator`` and
        ``featurise``).
    label: passed to ``fit`` (None: the authors' audit fits without label semantics).
    batched: train the shadow models of a ``PresetFactory`` whose preset has a batched step in
        chunks through ``fit_many`` (module docstring); False: one job per model (the reference).
    chunk_size: at most this many models per ``fit_many`` call (fewer when that keeps the
        ``n_jobs`` workers busy); the progress bar then counts chunks, its label says how many
        models they hold.
    """
    if not isinstance(n_per_world, (int, np.integer)) or n_per_world < 1:
        raise ValueError(f"n_per_world must be a positive integer, got {n_per_world!r}")
    for name, df in (("d_out", d_out), ("d_in", d_in)):
        if not isinstance(df, pd.DataFrame) or len(df) == 0:
            raise ValueError(f"{name} must be a non-empty DataFrame")
    if list(d_out.columns) != list(d_in.columns):
        raise ValueError(f"d_out and d_in must have the same columns, got {list(d_out.columns)} vs {list(d_in.columns)}")
    if n_synth_rows == "train_size":
        n_rows = {"out": len(d_out), "in": len(d_in)}
    elif isinstance(n_synth_rows, (int, np.integer)) and not isinstance(n_synth_rows, bool) and n_synth_rows > 0:
        n_rows = {"out": int(n_synth_rows), "in": int(n_synth_rows)}
    else:
        raise ValueError(f"n_synth_rows must be a positive int or 'train_size', got {n_synth_rows!r}")
    chunk_size = check_chunk_size(chunk_size)
    key = None
    if cache_namespace is not None:
        key = {"generator": runner.describe_for_cache(make_generator), "featuriser": runner.describe_for_cache(featurise)}
        key.update(cache_key or {})
    ctx = _Context(make_generator, {"out": d_out.reset_index(drop=True), "in": d_in.reset_index(drop=True)},
                   n_rows, featurise, label, restore, cache_namespace, key,
                   str(runner.cache_dir(options.cache_dir)) if cache_namespace is not None else None)
    items = [(w, i, shadow_seed(seed, w, i)) for i in range(n_per_world) for w in WORLDS]
    if uses_fit_many(make_generator, batched):
        results = run_in_chunks(items, lookup=partial(_lookup, ctx), group=lambda item: item[0], job=partial(_chunk_job, ctx),
                                chunk_size=chunk_size, options=options, label="shadow models")
    else:
        results = runner.run_map(partial(_job, ctx), items, options, label="shadow models")
    feats = [r["features"] for r in results]
    by_world: dict[str, list[np.ndarray]] = {w: [] for w in WORLDS}
    seconds: dict[str, list[float]] = {w: [] for w in WORLDS}
    for (w, _, _), r in zip(items, results):
        by_world[w].append(r["features"])
        seconds[w].append(float(r["seconds"]))
    widths = {len(f) for f in feats}
    if len(widths) != 1:
        raise ValueError(f"the featuriser returned vectors of different lengths {sorted(widths)}")
    return GameOutputs(
        features_out=np.vstack(by_world["out"]), features_in=np.vstack(by_world["in"]),
        n_synth_rows=n_rows, seeds={w: [s for (ww, _, s) in items if ww == w] for w in WORLDS}, seconds=seconds,
    )
