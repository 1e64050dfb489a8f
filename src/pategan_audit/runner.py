"""Content-addressed result cache and parallel map.

Every expensive result of the book (a trained-and-evaluated utility cell, a batch of
shadow models, a training trace) is computed through :func:`cached`. The key is a hash of
``(namespace, config, package source hash)``, so

* an interrupted run resumes: finished cells are read back, the rest recomputed;
* a change anywhere in ``src/pategan_audit`` invalidates stale entries;
* results are written atomically (temporary file in the same directory, then
  :func:`os.replace`), so a crash never leaves a truncated entry behind.

:func:`parallel_map` runs independent jobs with joblib (loky processes) or, with
``backend="dask"``, as tasks submitted to the workers of a Dask cluster (never silently in the
calling process: joblib's Dask backend runs everything locally when the cluster offers one
thread). Every job, wherever it runs, computes under the same thread configuration (one
torch and one BLAS thread, :func:`job_threads`; training under ``$PATEGAN_AUDIT_TRAIN_THREADS``,
which keys other cache entries when it is not 1), so the worker count never changes a number.
A loky worker exits when the process that started it dies (a killed notebook kernel leaves no
worker behind). :func:`execution_info` says where a map runs, for the archives' meta.
:class:`RunOptions` carries how a computation runs (workers, backend, Dask scheduler,
cache folder, progress) as one frozen value from a notebook down to :func:`run_map`.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, is_dataclass, replace
from dataclasses import fields as dataclass_fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Iterator, TypeVar

import numpy as np

T = TypeVar("T")

__all__ = [
    "REPO_ROOT",
    "cache_dir",
    "config_hash",
    "describe_for_cache",
    "source_hash",
    "cached",
    "cache_path",
    "lookup_cached",
    "store_cached",
    "atomic_write_bytes",
    "atomic_write_text",
    "parallel_map",
    "parallel_imap",
    "RunOptions",
    "run_map",
    "run_imap",
    "resolve_jobs",
    "single_thread",
    "job_threads",
    "train_threads",
    "TRAIN_THREADS_ENV",
    "execution_info",
]

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent.parent


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """Where cached results live: ``override``, else ``$PATEGAN_AUDIT_CACHE``, else
    ``<repo>/results/cache``."""
    if override is not None:
        return Path(override)
    env = os.environ.get("PATEGAN_AUDIT_CACHE")
    return Path(env) if env else REPO_ROOT / "results" / "cache"


# Modules that only present results (plots, pages, the paper's printed numbers): excluded from
# the source hash so that editing a caption does not invalidate hours of cached training.
# Entries are paths relative to the package ("utility/page", "auditing/page", "traces/page": the
# pages' tables and captions).
_PRESENTATION = {"plotting", "report.py", "scorecard.py", "bookhook.py", "reference", "archive.py", "utility/page", "pages",
                 "auditing/page", "traces/page", "diagnoses.py", "tolerances.py", "provenance.py", "display.py"}


def _is_presentation(relative: Path) -> bool:
    return any(relative.parts[: len(Path(p).parts)] == Path(p).parts for p in _PRESENTATION)


@lru_cache(maxsize=1)
def source_hash() -> str:
    """SHA-256 over the package's computing ``.py`` files (path and content; presentation modules
    excluded), truncated to 16 hex digits.

    Set ``PATEGAN_AUDIT_SOURCE_HASH`` to pin it (e.g. to reuse committed results after an
    edit that provably does not change them; the book says when this is done).
    """
    pinned = os.environ.get("PATEGAN_AUDIT_SOURCE_HASH")
    if pinned:
        return pinned
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if _is_presentation(path.relative_to(PACKAGE_DIR)):
            continue  # figures, pages and reference numbers do not change computed results
        h.update(str(path.relative_to(PACKAGE_DIR)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return _jsonable(asdict(obj))
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float):
        return repr(obj)  # exact round-trip, 0.1 != 0.1000001
    if isinstance(obj, (str, int, bool)) or obj is None:
        return obj
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return _jsonable(obj.item())
    raise TypeError(
        f"config value {obj!r} of type {type(obj).__name__} cannot be hashed; "
        "use plain numbers, strings, lists, dicts or dataclasses in cache configs"
    )


def describe_for_cache(obj: Any) -> Any:
    """A JSON-able description of a factory, featuriser or scoring function for cache keys.

    Dataclass instances: class path + public fields (the class path is the class attribute
    ``cache_class`` where the class sets one, to keep keys stable across a move, e.g.
    :class:`pategan_audit.implementations.factory.PresetFactory`). Module-level
    functions/classes: their import path. Anything else (lambdas, closures) cannot be
    described: pass ``cache_namespace=None`` or an explicit ``cache_key``.
    """
    if is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: getattr(obj, f.name) for f in dataclass_fields(obj) if not f.name.startswith("_")}
        path = getattr(type(obj), "cache_class", None) or f"{type(obj).__module__}.{type(obj).__qualname__}"
        return {"class": path, "fields": _plain(fields)}
    qualname = getattr(obj, "__qualname__", "")
    if qualname and "<" not in qualname and hasattr(obj, "__module__"):
        return f"{obj.__module__}.{qualname}"
    raise ValueError(
        f"cannot describe {obj!r} for the result cache; use a module-level dataclass/function, "
        "pass cache_key={...} describing it, or disable caching with cache_namespace=None"
    )


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    return obj


def config_hash(config: Any, *, namespace: str = "", include_source: bool = True) -> str:
    """Stable hash of a config (dict or dataclass) for cache keys. Training with denormals
    flushed (``$PATEGAN_AUDIT_FLUSH_DENORMAL``) or with more than one torch thread
    (``$PATEGAN_AUDIT_TRAIN_THREADS``) gives other numbers, so each keys other entries, like the
    source (the defaults add nothing: their keys are unchanged). ``include_source=False`` names
    the configuration itself (a cell's or an audit setting's id in records and archives): neither
    the source nor the arithmetic is part of it, so a flushed run finds, resumes and extends an
    archive that IEEE runs began."""
    from .implementations.base import flush_denormal_requested

    payload = {"namespace": namespace, "config": _jsonable(config)}
    if include_source:
        payload["source"] = source_hash()
        if flush_denormal_requested():  # absent by default: the IEEE entries keep their keys
            payload["flush_denormal"] = True
        threads = train_threads()
        if threads != 1:  # absent by default: the one-thread entries keep their keys
            payload["train_threads"] = threads
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:24]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same directory + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def cache_path(config: Any, *, namespace: str, cache_dir_override: str | os.PathLike | None = None) -> Path:
    """Where the entry of ``config`` in ``namespace`` lives (it may not exist yet)."""
    return cache_dir(cache_dir_override) / namespace / f"{config_hash(config, namespace=namespace)}.pkl"


def lookup_cached(
    config: Any, *, namespace: str, cache_dir_override: str | os.PathLike | None = None
) -> tuple[bool, Any]:
    """``(True, result)`` when ``config`` has a readable entry, else ``(False, None)``.

    The read half of :func:`cached`, for callers that compute many entries in one go (e.g. a
    chunk of shadow models fitted together) and must know first which ones are missing."""
    path = cache_path(config, namespace=namespace, cache_dir_override=cache_dir_override)
    if path.exists():
        try:
            with open(path, "rb") as fh:
                return True, pickle.load(fh)["result"]
        except Exception:  # unreadable entry (e.g. from an incompatible version): recompute
            pass
    return False, None


def store_cached(
    config: Any, result: Any, *, namespace: str, cache_dir_override: str | os.PathLike | None = None
) -> Path:
    """The write half of :func:`cached`: store ``result`` as the entry of ``config`` (atomically)."""
    path = cache_path(config, namespace=namespace, cache_dir_override=cache_dir_override)
    entry = {"config": _jsonable(config), "namespace": namespace, "source": source_hash(), "result": result}
    return atomic_write_bytes(path, pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))


def cached(
    config: Any,
    compute: Callable[[], T],
    *,
    namespace: str,
    cache_dir_override: str | os.PathLike | None = None,
    refresh: bool = False,
) -> T:
    """Return ``compute()``, reading it from / storing it in the result cache.

    Parameters
    ----------
    config:
        Everything that determines the result (dataset, implementation, epsilon, seed,
        profile knobs...). Plain JSON-like values or a dataclass.
    compute:
        Zero-argument callable producing a picklable result.
    namespace:
        Sub-directory and key prefix, e.g. ``"utility"`` or ``"audit"``.
    refresh:
        Recompute even if an entry exists.
    """
    if not refresh:
        found, result = lookup_cached(config, namespace=namespace, cache_dir_override=cache_dir_override)
        if found:
            return result
    result = compute()
    store_cached(config, result, namespace=namespace, cache_dir_override=cache_dir_override)
    return result


#: Environment variable: torch threads while a generator trains
#: (:func:`pategan_audit.implementations.base.training_threads`); default 1.
TRAIN_THREADS_ENV = "PATEGAN_AUDIT_TRAIN_THREADS"


def train_threads() -> int:
    """The torch thread count of training that ``$PATEGAN_AUDIT_TRAIN_THREADS`` asks for (1 when
    unset). More than one thread sums in another order, so a seed gives other samples: the count
    keys other cache entries (:func:`config_hash`) and is recorded (:func:`execution_info`)."""
    raw = os.environ.get(TRAIN_THREADS_ENV, "").strip()
    if not raw:
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"${TRAIN_THREADS_ENV}={raw!r}: use a positive integer (torch threads while training; "
                         "default 1), or unset it")
    return value


def single_thread() -> None:
    """Limit torch and BLAS to one thread in this whole process, for good (a parallel worker
    calls it once; :func:`job_threads` is the scoped form the calling process uses)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    try:
        import torch

        torch.set_num_threads(1)
    except Exception:  # pragma: no cover - torch is a hard dependency
        pass
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except Exception:
        pass


@contextlib.contextmanager
def job_threads() -> Iterator[None]:
    """One torch thread and one BLAS/OpenMP thread while the block runs, restored after: the
    configuration of every job, so that a job run in the calling process (``n_jobs=1``, the
    threading backend) computes what a pool worker computes (multi-threaded BLAS sums in another
    order: a scikit-learn logistic regression's AUROC moved in the 6th digit)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits

        limits = threadpool_limits(1)
    except Exception:  # pragma: no cover - threadpoolctl ships with scikit-learn
        limits = contextlib.nullcontext()
    try:
        with limits:
            yield
    finally:
        torch.set_num_threads(before)


#: The parent that this process's watchdog watches (None: no watchdog; a pool worker starts one
#: with its first job).
_WATCHED_PARENT: int | None = None
_WATCH_SECONDS = 0.5


def _exit_with_parent() -> None:
    """In a loky worker: exit as soon as the process that started it is gone.

    A worker busy in a long job does not notice that its parent (a notebook kernel, the archive
    CLI) was killed; it ran on for minutes at ~1 GB. The watchdog is a daemon thread that polls
    the parent id: when the parent dies the worker is re-parented, and it exits at once."""
    global _WATCHED_PARENT
    parent = os.getppid()
    if _WATCHED_PARENT == parent:
        return
    _WATCHED_PARENT = parent

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_SECONDS)
        os._exit(1)  # the parent is gone: nobody will read this worker's results

    threading.Thread(target=watch, name="pategan-audit-parent-watchdog", daemon=True).start()


def _call_single_threaded(fn: Callable, item: Any) -> Any:
    single_thread()
    return fn(item)


def resolve_jobs(n_jobs: int | None) -> int:
    """The worker count :func:`parallel_map` uses: ``n_jobs``, else ``$PATEGAN_AUDIT_JOBS``,
    else the number of CPUs."""
    if n_jobs is None:
        return int(os.environ.get("PATEGAN_AUDIT_JOBS", os.cpu_count() or 1))
    return int(n_jobs)


BACKENDS = (None, "loky", "threading", "dask", "sequential")


@dataclass(frozen=True)
class RunOptions:
    """How a computation runs, never what it computes: one frozen value carried from a notebook
    through every level of an experiment (in the manner of dp_accounting's frozen ``DpEvent``
    objects). Nothing here enters a cache key.

    n_jobs: worker count (None: ``$PATEGAN_AUDIT_JOBS`` or the number of CPUs; 1: in-process).
    backend: None/"loky" (local processes), "threading", "sequential" or "dask".
    scheduler: address of a Dask scheduler (``backend="dask"`` only; e.g. "tcp://host:8786");
        None with ``backend="dask"`` uses the ``distributed.Client`` of the calling process.
    cache_dir: result-cache folder (None: :func:`cache_dir`'s default).
    progress: False (no bars), True (bars labelled by the computation) or a label.
    """

    n_jobs: int | None = None
    backend: str | None = None
    scheduler: str | None = None
    cache_dir: str | None = None
    progress: bool | str = False

    #: The keyword arguments the experiment functions took before RunOptions (still accepted):
    #: each maps onto one field, ``desc`` onto ``progress`` (a label, or None for no bar).
    LEGACY: ClassVar[tuple[str, ...]] = ("n_jobs", "backend", "scheduler", "cache_dir", "desc", "progress")

    def __post_init__(self) -> None:
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, (int, np.integer))
                                        or self.n_jobs == 0):
            raise ValueError(f"n_jobs must be None or a non-zero integer, got {self.n_jobs!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; use one of {BACKENDS}")
        if self.scheduler is not None and self.backend != "dask":
            raise ValueError(f"scheduler={self.scheduler!r} needs backend='dask', got backend={self.backend!r}")
        if self.cache_dir is not None:
            object.__setattr__(self, "cache_dir", str(self.cache_dir))
        if not isinstance(self.progress, (bool, str)):
            raise ValueError(f"progress must be a bool or a label, got {self.progress!r}")

    @classmethod
    def of(cls, options: RunOptions | None = None, *, default: RunOptions | None = None, **legacy: Any) -> RunOptions:
        """``options`` (else ``default``, else ``RunOptions()``) with the old keyword arguments
        (:attr:`LEGACY`) folded in; any other keyword is a TypeError naming the valid ones."""
        unknown = sorted(set(legacy) - set(cls.LEGACY))
        if unknown:
            raise TypeError(f"unexpected keyword argument(s) {unknown}; execution options are {list(cls.LEGACY)} "
                            "or options=RunOptions(...)")
        base = options if options is not None else (default if default is not None else cls())
        if not isinstance(base, RunOptions):
            raise TypeError(f"options must be a RunOptions, got {type(base).__name__}")
        changes = {k: v for k, v in legacy.items() if k != "desc"}
        if "desc" in legacy:
            changes["progress"] = legacy["desc"] or False
        return replace(base, **changes) if changes else base

    def label(self, default: str | None) -> str | None:
        """The progress-bar label: this value's own label, ``default`` when progress is True,
        None (no bar) when it is False."""
        if isinstance(self.progress, str):
            return self.progress
        return default if self.progress else None


def run_map(fn: Callable[[Any], T], items: Iterable[Any], options: RunOptions, *, label: str | None = None,
            n_jobs: int | None = None) -> list[T]:
    """:func:`parallel_map` run as ``options`` say (``label``: the bar's label when progress is
    True; ``n_jobs``: a tighter worker count than ``options.n_jobs``, e.g. no more than the jobs)."""
    return parallel_map(fn, items, n_jobs=options.n_jobs if n_jobs is None else n_jobs, backend=options.backend,
                        scheduler=options.scheduler, desc=options.label(label))


def run_imap(fn: Callable[[Any], T], items: Iterable[Any], options: RunOptions, *, label: str | None = None,
             n_jobs: int | None = None) -> Iterator[tuple[int, T]]:
    """:func:`parallel_imap` run as ``options`` say (as :func:`run_map`): ``(i, result)`` as each
    job finishes."""
    return parallel_imap(fn, items, n_jobs=options.n_jobs if n_jobs is None else n_jobs, backend=options.backend,
                         scheduler=options.scheduler, desc=options.label(label))


def parallel_map(
    fn: Callable[[Any], T],
    items: Iterable[Any],
    *,
    n_jobs: int | None = None,
    backend: str | None = None,
    desc: str | None = None,
    scheduler: str | None = None,
) -> list[T]:
    """``[fn(x) for x in items]``, in parallel, in order, with a tqdm progress bar.

    ``n_jobs``: worker count (default: ``$PATEGAN_AUDIT_JOBS`` or the number of CPUs);
    ``n_jobs=1`` runs in-process (no pickling), which is what tests and debuggers want.
    ``backend``: ``None``/``"loky"`` for local processes, ``"dask"`` for a Dask cluster
    (a ``distributed.Client`` must exist in the calling process, or give ``scheduler``: the
    address of a Dask scheduler, connected to for this call; every job is a task on a
    worker), ``"threading"``, ``"sequential"`` (in-process).
    Every job runs with one torch and one BLAS thread, whichever path runs it.
    ``fn`` must be picklable (a module-level function) for process backends.
    """
    return [res for _, res in parallel_imap(fn, items, n_jobs=n_jobs, backend=backend, desc=desc,
                                            scheduler=scheduler, ordered=True)]


def _indexed(fn: Callable, index: int, item: Any, caller: int | None = None) -> tuple[int, Any]:
    """One job of a process pool (loky) or a Dask worker: ``(index, fn(item))`` with one torch/BLAS
    thread. ``caller``: the pid of the process that started a loky pool; a worker watches it
    (:func:`_exit_with_parent`), and a job joblib runs in the calling process itself gets the
    scoped :func:`job_threads`, not the process-wide :func:`single_thread`."""
    if caller is not None:
        if os.getpid() == caller:
            with job_threads():
                return index, fn(item)
        _exit_with_parent()
    return index, _call_single_threaded(fn, item)


def _pair(fn: Callable, index: int, item: Any) -> tuple[int, Any]:
    return index, fn(item)


def _check_backend(backend: str | None, scheduler: str | None) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; use one of {BACKENDS}")
    if scheduler is not None and backend != "dask":
        raise ValueError(f"scheduler={scheduler!r} needs backend='dask', got backend={backend!r}")


def _in_process(backend: str | None, n_jobs: int) -> bool:
    return backend == "sequential" or (n_jobs == 1 and backend in (None, "loky"))


def _dask_client(scheduler: str | None) -> tuple[Any, bool]:
    """``(client, owned)``: a client connected to ``scheduler`` for this call (owned: the caller
    closes it), else the ``distributed.Client`` already made in this process."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - the dask extra is optional
        raise ImportError("backend='dask' needs the dask extra: pip install 'pategan-audit[dask]'") from exc
    if scheduler is not None:
        try:
            return distributed.Client(scheduler, timeout=30), True
        except OSError as exc:
            raise OSError(f"cannot reach the Dask scheduler at {scheduler!r}: start one (`dask scheduler`) "
                          "or fix the address (e.g. tcp://host:8786)") from exc
    try:
        return distributed.get_client(), False
    except ValueError as exc:
        raise ValueError("backend='dask' needs a Dask cluster: give scheduler='tcp://host:8786' (RunOptions(scheduler=...), "
                         "the notebooks' dask_scheduler parameter) or create a distributed.Client in this process") from exc


def _dask_threads(client: Any, *, wait_seconds: float = 30.0) -> dict[str, int]:
    """``{worker address: threads}`` of the client's cluster; an error naming the fix when it has
    no worker after ``wait_seconds``."""
    try:
        client.wait_for_workers(1, timeout=wait_seconds)
    except TimeoutError as exc:
        address = client.scheduler.address
        raise RuntimeError(f"the Dask scheduler at {address} has no workers (waited {wait_seconds:.0f} s); "
                           f"start some with `dask worker {address} --nthreads 1`") from exc
    return {str(k): int(v) for k, v in client.nthreads().items()}


def _dask_imap(fn: Callable, items: list, *, scheduler: str | None, ordered: bool, bar: Any) -> Iterator[tuple[int, Any]]:
    """The Dask backend: one task per item, submitted to the cluster's workers (never run in this
    process), results yielded as :func:`parallel_imap` says; abandoned tasks are cancelled."""
    import distributed

    client, owned = _dask_client(scheduler)
    futures: list = []
    try:
        nthreads = _dask_threads(client)
        if sum(nthreads.values()) == 1 and len(items) > 1:
            warnings.warn(f"the Dask cluster at {client.scheduler.address} offers one thread ({len(nthreads)} worker): "
                          f"the {len(items)} jobs run on that worker one at a time, not in this process; start more "
                          f"workers (`dask worker {client.scheduler.address} --nthreads 1`) to run them in parallel",
                          RuntimeWarning, stacklevel=4)
        futures = [client.submit(_indexed, fn, i, x, pure=False) for i, x in enumerate(items)]
        done = iter(futures) if ordered else distributed.as_completed(futures)
        for future in done:
            i, res = future.result()
            bar.update(1)
            yield i, res
    finally:
        if futures:
            client.cancel(futures)
        if owned:
            client.close()


def parallel_imap(
    fn: Callable[[Any], T],
    items: Iterable[Any],
    *,
    n_jobs: int | None = None,
    backend: str | None = None,
    desc: str | None = None,
    scheduler: str | None = None,
    ordered: bool = False,
) -> Iterator[tuple[int, T]]:
    """``(i, fn(items[i]))`` for every item, yielded as each job finishes (``ordered``: in the
    items' order), so that a caller can save each result while the other workers go on.
    Workers, backends and the bar as :func:`parallel_map`; with ``n_jobs=1`` (or
    ``backend="sequential"``) the items run in-process, in order, under :func:`job_threads`.
    ``backend="dask"`` submits one task per item to the cluster (``n_jobs`` is then the
    cluster's business: all its threads are used), with a warning when it offers one thread."""
    from tqdm import tqdm  # plain text bars: no widget dependency in notebooks

    _check_backend(backend, scheduler)
    items = list(items)
    n_jobs = resolve_jobs(n_jobs)
    if backend != "dask" and _in_process(backend, n_jobs):
        for i, x in enumerate(tqdm(items, desc=desc, disable=not desc)):
            with job_threads():  # the pool workers' configuration, restored between items
                res = fn(x)
            yield i, res
        return
    bar = tqdm(total=len(items), desc=desc, disable=not desc)
    try:
        if backend == "dask":
            yield from _dask_imap(fn, items, scheduler=scheduler, ordered=ordered, bar=bar)
            return
        import joblib

        if backend == "threading":  # one process: its thread settings are set once, for the whole map
            ctx, scope = joblib.parallel_backend("threading"), job_threads()
            jobs = (joblib.delayed(_pair)(fn, i, x) for i, x in enumerate(items))
        else:
            ctx, scope = joblib.parallel_backend("loky", inner_max_num_threads=1), contextlib.nullcontext()
            jobs = (joblib.delayed(_indexed)(fn, i, x, os.getpid()) for i, x in enumerate(items))
        with scope, ctx:
            par = joblib.Parallel(n_jobs=n_jobs, return_as="generator" if ordered else "generator_unordered")
            for i, res in par(jobs):
                bar.update(1)
                yield i, res
    finally:
        bar.close()


def execution_info(backend: str | None = None, n_jobs: int | None = None, scheduler: str | None = None) -> dict[str, Any]:
    """Where :func:`parallel_map` runs with these options, as plain values for an archive's
    meta: ``backend`` ("in-process", "loky", "threading" or "dask"), ``n_jobs`` (resolved),
    ``scheduler`` (the Dask scheduler's address, else None), ``workers`` and ``threads`` (jobs
    at once), ``job_threads`` (torch/BLAS threads of each job) and ``train_threads``
    (``$PATEGAN_AUDIT_TRAIN_THREADS``). For Dask it connects to the cluster and counts them."""
    _check_backend(backend, scheduler)
    jobs = resolve_jobs(n_jobs)
    info: dict[str, Any] = {"backend": backend or "loky", "n_jobs": jobs, "scheduler": None, "workers": 1, "threads": 1,
                            "job_threads": 1, "train_threads": train_threads()}
    if backend == "dask":
        client, owned = _dask_client(scheduler)
        try:
            nthreads = _dask_threads(client)
            info.update(scheduler=str(client.scheduler.address), workers=len(nthreads), threads=sum(nthreads.values()))
        finally:
            if owned:
                client.close()
    elif _in_process(backend, jobs):
        info["backend"] = "in-process"
    else:
        import joblib

        effective = joblib.effective_n_jobs(jobs)  # -1: all CPUs
        info.update(workers=1 if backend == "threading" else effective, threads=effective)
    return info
