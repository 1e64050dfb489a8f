"""Running utility cells: train M generators, draw S tables from each, score the classifier
panel on the real test split, and return a tidy table (paper §5, App. C; implementation notes §utility.setting-a, §utility.best-of-n, §records.schema).

Tidy schema (implementation notes §records.schema), one row per (model, table, classifier):
``cell`` (a short hash of the cell's config: one best-of-n number per cell), ``dataset, implementation, epsilon, delta, num_teachers, variant, model, table, classifier,
auroc, auprc, status, single_class, iterations, fit_seconds, n_train`` plus the cell's knobs
(``max_iter, subsample, mlp_max_iter, xgb_n_jobs, adaboost, n_models, n_tables, seed``;
``adaboost`` is missing in records made before the knob existed, which ran SAMME; ``same_as_epsilon``
is set only in a cell taken from its smaller-ε twin that the cap held, :mod:`.twins`). Setting A rows
have implementation ``"real"``, ε/δ/k missing, model = table = -1, and are the only rows that may
hold the ``majority`` baseline. A model whose training was refused because ε is below its
accountant's floor (smartnoise, implementation notes §utility.settings) gives rows with status ``"not_trained"`` and NaN scores.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import shutil
import time
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pandas as pd

from .. import runner
from . import twins
from ..alternatives import MECHANISMS, AlternativeFactory, bounds_domain, dpmm_version
from ..classifiers import PreparedTable, evaluate_classifier, evaluate_table, prepare_table
from ..implementations.base import flush_denormal_requested
from ..implementations.factory import PresetFactory
from ..replicas import checkpoint
from ..implementations.registry import utility_harness_overrides
from .cells import SettingACell, UtilityCell, derive_seed, teacher_count, teacher_ratio, to_training_dtypes

__all__ = ["COLUMNS", "cell_id", "load_dataset", "resolve_teachers", "evaluate_cell", "evaluate_setting_a", "run_cell", "run_cells", "iter_cells",
           "score_table", "score_tables", "scoring_jobs", "split_workers", "table_digest"]

NAMESPACE = "utility"
COLUMNS = [
    "cell", "dataset", "implementation", "epsilon", "delta", "num_teachers", "variant", "model", "table", "classifier",
    "auroc", "auprc", "status", "single_class", "iterations", "fit_seconds", "eval_seconds", "n_train",
    "max_iter", "subsample", "mlp_max_iter", "xgb_n_jobs", "adaboost", "n_models", "n_tables", "seed", "same_as_epsilon",
    "flush_denormal",
]


@lru_cache(maxsize=8)
def load_dataset(name: str, subsample: int | None):
    """``pategan_audit.datasets.load`` with the training subsample (stratified, seed 13),
    memoised per process (a worker loads each dataset once)."""
    from .. import datasets

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Credit notice is recorded in ds.notes
        return datasets.load(name, subsample=subsample)


def resolve_teachers(cell: UtilityCell, n_train: int) -> int:
    """k of a cell: explicit, or max(2, N // ratio) on the training split actually used."""
    if cell.num_teachers is not None:
        return int(cell.num_teachers)
    return teacher_count(n_train=n_train, ratio=teacher_ratio(cell.dataset))


#: the public-bounds bins of a marginal mechanism's cell unless its overrides say otherwise (the
#: setting ``benchmarks/alternatives_cost.py`` measured on Cervical)
MECHANISM_BINS = 8


def mechanism_factory(cell: UtilityCell, data: Any) -> AlternativeFactory:
    """A cell of a marginal mechanism (``cell.implementation`` a key of
    :data:`pategan_audit.alternatives.MECHANISMS`: MST, AIM, PrivBayes): the training split's bounds
    as its public domain (as ``corrected`` gets them, ``ganev2025elusive`` §5), ``bins`` from the
    cell's overrides (default :data:`MECHANISM_BINS`) and every other override passed to dpmm's
    model (e.g. ``n_iters``)."""
    settings = dict(cell.overrides)
    bins = settings.pop("bins", MECHANISM_BINS)
    return AlternativeFactory(cell.implementation, epsilon=cell.epsilon, delta=cell.delta, bins=bins,
                              domain=bounds_domain(data.bounds),
                              model_kwargs=tuple(sorted(settings.items())))


def _default_factory(cell: UtilityCell, k: int, data: Any) -> PresetFactory | AlternativeFactory:
    """A marginal mechanism's cell: :func:`mechanism_factory`. Otherwise the cell's preset with its settings (``num_teachers`` resolved, ``max_iter``,
    ``record=False``, the utility harness's own settings where it differs from the audit harness
    (:func:`utility_harness_overrides`: turing's truncating decode and uncapped batch), then the
    cell's overrides) and the public-bounds rule applied with the training split's bounds (presets
    that never read bounds from the data, ``corrected``, get them: the paper treats these bounds as
    public, ``ganev2025elusive`` §5)."""
    if cell.implementation in MECHANISMS:
        return mechanism_factory(cell, data)
    overrides = {"num_teachers": k, "max_iter": cell.max_iter, "record": False,
                 **utility_harness_overrides(cell.implementation), **dict(cell.overrides)}
    return PresetFactory.for_data(cell.implementation, epsilon=cell.epsilon, delta=cell.delta, overrides=overrides,
                                  public_bounds=data.bounds)


def _below_accountant_floor(generator: Any, epsilon: float) -> bool:
    """True when ε < log(1/δ)/L, the moments accountant's value before any query (implementation notes §utility.settings): the
    only case in which a failed fit is recorded instead of raised (smartnoise refuses to train)."""
    config = getattr(generator, "config", None)
    moments = getattr(config, "num_moments", None)
    delta = getattr(config, "delta", None)
    if not moments or not delta:
        return False
    return epsilon < math.log(1.0 / float(delta)) / float(moments)


def cell_id(cell: UtilityCell | SettingACell) -> str:
    """Short, source-independent hash of a cell's config (the ``cell`` column)."""
    return runner.config_hash(cell.cache_key(), namespace=NAMESPACE, include_source=False)[:12]


def _knob_columns(cell: UtilityCell | SettingACell) -> dict[str, Any]:
    return {
        "max_iter": getattr(cell, "max_iter", None), "subsample": cell.subsample, "mlp_max_iter": cell.mlp_max_iter,
        "xgb_n_jobs": cell.xgb_n_jobs, "adaboost": cell.adaboost, "n_models": getattr(cell, "n_models", None),
        "n_tables": getattr(cell, "n_tables", None), "seed": cell.seed,
    }


def evaluate_cell(cell: UtilityCell, *, data: Any = None, make_generator: Callable[[int], Any] | None = None,
                  reuse_scores: bool = False, cache_dir: Any = None,
                  score_options: runner.RunOptions | None = None) -> pd.DataFrame:
    """Setting B for one cell, uncached (implementation notes §utility.best-of-n steps 1-3).

    data: an object with ``train``, ``test``, ``label`` (default: ``load_dataset``).
    make_generator: ``seed -> unfitted generator`` (default: ``implementations.create`` with the
        cell's settings, ``num_teachers`` resolved, ``record=False``; the default fits the
        ``n_models`` generators in one ``implementations.fit_many`` call, each model's
        ``fit_seconds`` being that call's wall time / ``n_models``).
    Each synthetic table has as many rows as the training split and is cast back to its dtypes
    (implementation notes §data.split) before the classifiers see it. Model m is seeded ``derive_seed(seed, m)`` whatever the
    implementation or ε (common random numbers across the cells of one sweep); table s of model m
    with ``derive_seed(seed, m, s, 1)``, its classifier panel with ``derive_seed(seed, m, s, 2)``.
    Deviation: the authors seed one global stream with 13 and nothing else (implementation notes §data.split).
    reuse_scores: read each table's classifier scores from the result cache (namespace
        ``"scores"``, in ``cache_dir``) when a table with the same content was scored before on
        the same test split with the same classifiers, seed and knobs (:func:`score_table`);
        the cell's own result is still computed, not read. Such a table's ``eval_seconds`` is
        then the time to draw it and read its scores.
    score_options: how the scoring runs (:class:`~pategan_audit.runner.RunOptions`; default one
        job at a time in this process): every (table, classifier) pair is an independent job
        (:func:`score_tables`), so ``RunOptions(n_jobs=16)`` scores 16 at once. The scores are the
        same whatever the workers (each classifier's seed is a function of the table's seed and its
        place in the panel; every job runs with one torch/BLAS thread). ``eval_seconds`` is then
        the table's one-core time: drawing it, scaling it and the sum of its classifiers' jobs.
    """
    if not isinstance(cell, UtilityCell):
        raise ValueError(f"evaluate_cell takes a UtilityCell, got {type(cell).__name__}")
    data = data if data is not None else load_dataset(cell.dataset, cell.subsample)
    train, test = data.train, data.test
    mechanism = cell.implementation in MECHANISMS  # no teachers, no iterations
    k = None if mechanism else resolve_teachers(cell, len(train))
    make = make_generator if make_generator is not None else _default_factory(cell, k, data)
    base = {
        "cell": cell_id(cell), "dataset": cell.dataset, "implementation": cell.implementation, "epsilon": cell.epsilon,
        "delta": cell.delta,
        "num_teachers": k, "variant": cell.variant, "n_train": len(train), **_knob_columns(cell),
        # trained with denormal floats flushed to zero (a session setting; other numbers at rounding level)
        "flush_denormal": flush_denormal_requested(),
    }
    seeds = [derive_seed(cell.seed, m) for m in range(cell.n_models)]
    # fit every model and draw every table first, then score all (table, classifier) pairs at once
    slots: list[tuple[int, Any]] = []  # (model, None) = not trained; (model, index into drawn)
    drawn: list[dict[str, Any]] = []
    for m, generator, fit_seconds in _fitted(make, seeds, train, data.label, cell.epsilon):
        if generator is None:
            slots.append((m, None))
            continue
        iterations = getattr(getattr(generator, "trace", None), "iterations", None)
        for s in range(cell.n_tables):
            start = time.perf_counter()
            synth = generator.sample(len(train), seed=derive_seed(cell.seed, m, s, 1))
            synth = to_training_dtypes(synth, train)
            slots.append((m, len(drawn)))
            drawn.append({"table": s, "synth": synth, "single": bool(synth.iloc[:, -1].nunique() < 2),
                          "iterations": iterations, "fit_seconds": fit_seconds,
                          "draw_seconds": time.perf_counter() - start,
                          "seed": derive_seed(cell.seed, m, s, 2)})
    scored = score_tables([(d["synth"], d["seed"]) for d in drawn], test, classifiers=cell.classifiers,
                          knobs=cell.knobs, reuse=reuse_scores, cache_dir=cache_dir, options=score_options)
    rows: list[dict[str, Any]] = []
    for m, index in slots:
        if index is None:
            for c in cell.classifiers:
                rows.append({**base, "model": m, "table": -1, "classifier": c, "auroc": np.nan, "auprc": np.nan,
                             "status": "not_trained", "single_class": None, "iterations": 0, "fit_seconds": np.nan,
                             "eval_seconds": np.nan})
            continue
        d = drawn[index]
        scores, seconds = scored[index]
        for rec in scores.to_dict("records"):
            rows.append({**base, "model": m, "table": d["table"], **rec, "status": "ok", "single_class": d["single"],
                         "iterations": d["iterations"], "fit_seconds": d["fit_seconds"],
                         "eval_seconds": d["draw_seconds"] + seconds})
    return pd.DataFrame(rows, columns=COLUMNS)


SCORES_NAMESPACE = "scores"


def table_digest(df: pd.DataFrame) -> str:
    """SHA-256 of a table's content: its column names, dtypes and every value (row order included)."""
    h = hashlib.sha256()
    h.update(json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode())
    h.update(np.ascontiguousarray(pd.util.hash_pandas_object(df, index=False).to_numpy()).tobytes())
    return h.hexdigest()


def score_table(synth: pd.DataFrame, test: pd.DataFrame, *, classifiers: tuple[str, ...], seed: int, knobs: Any,
                reuse: bool = False, cache_dir: Any = None) -> pd.DataFrame:
    """:func:`~pategan_audit.classifiers.evaluate_table` of one synthetic table, optionally through
    the result cache keyed by the table's content (:func:`table_digest`), the test split's, the
    classifiers, the seed and the knobs.

    The scores are a deterministic function of exactly these inputs, so a table drawn again
    gives the same scores without training the panel again. This happens across the ε of one
    sweep: models are seeded whatever ε (common random numbers), so presets in which ε only sets
    when training stops draw identical tables wherever the budget stops them at the same
    iteration (e.g. after 1 iteration at every small ε) or the iteration cap holds them.
    """
    compute = lambda: evaluate_table(synth, test, classifiers=classifiers, seed=seed, knobs=knobs)  # noqa: E731
    if not reuse:
        return compute()
    key = {"synthetic": table_digest(synth), "test": table_digest(test), "classifiers": list(classifiers),
           "seed": int(seed), "knobs": knobs}
    return runner.cached(key, compute, namespace=SCORES_NAMESPACE, cache_dir_override=cache_dir)


def _scores_key(synth: pd.DataFrame, test_digest: str, classifiers: tuple[str, ...], seed: int, knobs: Any) -> dict[str, Any]:
    """The result-cache key of one table's scores (:func:`score_table`'s)."""
    return {"synthetic": table_digest(synth), "test": test_digest, "classifiers": list(classifiers),
            "seed": int(seed), "knobs": knobs}


def scoring_jobs(n_tables: int, n_classifiers: int) -> list[tuple[int, int]]:
    """The jobs of scoring ``n_tables`` tables with a panel of ``n_classifiers``: every
    ``(table, classifier)`` pair once, table by table (the order only decides when a job
    starts, never its result: a job's seed is fixed by its table and its place in the panel)."""
    if n_tables < 0 or n_classifiers < 0:
        raise ValueError(f"table and classifier counts must be >= 0, got {n_tables} and {n_classifiers}")
    return [(t, c) for t in range(n_tables) for c in range(n_classifiers)]


def _classifier_job(item: tuple[PreparedTable, int, Any]) -> tuple[dict[str, Any], float]:
    """One scoring job (module level, so that process pools can pickle it): a classifier's row
    and its one-core seconds."""
    table, index, knobs = item
    start = time.perf_counter()
    row = evaluate_classifier(table, index, knobs=knobs)
    return row, time.perf_counter() - start


def _worker_count(options: runner.RunOptions, jobs: int) -> int:
    """Workers worth starting for ``jobs`` jobs: no more than the jobs (1 runs them in-process)."""
    wanted = runner.resolve_jobs(options.n_jobs)
    if wanted < 0:  # joblib's convention: -1 = every CPU
        wanted = max(1, (os.cpu_count() or 1) + 1 + wanted)
    return max(1, min(wanted, jobs))


def score_tables(tables: list[tuple[pd.DataFrame, int]], test: pd.DataFrame, *, classifiers: tuple[str, ...],
                 knobs: Any, reuse: bool = False, cache_dir: Any = None,
                 options: runner.RunOptions | None = None) -> list[tuple[pd.DataFrame, float]]:
    """:func:`score_table` of many ``(synthetic table, seed)`` pairs, every (table, classifier)
    pair an independent job (:func:`scoring_jobs`) run as ``options`` say
    (:func:`runner.run_map`: loky or Dask, one torch/BLAS thread per job; default one job at a
    time in this process). Returns ``(scores, seconds)`` per table, in order: the rows of
    :func:`~pategan_audit.classifiers.evaluate_table` (bit-identical whatever the workers) and
    the table's one-core seconds (scaling plus its classifiers' jobs, or reading its cached
    scores). ``reuse``: tables scored before are read from the cache (namespace ``"scores"``)
    and newly scored ones are stored there, as :func:`score_table` does."""
    options = runner.RunOptions.defaulted(options, n_jobs=1)
    classifiers = tuple(classifiers)
    results: list[tuple[pd.DataFrame, float] | None] = [None] * len(tables)
    keys: dict[int, dict[str, Any]] = {}
    prepared: dict[int, tuple[PreparedTable, float]] = {}
    test_digest = table_digest(test) if reuse else ""
    for i, (synth, seed) in enumerate(tables):
        start = time.perf_counter()
        if reuse:
            keys[i] = _scores_key(synth, test_digest, classifiers, seed, knobs)
            hit, stored = runner.lookup_cached(keys[i], namespace=SCORES_NAMESPACE, cache_dir_override=cache_dir)
            if hit:
                results[i] = (stored, time.perf_counter() - start)
                continue
        table = prepare_table(synth, test, classifiers=classifiers, seed=seed)  # validates before any job starts
        prepared[i] = (table, time.perf_counter() - start)
    todo = sorted(prepared)
    jobs = [(todo[t], c) for t, c in scoring_jobs(len(todo), len(classifiers))]
    if jobs:
        workers = _worker_count(options, len(jobs)) if options.backend != "dask" else options.n_jobs
        per_table: dict[int, list[tuple[dict[str, Any], float]]] = {i: [None] * len(classifiers) for i in todo}
        left = {i: len(classifiers) for i in todo}
        # each table's scores are kept (and cached) as soon as its whole panel is done, so that a run
        # stopped mid-cell resumes from the tables it finished (the cell itself is cached only whole)
        for j, res in runner.run_imap(_classifier_job, [(prepared[i][0], c, knobs) for i, c in jobs], options,
                                      label="scoring", n_jobs=workers):
            i, c = jobs[j]
            per_table[i][c] = res
            left[i] -= 1
            if left[i] == 0:
                frame = pd.DataFrame([row for row, _ in per_table[i]], columns=["classifier", "auroc", "auprc"])
                results[i] = (frame, prepared[i][1] + sum(sec for _, sec in per_table[i]))
                if reuse:
                    runner.store_cached(keys[i], frame, namespace=SCORES_NAMESPACE, cache_dir_override=cache_dir)
    return results  # type: ignore[return-value]


def _fitted(make: Callable[[int], Any], seeds: list[int], train: pd.DataFrame, label: str | None, epsilon: float):
    """Yield ``(m, fitted generator or None, fit_seconds)`` per model; None = refused to train
    because ε is below the accountant's floor (any other failure raises).

    The default factory (:class:`~pategan_audit.implementations.factory.PresetFactory`) fits all models in one ``fit_many`` call; each
    model's ``fit_seconds`` is then that call's wall time divided by the number of models. A
    custom ``make_generator`` fits them one by one (and times each)."""
    if isinstance(make, PresetFactory):
        start = time.perf_counter()
        snap = checkpoint.current()
        before = snap.prior_seconds if snap is not None else 0.0
        try:
            models = make.fit_many(train, seeds, label=label)
        except Exception:
            # the floor depends on the config only (not the seed): then every model refuses
            if not _below_accountant_floor(make(seeds[0]), epsilon):
                raise
            models = [None] * len(seeds)
        # a fit resumed from a snapshot adds the seconds its earlier sessions spent
        resumed = (snap.prior_seconds - before) if snap is not None else 0.0
        per_model = (time.perf_counter() - start + resumed) / len(seeds)
        for m, generator in enumerate(models):
            yield m, generator, (per_model if generator is not None else np.nan)
        return
    for m, seed in enumerate(seeds):
        generator = make(seed)
        start = time.perf_counter()
        try:
            generator.fit(train, label=label)
        except Exception:
            if not _below_accountant_floor(generator, epsilon):
                raise
            yield m, None, np.nan
            continue
        yield m, generator, time.perf_counter() - start


def evaluate_setting_a(cell: SettingACell, *, data: Any = None, score_options: runner.RunOptions | None = None) -> pd.DataFrame:
    """Setting A for one dataset, uncached (implementation notes §utility.setting-a); its classifiers
    scored as ``score_options`` say (:func:`score_tables`; the same scores whatever the workers)."""
    if not isinstance(cell, SettingACell):
        raise ValueError(f"evaluate_setting_a takes a SettingACell, got {type(cell).__name__}")
    data = data if data is not None else load_dataset(cell.dataset, cell.subsample)
    [(scores, _)] = score_tables([(data.train, derive_seed(cell.seed, 0, 0, 2))], data.test, classifiers=cell.classifiers,
                                 knobs=cell.knobs, options=score_options)
    base = {
        "cell": cell_id(cell), "dataset": cell.dataset, "implementation": "real", "epsilon": np.nan, "delta": np.nan, "num_teachers": np.nan,
        "variant": "default", "model": -1, "table": -1, "status": "ok", "single_class": False, "iterations": np.nan,
        "fit_seconds": np.nan, "eval_seconds": np.nan, "n_train": len(data.train), **_knob_columns(cell),
    }
    return pd.DataFrame([{**base, **rec} for rec in scores.to_dict("records")], columns=COLUMNS)


def _key(cell: UtilityCell | SettingACell, data: Any, make_generator: Any) -> dict[str, Any]:
    key = cell.cache_key()
    if getattr(cell, "implementation", None) in MECHANISMS and make_generator is None:
        key["dpmm"] = dpmm_version()  # another dpmm, other models
    if make_generator is not None:  # a custom generator must not share entries with the presets
        key["generator"] = f"{getattr(make_generator, '__module__', '?')}.{getattr(make_generator, '__qualname__', repr(make_generator))}"
    if data is not None:
        key["data"] = [int(pd.util.hash_pandas_object(df, index=False).sum() % (2**61)) for df in (data.train, data.test)]
    return key


def run_cell(
    cell: UtilityCell | SettingACell,
    *,
    data: Any = None,
    make_generator: Callable[[int], Any] | None = None,
    cache_dir: Any = None,
    refresh: bool = False,
    score_options: runner.RunOptions | None = None,
) -> pd.DataFrame:
    """The tidy result of a cell (Setting B or A), through the result cache (namespace
    ``"utility"``): a second call with the same cell reads the stored table. A cell that is
    computed reuses the scores of any table that was scored before (``evaluate_cell``'s
    ``reuse_scores``), unless ``refresh``; a preset cell (default data and generator) whose
    smaller-ε twin is in the cache and was held by the iteration cap takes that twin's records
    (:mod:`.twins`), unless ``refresh``. ``score_options``: how the cell's tables are scored
    (:func:`evaluate_cell`); not part of the cache key, as it changes no score."""
    chained = not refresh and data is None and make_generator is None and twins.eligible(cell)
    twin = None
    if chained:
        stored = _cached_or_none(cell, cache_dir)  # the same key runner.cached would read below
        if stored is not None:
            return stored
        nearest = twins.smaller_twins(cell)
        if nearest:  # this cell may be a copy of the one another worker is computing
            _wait_while_running(nearest[0], cache_dir)
        twin = twins.find_capped_twin(cell, lambda c: _cached_or_none(c, cache_dir))
    if isinstance(cell, SettingACell):
        compute = lambda: evaluate_setting_a(cell, data=data, score_options=score_options)  # noqa: E731
    elif twin is not None:
        compute = lambda: twins.from_twin(cell, twin)  # noqa: E731
    else:
        compute = lambda: evaluate_cell(cell, data=data, make_generator=make_generator,  # noqa: E731
                                        reuse_scores=not refresh, cache_dir=cache_dir, score_options=score_options)
    if chained and twin is None:
        compute = _announced(cell, cache_dir, compute)
    snapshots = None
    if isinstance(cell, UtilityCell) and twin is None:
        snapshots = _snapshot_dir(cell, data, make_generator, cache_dir)
        compute = _resumable(snapshots, compute, fresh=refresh)
    result = runner.cached(_key(cell, data, make_generator), compute, namespace=NAMESPACE,
                           cache_dir_override=cache_dir, refresh=refresh)
    if snapshots is not None:  # the cell is stored: its snapshots are no longer needed
        shutil.rmtree(snapshots, ignore_errors=True)
    return result


def _snapshot_dir(cell: UtilityCell, data: Any, make_generator: Any, cache_dir: Any) -> Path:
    """Where a preset cell's fits keep their snapshots: under the run options' ``snapshots``
    folder, one sub-folder per cell id (the archive points it into its own folder, beside the
    partial records, kept on the work tree and not committed, so that a later run resumes the
    fit), else beside the cell's cache entry."""
    root = runner.current_options().snapshots
    if root and data is None and make_generator is None:
        return Path(root) / cell_id(cell)
    return runner.cache_path(_key(cell, data, make_generator), namespace=NAMESPACE,
                             cache_dir_override=cache_dir).with_suffix(".snapshots")


def _resumable(directory: Path, compute: Callable[[], pd.DataFrame], *, fresh: bool) -> Callable[[], pd.DataFrame]:
    """``compute`` with its batched fits snapshotted under ``directory`` (:mod:`..replicas.checkpoint`):
    a cell stopped mid-fit (a session's end) goes on from its last snapshot when run again, with the
    same numbers; ``fresh`` (refresh) discards old snapshots first."""
    def run() -> pd.DataFrame:
        if fresh:
            shutil.rmtree(directory, ignore_errors=True)
        with checkpoint.checkpointing(directory):
            return compute()
    return run


def _running_path(cell: UtilityCell, cache_dir: Any) -> Path:
    """The marker a worker keeps beside a cell's cache entry while it computes the cell (its pid)."""
    return runner.cache_path(_key(cell, None, None), namespace=NAMESPACE, cache_dir_override=cache_dir).with_suffix(".running")


def _process_tag(pid: int) -> str:
    """``pid`` with the machine's boot id: a marker left by a process of an earlier boot is stale
    even where its pid now names another process."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{pid} {boot}"


def _announced(cell: UtilityCell, cache_dir: Any, compute: Callable[[], pd.DataFrame]) -> Callable[[], pd.DataFrame]:
    """``compute`` with the cell's running marker in place while it runs."""
    def run() -> pd.DataFrame:
        marker = _running_path(cell, cache_dir)
        runner.atomic_write_text(marker, _process_tag(os.getpid()))
        try:
            return compute()
        finally:
            marker.unlink(missing_ok=True)
    return run


def _wait_while_running(cell: UtilityCell, cache_dir: Any, *, poll_seconds: float = 5.0) -> None:
    """Wait while another live process on this machine computes ``cell`` (its running marker
    names a live pid of this boot): the cell waiting may turn out to be its copy (:mod:`.twins`),
    which is cheaper than computing both side by side. A stale marker (its process gone, or of an
    earlier boot) is ignored."""
    marker = _running_path(cell, cache_dir)
    while marker.exists():
        try:
            tag = marker.read_text()
            pid = int(tag.split()[0])
        except (OSError, ValueError, IndexError):
            return
        if pid == os.getpid() or tag != _process_tag(pid) or not _alive(pid):
            return
        time.sleep(poll_seconds)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _NotCached(Exception):
    pass


def _raise_not_cached():
    raise _NotCached


def _cached_or_none(cell, cache_dir) -> pd.DataFrame | None:
    try:
        return runner.cached(_key(cell, None, None), _raise_not_cached, namespace=NAMESPACE, cache_dir_override=cache_dir)
    except _NotCached:
        return None


def _job(args: tuple) -> pd.DataFrame:
    cell, cache_dir, refresh, score_options = args
    return run_cell(cell, cache_dir=cache_dir, refresh=refresh, score_options=score_options)


def split_workers(options: runner.RunOptions, n_cells: int, score_jobs: int | None = None) -> tuple[int, int]:
    """``(cell workers, scoring workers per cell)`` for ``n_cells`` cells to compute with the
    workers ``options`` give (``n_jobs``; -1 or None: every CPU). Cells run side by side, at
    most one worker each; the workers left over score each cell's (table, classifier) jobs
    (:func:`score_tables`), so that one cell on a 16-core machine scores 16 classifiers at once
    and 8 cells score 2 each. ``score_jobs`` fixes the scoring workers per cell instead. On Dask
    the cluster runs the cells, each scored in its worker (``score_jobs`` must be None or 1)."""
    if score_jobs is not None and (isinstance(score_jobs, bool) or not isinstance(score_jobs, (int, np.integer))
                                   or score_jobs < 1):
        raise ValueError(f"score_jobs must be None (share the workers) or a positive integer, got {score_jobs!r}")
    if options.backend == "dask":
        if score_jobs not in (None, 1):
            raise ValueError("score_jobs > 1 needs local workers: on Dask the cluster runs the cells (one task each); "
                             "leave score_jobs unset, or score one cell with evaluate_cell(score_options=RunOptions(backend='dask'))")
        return runner.resolve_jobs(options.n_jobs), 1
    total = _worker_count(options, 1 << 30)
    if options.backend in ("sequential", "threading"):
        return total, score_jobs or 1
    cells = max(1, min(total, n_cells))
    return cells, score_jobs if score_jobs is not None else max(1, total // cells)


_WIDTHS = {"credit": 30, "cervical_cancer": 29, "isolet": 618, "epileptic_seizure": 179, "mnist": 785}  # d, Table 7


def _cost(cell: UtilityCell | SettingACell) -> float:
    """Rough relative cost (rows x columns x classifiers per table, plus training), used only to
    start the longest cells first so that the workers finish together."""
    from .cells import PAPER_TRAIN_SIZES

    rows = cell.subsample or PAPER_TRAIN_SIZES.get(cell.dataset, 1000)
    width = _WIDTHS.get(cell.dataset, 100)
    if isinstance(cell, SettingACell):
        return rows * width * len(cell.classifiers)
    return cell.n * rows * width * len(cell.classifiers) + cell.n_models * (cell.max_iter or 10_000) * width * 200


def iter_cells(
    cells: Iterable[UtilityCell | SettingACell],
    options: runner.RunOptions | None = None,
    *,
    refresh: bool = False,
    longest_first: bool = True,
    score_jobs: int | None = None,
) -> Iterator[tuple[UtilityCell | SettingACell, pd.DataFrame]]:
    """``(cell, tidy table)`` for each distinct cell, yielded as each is ready: cached cells
    first (read in this process), then the rest as their workers finish them
    (:func:`runner.run_imap`), so that a caller can save every finished cell while the others run.
    ``longest_first``: start the most expensive cells first, so that the workers finish together;
    False keeps the given order (an archive's own, chosen so that a session that stops early has
    saved the most cells). ``score_jobs``: scoring workers per cell (default: the workers the
    cells leave idle, :func:`split_workers`). Validation, cache and options as :func:`run_cells`."""
    options = runner.RunOptions.defaulted(options, progress="utility cells")
    cache_dir = options.cache_dir
    unique = list(dict.fromkeys(cells))
    for c in unique:
        if not isinstance(c, (UtilityCell, SettingACell)):
            raise ValueError(f"cells must be UtilityCell or SettingACell objects, got {type(c).__name__}; build them "
                             "with UtilityCell(...) / SettingACell(...) or a profile's main_cells(profile), ...")
    with runner.using(options):  # the cache keys of these options (training threads, flushing)
        found = [(c, None if refresh else _cached_or_none(c, cache_dir)) for c in unique]
    todo = []
    for c, table in found:
        if table is None:
            todo.append(c)
        else:
            yield c, table
    if longest_first:
        todo.sort(key=_cost, reverse=True)
    cell_workers, scorers = split_workers(options, len(todo), score_jobs)
    score_options = dataclasses.replace(options, n_jobs=scorers, backend=None, scheduler=None, progress=False)
    for i, table in runner.run_imap(_job, [(c, cache_dir, refresh, score_options) for c in todo], options,
                                    label="utility cells", n_jobs=cell_workers):
        yield todo[i], table


@runner.with_options(progress="utility cells")
def run_cells(
    cells: Iterable[UtilityCell | SettingACell],
    *,
    options: runner.RunOptions | None = None,
    refresh: bool = False,
    score_jobs: int | None = None,
) -> pd.DataFrame:
    """Run many cells (duplicates once), in parallel via :func:`runner.parallel_map`
    (joblib; ``backend="dask"`` on a Dask cluster), and concatenate their tidy tables.

    Cells already in the cache are read in this process; only the rest go to the workers, the
    most expensive first. An interrupted call resumes where it stopped.
    options: how it runs (:class:`~pategan_audit.runner.RunOptions`; default: the options in
    force with all CPUs, a bar labelled "utility cells"). ``score_jobs``: scoring workers per cell (default: the workers that the
    cells leave idle, :func:`split_workers`; the scores are the same whatever it is).
    """
    unique = list(dict.fromkeys(cells))
    done = dict(iter_cells(unique, options, refresh=refresh, score_jobs=score_jobs))
    frames = [done[c] for c in unique if len(done[c])]
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)
