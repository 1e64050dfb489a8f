"""Content-addressed result cache and parallel map.

Every expensive result of the book (a trained-and-evaluated utility cell, a batch of
shadow models, a training trace) is computed through :func:`cached`. The key is a hash of
``(namespace, config, package source hash)``, so

* an interrupted run resumes: finished cells are read back, the rest recomputed;
* a change anywhere in ``src/pategan_audit`` invalidates stale entries;
* results are written atomically (temporary file in the same directory, then
  :func:`os.replace`), so a crash never leaves a truncated entry behind.

:func:`parallel_map` runs independent jobs with joblib (loky processes, one torch/BLAS
thread per worker) and, with ``backend="dask"``, on a Dask cluster through joblib's Dask
backend (``joblib.parallel_backend("dask")``): the same code path scales from a laptop to a
cluster. :class:`RunOptions` carries how a computation runs (workers, backend, Dask scheduler,
cache folder, progress) as one frozen value from a notebook down to :func:`run_map`.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
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
                 "auditing/page", "traces/page"}


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
    flushed (``$PATEGAN_AUDIT_FLUSH_DENORMAL``) gives other numbers, so it keys other entries,
    like the source. ``include_source=False`` names the configuration itself (a cell's or an
    audit setting's id in records and archives): neither the source nor the arithmetic is part of
    it, so a flushed session finds, resumes and extends an archive the IEEE sessions began."""
    from .implementations.base import flush_denormal_requested

    payload = {"namespace": namespace, "config": _jsonable(config)}
    if include_source:
        payload["source"] = source_hash()
        if flush_denormal_requested():  # absent by default: the IEEE entries keep their keys
            payload["flush_denormal"] = True
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


def single_thread() -> None:
    """Limit torch and BLAS to one thread in this process (call in every parallel worker)."""
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
    address of a Dask scheduler, connected to for this call), ``"threading"``.
    ``fn`` must be picklable (a module-level function) for process backends.
    """
    return [res for _, res in parallel_imap(fn, items, n_jobs=n_jobs, backend=backend, desc=desc,
                                            scheduler=scheduler, ordered=True)]


def _indexed(fn: Callable, index: int, item: Any) -> tuple[int, Any]:
    return index, _call_single_threaded(fn, item)


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
    items' order; the Dask backend always yields in order), so that a caller can save each
    result while the other workers go on. Workers, backends and the bar as :func:`parallel_map`;
    with ``n_jobs=1`` the items run in-process, in order."""
    from tqdm import tqdm  # plain text bars: no widget dependency in notebooks

    items = list(items)
    n_jobs = resolve_jobs(n_jobs)
    if n_jobs == 1 and backend in (None, "loky", "sequential"):
        for i, x in enumerate(tqdm(items, desc=desc, disable=not desc)):
            yield i, fn(x)
        return

    import joblib

    if scheduler is not None and backend != "dask":
        raise ValueError(f"scheduler={scheduler!r} needs backend='dask', got backend={backend!r}")
    client = None
    if backend == "dask":
        try:
            import distributed
        except ImportError as exc:  # pragma: no cover
            raise ImportError("backend='dask' needs the dask extra: pip install 'pategan-audit[dask]'") from exc
        if scheduler is not None:
            client = distributed.Client(scheduler)  # the default client of this call
        ctx = joblib.parallel_backend("dask")
    elif backend in (None, "loky"):
        ctx = joblib.parallel_backend("loky", inner_max_num_threads=1)
    elif backend == "threading":
        ctx = joblib.parallel_backend("threading")
    else:
        raise ValueError(f"unknown backend {backend!r}; use None, 'loky', 'threading' or 'dask'")
    in_order = ordered or backend == "dask"
    bar = tqdm(total=len(items), desc=desc, disable=not desc)
    try:
        with ctx:
            par = joblib.Parallel(n_jobs=n_jobs, return_as="generator" if in_order else "generator_unordered")
            for i, res in par(joblib.delayed(_indexed)(fn, i, x) for i, x in enumerate(items)):
                bar.update(1)
                yield i, res
    finally:
        bar.close()
        if client is not None:
            client.close()
