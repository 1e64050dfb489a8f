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
cluster.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from dataclasses import asdict, is_dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

T = TypeVar("T")

__all__ = [
    "REPO_ROOT",
    "cache_dir",
    "config_hash",
    "source_hash",
    "cached",
    "cache_path",
    "lookup_cached",
    "store_cached",
    "atomic_write_bytes",
    "atomic_write_text",
    "parallel_map",
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
_PRESENTATION = {"plotting", "report.py", "scorecard.py", "bookhook.py", "reference", "archive.py"}


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
        if path.relative_to(PACKAGE_DIR).parts[0] in _PRESENTATION:
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


def config_hash(config: Any, *, namespace: str = "", include_source: bool = True) -> str:
    """Stable hash of a config (dict or dataclass) for cache keys."""
    payload = {"namespace": namespace, "config": _jsonable(config)}
    if include_source:
        payload["source"] = source_hash()
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


def parallel_map(
    fn: Callable[[Any], T],
    items: Iterable[Any],
    *,
    n_jobs: int | None = None,
    backend: str | None = None,
    desc: str | None = None,
) -> list[T]:
    """``[fn(x) for x in items]``, in parallel, in order, with a tqdm progress bar.

    ``n_jobs``: worker count (default: ``$PATEGAN_AUDIT_JOBS`` or the number of CPUs);
    ``n_jobs=1`` runs in-process (no pickling), which is what tests and debuggers want.
    ``backend``: ``None``/``"loky"`` for local processes, ``"dask"`` for a Dask cluster
    (a ``distributed.Client`` must exist in the calling process), ``"threading"``.
    ``fn`` must be picklable (a module-level function) for process backends.
    """
    from tqdm import tqdm  # plain text bars: no widget dependency in notebooks

    items = list(items)
    n_jobs = resolve_jobs(n_jobs)
    if n_jobs == 1 and backend in (None, "loky", "sequential"):
        return [fn(x) for x in tqdm(items, desc=desc, disable=not desc)]

    import joblib

    bar = tqdm(total=len(items), desc=desc, disable=not desc)
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError as exc:  # pragma: no cover
            raise ImportError("backend='dask' needs the dask extra: pip install 'pategan-audit[dask]'") from exc
        ctx = joblib.parallel_backend("dask")
    elif backend in (None, "loky"):
        ctx = joblib.parallel_backend("loky", inner_max_num_threads=1)
    elif backend == "threading":
        ctx = joblib.parallel_backend("threading")
    else:
        raise ValueError(f"unknown backend {backend!r}; use None, 'loky', 'threading' or 'dask'")
    out: list[T] = []
    with ctx:
        par = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
        for res in par(joblib.delayed(_call_single_threaded)(fn, x) for x in items):
            out.append(res)
            bar.update(1)
    bar.close()
    return out
