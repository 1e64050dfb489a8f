"""Target selection for the GroundHog audit ("mini-MIAs", ``ganev2025elusive`` §6.2; implementation notes §audit.target).

1. Min-max scale the whole training table (all columns, fitted on it).
2. For every row: mean Euclidean distance to its 5 nearest *other* rows (k-d tree).
3. Candidates = the m rows with the largest mean distance (paper: m = 64).
4. For each candidate: r models of the ``original`` implementation on D′ = D without it and r on
   D (paper: r = 100, 1,000 iterations); score each model by its critic's output on the
   candidate (white-box — the paper only says "running MIAs"); AUC of in vs out.
5. Target = the candidate with the highest AUC (paper: row 397, AUC 0.6659).

Step 4 needs a white-box hook on the generator: ``model.critic_score(rows: DataFrame) ->
array`` (the discriminator's output per row, the authors' ``sd_predict``). The scoring is a
parameter (``score``) so any generator with another hook can be used.

Deviation: the authors rank with ``np.argsort`` (unstable on ties); we use a stable descending
sort, which gives the same top 64 on Cervical (tests/auditing/test_targets.py).

Each score is cached per model. With a :class:`~pategan_audit.implementations.factory.PresetFactory`
whose preset has a batched step (and ``batched=True``), the models of one (candidate, world)
are fitted together through :func:`pategan_audit.implementations.fit_many` (chunks of at most
``chunk_size``, :mod:`pategan_audit.auditing.batching`), each chunk one parallel job that reads
the cached scores first and fits only the missing models; otherwise each model is one job.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from sklearn.metrics import roc_auc_score

from .. import runner
from ..seeds import derive_seed
from .batching import DEFAULT_CHUNK_SIZE, check_chunk_size, run_in_chunks, uses_fit_many
from .game import frame_digest

__all__ = ["vulnerability_distances", "rank_candidates", "critic_score", "TargetSelection", "select_target"]


def vulnerability_distances(df: pd.DataFrame, *, k: int = 5) -> np.ndarray:
    """Mean distance of each row to its ``k`` nearest other rows after min-max scaling (implementation notes §audit.target).

    Constant columns scale to 0 (as sklearn's MinMaxScaler). Returns an array (len(df),).
    """
    if not isinstance(df, pd.DataFrame) or len(df) <= k:
        raise ValueError(f"need a DataFrame with more than k={k} rows")
    x = df.to_numpy(dtype=float)
    if not np.isfinite(x).all():
        raise ValueError("the table has NaN/inf values; clean it first (datasets.load does)")
    lo, hi = x.min(axis=0), x.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    z = (x - lo) / span
    dist, _ = cKDTree(z).query(z, k=k + 1)
    return dist[:, 1:].mean(axis=1)  # column 0 is the row itself (distance 0)


def rank_candidates(df: pd.DataFrame, *, n_candidates: int = 64, k: int = 5) -> pd.DataFrame:
    """The ``n_candidates`` most isolated rows, most isolated first (implementation notes §audit.target).

    Returns a DataFrame with columns ``row`` (position in ``df``) and ``distance``.
    """
    if n_candidates < 1:
        raise ValueError(f"n_candidates must be >= 1, got {n_candidates}")
    d = vulnerability_distances(df, k=k)
    order = np.argsort(-d, kind="stable")[:n_candidates]
    return pd.DataFrame({"row": order.astype(int), "distance": d[order]})


def critic_score(model: Any, rows: pd.DataFrame) -> np.ndarray:
    """White-box score: the fitted model's critic/discriminator output on ``rows``.

    Uses ``model.critic_score(rows)`` when the generator has that hook. Otherwise, for the
    WGAN-based presets (``original``, ``turing``) it evaluates their critic ``model.D`` on the
    rows mapped to model space with the fitted ``model.scaler`` (unconditional models only) —
    a stop-gap that reads preset internals until the hook exists.
    """
    hook = getattr(model, "critic_score", None)
    if hook is not None:
        return np.asarray(hook(rows), dtype=float).reshape(-1)
    if all(hasattr(model, a) for a in ("D", "scaler", "features_")) and getattr(model, "cond_", None) is None:
        import torch

        x = torch.as_tensor(model.scaler.transform(rows[model.features_]), dtype=torch.float32)
        with torch.no_grad():
            return model.D(x)[:, 0].to(torch.float64).numpy()
    raise AttributeError(
        f"{type(model).__name__} has no critic_score(rows) method; target selection (implementation notes §audit.target) needs the "
        "discriminator's output on the candidate row (authors' sd_predict) - use the 'original' preset"
    )


@dataclass
class TargetSelection:
    """Result of the mini-MIAs: one row per candidate (row, distance, out_mean, in_mean, auc),
    in distance order, and the chosen ``target`` (row position with the largest AUC)."""

    candidates: pd.DataFrame
    target: int
    n_models: int

    @property
    def target_auc(self) -> float:
        return float(self.candidates.set_index("row").loc[self.target, "auc"])


@dataclass(frozen=True)
class _Ctx:
    make_generator: Callable[[int], Any]
    df: pd.DataFrame
    score: Callable[[Any, pd.DataFrame], np.ndarray]
    label: str | None
    cache_namespace: str | None
    cache_key: dict | None
    cache_dir: str | None


def _world_data(ctx: _Ctx, row: int, world: str) -> pd.DataFrame:
    return ctx.df if world == "in" else ctx.df.drop(index=row).reset_index(drop=True)


def _score_one(ctx: _Ctx, row: int, world: str, seed: int) -> float:
    data = _world_data(ctx, row, world)
    model = ctx.make_generator(seed)
    model = model.fit(data, label=ctx.label) if ctx.label is not None else model.fit(data)
    return float(ctx.score(model, ctx.df.iloc[[row]])[0])


def _entry_key(ctx: _Ctx, item: tuple[int, str, int, int]) -> dict:
    row, world, index, seed = item
    key = dict(ctx.cache_key or {})
    key.update({"row": row, "world": world, "index": index, "seed": seed})
    return key


def _lookup(ctx: _Ctx, item: tuple[int, str, int, int]) -> tuple[bool, Any]:
    if ctx.cache_namespace is None:
        return False, None
    return runner.lookup_cached(_entry_key(ctx, item), namespace=ctx.cache_namespace, cache_dir_override=ctx.cache_dir)


def _job(ctx: _Ctx, item: tuple[int, str, int, int]) -> float:
    row, world, index, seed = item
    if ctx.cache_namespace is None:
        return _score_one(ctx, row, world, seed)
    return runner.cached(_entry_key(ctx, item), partial(_score_one, ctx, row, world, seed),
                         namespace=ctx.cache_namespace, cache_dir_override=ctx.cache_dir)


def _chunk_job(ctx: _Ctx, chunk: list[tuple[int, str, int, int]]) -> list[float]:
    """Missing models of one (candidate, world) (``make_generator`` is a PresetFactory): one
    ``fit_many`` call, then score and cache each."""
    row, world = chunk[0][0], chunk[0][1]
    if any((r, w) != (row, world) for r, w, _, _ in chunk):
        raise ValueError("a target-selection chunk must hold the models of one (candidate, world)")
    models = ctx.make_generator.fit_many([_world_data(ctx, row, world)] * len(chunk), [s for *_, s in chunk], label=ctx.label)
    scores = [float(ctx.score(model, ctx.df.iloc[[row]])[0]) for model in models]
    if ctx.cache_namespace is not None:
        for item, value in zip(chunk, scores):
            runner.store_cached(_entry_key(ctx, item), value, namespace=ctx.cache_namespace, cache_dir_override=ctx.cache_dir)
    return scores


@runner.with_options(n_jobs=1)
def select_target(
    df: pd.DataFrame,
    make_generator: Callable[[int], Any],
    *,
    n_candidates: int = 64,
    rows: Sequence[int] | None = None,
    n_models: int = 100,
    seed: int = 0,
    score: Callable[[Any, pd.DataFrame], np.ndarray] = critic_score,
    label: str | None = None,
    options: runner.RunOptions | None = None,
    cache_namespace: str | None = "audit_targets",
    batched: bool = True,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> TargetSelection:
    """Run the mini-MIAs of implementation notes §audit.target on the ``n_candidates`` most isolated rows of ``df``.

    ``rows``: run only these candidates (row positions among the ``n_candidates`` ranked ones, or
    any rows when given with ``n_candidates`` large enough); the models of a candidate do not
    depend on which others run with it, so a long selection can run a few candidates at a time
    (the ``audit_targets_large`` archive does). The result then covers those rows only.
    ``make_generator(seed)`` builds an unfitted white-box generator (paper: ``original``, k = 5,
    1,000 iterations); ``n_models`` per world per candidate (paper: 100). Shadow models of all
    candidates run in one parallel map; each score is cached (resumable).
    batched / chunk_size: fit the models of each (candidate, world) together through ``fit_many``
    when ``make_generator`` is a PresetFactory with a batched step (module docstring); the scores
    are the same up to the float rounding of the batched networks.
    options: how it runs (:class:`~pategan_audit.runner.RunOptions`; default: the options in
    force with one in-process worker).
    """
    if n_models < 1:
        raise ValueError(f"n_models must be >= 1, got {n_models}")
    chunk_size = check_chunk_size(chunk_size)
    ranked = rank_candidates(df, n_candidates=n_candidates)
    if rows is not None:
        wanted = [int(r) for r in rows]
        missing = sorted(set(wanted) - set(ranked["row"].astype(int)))
        if missing:
            raise ValueError(f"rows {missing} are not among the {n_candidates} most isolated candidates; "
                             "raise n_candidates or pick ranked rows (rank_candidates)")
        ranked = ranked[ranked["row"].astype(int).isin(wanted)].reset_index(drop=True)
    df = df.reset_index(drop=True)
    key = None
    if cache_namespace is not None:
        key = {"generator": runner.describe_for_cache(make_generator), "score": runner.describe_for_cache(score),
               "data": frame_digest(df), "label": label}
    ctx = _Ctx(make_generator, df, score, label, cache_namespace, key,
               str(runner.cache_dir(options.cache_dir)) if cache_namespace is not None else None)
    items = []
    for row in ranked["row"]:
        for i in range(n_models):
            for world in ("out", "in"):
                items.append((int(row), world, i, derive_seed(seed, row, ("out", "in").index(world), i, reduce="shift31")))
    if uses_fit_many(make_generator, batched):
        scores = run_in_chunks(items, lookup=partial(_lookup, ctx), group=lambda item: item[:2], job=partial(_chunk_job, ctx),
                               chunk_size=chunk_size, options=options, label="target selection")
    else:
        scores = runner.run_map(partial(_job, ctx), items, options, label="target selection")
    table = ranked.copy()
    out_mean, in_mean, aucs = [], [], []
    for row in ranked["row"]:
        s_out = np.array([s for (r, w, _, _), s in zip(items, scores) if r == row and w == "out"])
        s_in = np.array([s for (r, w, _, _), s in zip(items, scores) if r == row and w == "in"])
        out_mean.append(s_out.mean())
        in_mean.append(s_in.mean())
        labels = np.r_[np.zeros(len(s_out)), np.ones(len(s_in))]
        aucs.append(float(roc_auc_score(labels, np.r_[s_out, s_in])))
    table["out_mean"], table["in_mean"], table["auc"] = out_mean, in_mean, aucs
    target = int(table.loc[table["auc"].idxmax(), "row"])  # first (most isolated) on ties
    return TargetSelection(candidates=table, target=target, n_models=n_models)
