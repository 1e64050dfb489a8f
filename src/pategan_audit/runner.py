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
torch and one BLAS thread, :func:`job_threads`; training under ``RunOptions.train_threads``,
which keys other cache entries when it is not 1), so the worker count never changes a number.
A loky worker exits when the process that started it dies (a killed notebook kernel leaves no
worker behind). :func:`execution_info` says where a map runs, for the archives' meta.
:class:`RunOptions` carries how a computation runs (workers, backend, Dask scheduler, device,
training threads, denormal flushing, solver batch, snapshots, cache folder, progress) as one
frozen value from an entry point (a notebook's parameters, the archive CLI, a benchmark:
:meth:`RunOptions.from_env` is the one reader of the ``PATEGAN_AUDIT_*`` run variables) down to
every job: :func:`run_map` pickles it with each job, and the job runs under it (:func:`using`).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
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
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, Callable, ClassVar, Iterable, Iterator, TypeVar

import numpy as np

T = TypeVar("T")

__all__ = [
    "REPO_ROOT",
    "NOT_COMPUTING",
    "computes_nothing",
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
    "current_options",
    "activate",
    "using",
    "with_options",
    "run_map",
    "run_imap",
    "resolve_jobs",
    "single_thread",
    "job_threads",
    "train_threads",
    "execution_info",
]

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent.parent


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """Where cached results live: ``override``, else the ``cache_dir`` of the options in force
    (:func:`current_options`), else ``<repo>/results/cache``."""
    if override is not None:
        return Path(override)
    given = current_options().cache_dir
    return Path(given) if given else REPO_ROOT / "results" / "cache"


#: The one rule of which modules compute no result (package-relative paths; a folder covers everything
#: under it): the presentation package ``pages`` (pages, plotting, scorecard, tolerances, diagnoses,
#: report, parameters, display, the Sphinx hook), the paper's printed numbers (``reference``) and the
#: archives' bookkeeping (``archive.py``, ``provenance.py``, the store ``archive_store.py`` and each
#: domain's ``archives.py``: which cells run, recorded in each archive's meta). :func:`source_hash`
#: skips them, so that editing a caption does not invalidate hours of cached training, and an archive's closure
#: (:mod:`pategan_audit.provenance`) never enters them, so that a caption says "unchanged" after a
#: page edit. ``FORMER_PRESENTATION``: where presentation lived in earlier commits, which
#: provenance reads from git to compare an archive with the code that computed it; no module of
#: this tree may sit there (``tests/test_layers.py``).
PRESENTATION = ("pages",)
FORMER_PRESENTATION = ("utility/page", "auditing/page", "traces/page", "plotting", "scorecard.py", "diagnoses.py",
                       "tolerances.py", "display.py", "params.py", "report.py", "bookhook.py")
NOT_COMPUTING = PRESENTATION + FORMER_PRESENTATION + ("reference", "archive.py", "provenance.py", "archive_store.py",
                                                     "utility/archives.py", "auditing/archives.py", "traces/archives.py")


def computes_nothing(relative: str | PurePath) -> bool:
    """Whether the module at ``relative`` (a path relative to the package, e.g.
    ``"pages/scorecard.py"``) is one of :data:`NOT_COMPUTING`."""
    parts = PurePosixPath(relative).parts
    return any(parts[: len(PurePosixPath(p).parts)] == PurePosixPath(p).parts for p in NOT_COMPUTING)


def source_hash() -> str:
    """SHA-256 over the package's computing ``.py`` files (path and content; presentation modules
    excluded), truncated to 16 hex digits.

    ``RunOptions.source_hash`` (``$PATEGAN_AUDIT_SOURCE_HASH`` at an entry point) pins it (e.g.
    to reuse committed results after an edit that provably does not change them; the book says
    when this is done).
    """
    return current_options().source_hash or _package_hash()


@lru_cache(maxsize=1)
def _package_hash() -> str:
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if computes_nothing(path.relative_to(PACKAGE_DIR).as_posix()):
            continue  # figures, pages and reference numbers do not change computed results
        h.update(str(path.relative_to(PACKAGE_DIR)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


source_hash.cache_clear = _package_hash.cache_clear  # type: ignore[attr-defined]  # recompute after an edit


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
    flushed (``RunOptions.flush_denormal``) or with more than one torch thread
    (``RunOptions.train_threads``) gives other numbers, and the full Credit file
    (``RunOptions.credit_csv``) other data, so each keys other entries, like the source (the
    defaults add nothing: their keys are unchanged). ``include_source=False`` names
    the configuration itself (a cell's or an audit setting's id in records and archives): neither
    the source nor the arithmetic is part of it, so a flushed run finds, resumes and extends an
    archive that IEEE runs began."""
    payload = {"namespace": namespace, "config": _jsonable(config)}
    if include_source:
        options = current_options()
        payload["source"] = source_hash()
        if options.flush_denormal:  # absent by default: the IEEE entries keep their keys
            payload["flush_denormal"] = True
        threads = options.train_threads
        if threads != 1:  # absent by default: the one-thread entries keep their keys
            payload["train_threads"] = threads
        if options.credit_csv:  # other data: absent by default, the bundled split's entries keep their keys
            payload["credit_csv"] = str(Path(options.credit_csv).resolve())
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


def train_threads() -> int:
    """The torch thread count of training in the options in force (``RunOptions.train_threads``,
    default 1). More than one thread sums in another order, so a seed gives other samples: the
    count keys other cache entries (:func:`config_hash`) and is recorded (:func:`execution_info`)."""
    return current_options().train_threads


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
    """The worker count :func:`parallel_map` uses: ``n_jobs``, else the number of CPUs
    (``$PATEGAN_AUDIT_JOBS`` reaches it through :meth:`RunOptions.from_env`)."""
    if n_jobs is None:
        return os.cpu_count() or 1
    return int(n_jobs)


BACKENDS = (None, "loky", "threading", "dask", "sequential")

#: The environment variables of the run options, read once by :meth:`RunOptions.from_env` at an
#: entry point (a notebook's parameters cell, the archive CLI, a benchmark) and nowhere below.
ENV = {
    "n_jobs": "PATEGAN_AUDIT_JOBS",
    "cache_dir": "PATEGAN_AUDIT_CACHE",
    "device": "PATEGAN_AUDIT_DEVICE",
    "train_threads": "PATEGAN_AUDIT_TRAIN_THREADS",
    "flush_denormal": "PATEGAN_AUDIT_FLUSH_DENORMAL",
    "solver_replicas": "PATEGAN_AUDIT_SOLVER_REPLICAS",
    "snapshots": "PATEGAN_AUDIT_SNAPSHOTS",
    "checkpoint_seconds": "PATEGAN_AUDIT_CHECKPOINT_SECONDS",
    "source_hash": "PATEGAN_AUDIT_SOURCE_HASH",
    "data_dir": "PATEGAN_AUDIT_DATA",
    "archive_dir": "PATEGAN_AUDIT_ARCHIVE",
    "credit_csv": "PATEGAN_AUDIT_CREDIT_CSV",
}


def _positive_int(raw: str, name: str, what: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"${name}={raw!r}: use a positive integer ({what}), or unset it")
    return value


def _env_value(field: str, raw: str) -> Any:
    """The value of run option ``field`` that environment string ``raw`` gives, or the error of the
    variable's parser naming the variable and the fix."""
    name = ENV[field]
    if field == "n_jobs":
        return _positive_int(raw, name, "parallel workers; default: all CPUs")
    if field == "train_threads":
        return _positive_int(raw, name, "torch threads while training; default 1")
    if field == "solver_replicas":
        return _positive_int(raw, name, "replicas per batch of the logistic-regression solver")
    if field == "flush_denormal":
        low = raw.lower()
        if low in ("0", "false", "no"):
            return False
        if low in ("1", "true", "yes"):
            return True
        raise ValueError(f"${name}={raw!r}: use 1 (flush denormal floats to zero while training) or 0 (default)")
    if field == "checkpoint_seconds":
        try:
            value = float(raw)
        except ValueError as err:
            raise ValueError(f"${name}={raw!r} is not a number of seconds; use e.g. 600, or unset it") from err
        if not value >= 0:
            raise ValueError(f"${name}={raw!r} must be >= 0 seconds")
        return value
    if field == "device":
        _check_device(raw, f"${name}")
    return raw


def _check_device(device: Any, source: str) -> Any:
    """``device`` as a ``torch.device``, or a clear error naming ``source`` when it is no torch
    device name (whether this machine has it is checked where a fit uses it:
    :func:`pategan_audit.implementations.many.resolve_device`)."""
    import torch

    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"{source}={device!r} is not a torch device; use e.g. 'cpu' or 'cuda'") from err


@dataclass(frozen=True)
class RunOptions:
    """How a computation runs, never what it computes: one frozen value read at an entry point
    (:meth:`from_env`) and carried through every level of an experiment into every job (in the
    manner of dp_accounting's frozen ``DpEvent`` objects). The arithmetic settings (``device``,
    ``train_threads``, ``flush_denormal``) change numbers at the level of rounding: threads and
    flushing key other cache entries when not at their defaults (:func:`config_hash`); nothing
    else here enters a cache key.

    n_jobs: worker count (None: the number of CPUs; 1: in-process).
    backend: None/"loky" (local processes), "threading", "sequential" or "dask".
    scheduler: address of a Dask scheduler (``backend="dask"`` only; e.g. "tcp://host:8786");
        None with ``backend="dask"`` uses the ``distributed.Client`` of the calling process.
    cache_dir: result-cache folder (None: ``<repo>/results/cache``).
    progress: False (no bars), True (bars labelled by the computation) or a label.
    device: torch device of batched fits (``fit_many``; None: the CPU).
    train_threads: torch threads while a generator trains (default 1).
    flush_denormal: train with denormal floats flushed to zero (a CPU speed setting; default off).
    solver_replicas: replicas per batch of the logistic-regression teachers' exact solver
        (None: :func:`pategan_audit.replicas.stack.solver_replicas`'s rule).
    snapshots: folder for the snapshots of preset cells' fits, one sub-folder per cell (None:
        beside the cell's cache entry).
    checkpoint_seconds: seconds between snapshots of a batched fit (0: after every iteration).
    source_hash: pins :func:`source_hash` (None: computed from the package source).
    data_dir: folder of the bundled datasets (None: ``<repo>/data``; the files are checked
        against their SHA-256 wherever they are).
    archive_dir: folder of the archives that the book reads and the archive command writes
        (None: ``<repo>/results/archive``).
    credit_csv: Kaggle's full ``creditcard.csv`` for the Credit dataset (None: the bundled 20 %
        split). It changes the data, so when set it keys other cache entries (:func:`config_hash`).
    """

    n_jobs: int | None = None
    backend: str | None = None
    scheduler: str | None = None
    cache_dir: str | None = None
    progress: bool | str = False
    device: str | None = None
    train_threads: int = 1
    flush_denormal: bool = False
    solver_replicas: int | None = None
    snapshots: str | None = None
    checkpoint_seconds: float = 600.0
    source_hash: str | None = None
    data_dir: str | None = None
    archive_dir: str | None = None
    credit_csv: str | None = None

    #: The fields that say how one map runs; a function given no options takes the rest (the
    #: arithmetic, the folders) from the options in force (:meth:`defaulted`).
    MAP_FIELDS: ClassVar[tuple[str, ...]] = ("n_jobs", "backend", "scheduler", "progress")

    def __post_init__(self) -> None:
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, (int, np.integer))
                                        or self.n_jobs == 0):
            raise ValueError(f"n_jobs must be None or a non-zero integer, got {self.n_jobs!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; use one of {BACKENDS}")
        if self.scheduler is not None and self.backend != "dask":
            raise ValueError(f"scheduler={self.scheduler!r} needs backend='dask', got backend={self.backend!r}")
        for name in ("cache_dir", "snapshots", "data_dir", "archive_dir", "credit_csv"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, str(getattr(self, name)))
        if not isinstance(self.progress, (bool, str)):
            raise ValueError(f"progress must be a bool or a label, got {self.progress!r}")
        if self.device is not None:
            object.__setattr__(self, "device", str(self.device))
            _check_device(self.device, "device")
        for name in ("train_threads", "solver_replicas"):
            value = getattr(self, name)
            if value is None and name == "solver_replicas":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.flush_denormal, (bool, np.bool_)):
            raise ValueError(f"flush_denormal must be True or False, got {self.flush_denormal!r}")
        if isinstance(self.checkpoint_seconds, bool) or not isinstance(self.checkpoint_seconds, (int, float)) \
                or not self.checkpoint_seconds >= 0:
            raise ValueError(f"checkpoint_seconds must be a number of seconds >= 0, got {self.checkpoint_seconds!r}")

    @classmethod
    def from_env(cls, environ: Any = None, **given: Any) -> RunOptions:
        """The run options of an entry point: each ``PATEGAN_AUDIT_*`` run variable (:data:`ENV`)
        read once and checked (a malformed value is an error naming the variable and the fix,
        before any work), then the ``given`` keywords that are not None on top (a notebook's
        parameters, the archive CLI's flags). ``environ``: the mapping to read (default
        ``os.environ``)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for field, name in ENV.items():
            raw = str(environ.get(name, "")).strip()
            if raw:
                values[field] = _env_value(field, raw)
        values.update({k: v for k, v in given.items() if v is not None})
        return cls(**values)

    @classmethod
    def defaulted(cls, options: RunOptions | None, **map_defaults: Any) -> RunOptions:
        """``options`` itself; when None, the options in force (:func:`current_options`) with the
        map fields (:attr:`MAP_FIELDS`) at their defaults updated by ``map_defaults`` (a nested
        computation does not inherit its caller's worker count). An explicit ``options`` is
        complete: no field of it (the cache folder included) comes from the options in force; to
        change one field of those, pass ``RunOptions.defaulted(None, n_jobs=1)`` or
        ``dataclasses.replace(current_options(), ...)``."""
        if options is not None:
            return _checked(options)
        base = {name: getattr(cls, name) for name in cls.MAP_FIELDS}  # the class defaults
        return replace(current_options(), **{**base, **map_defaults})

    def label(self, default: str | None) -> str | None:
        """The progress-bar label: this value's own label, ``default`` when progress is True,
        None (no bar) when it is False."""
        if isinstance(self.progress, str):
            return self.progress
        return default if self.progress else None


def _checked(options: Any) -> RunOptions:
    if not isinstance(options, RunOptions):
        raise TypeError(f"options must be a RunOptions, got {type(options).__name__}")
    return options


_CURRENT: contextvars.ContextVar[RunOptions | None] = contextvars.ContextVar("pategan_audit_run_options", default=None)
_PROCESS: list[RunOptions] = [RunOptions()]  # what an entry point activated for its whole process


def current_options() -> RunOptions:
    """The run options in force: those of the innermost :func:`using` block (every job runs in
    one, with the options it was sent with), else those an entry point activated for its process
    (:func:`activate`), else ``RunOptions()``. Never the environment."""
    options = _CURRENT.get()
    return options if options is not None else _PROCESS[0]


def activate(options: RunOptions) -> RunOptions:
    """Make ``options`` the run options of this whole process (outside any :func:`using` block)
    and return them: what an entry point does once with :meth:`RunOptions.from_env` (a notebook's
    parameters, the archive CLI, a benchmark), so that the functions below it, given no options,
    run under them."""
    _PROCESS[0] = _checked(options)
    return options


@contextlib.contextmanager
def using(options: RunOptions) -> Iterator[RunOptions]:
    """Run the block under ``options`` (restored after): what training, the cache and the
    snapshots read below the entry points (threads, denormal flushing, device, folders)."""
    token = _CURRENT.set(_checked(options))
    try:
        yield options
    finally:
        _CURRENT.reset(token)


def with_options(**map_defaults: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator of an experiment function with a keyword ``options``: it gets
    :meth:`RunOptions.defaulted` (``map_defaults`` when the caller gave none) and runs under it
    (:func:`using`), so that its cache keys and its jobs follow the same options."""
    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def run(*args: Any, options: RunOptions | None = None, **kwargs: Any) -> T:
            resolved = RunOptions.defaulted(options, **map_defaults)
            with using(resolved):
                return fn(*args, options=resolved, **kwargs)
        return run
    return wrap


def run_map(fn: Callable[[Any], T], items: Iterable[Any], options: RunOptions, *, label: str | None = None,
            n_jobs: int | None = None) -> list[T]:
    """:func:`parallel_map` run as ``options`` say (``label``: the bar's label when progress is
    True; ``n_jobs``: a tighter worker count than ``options.n_jobs``, e.g. no more than the jobs)."""
    return parallel_map(fn, items, n_jobs=options.n_jobs if n_jobs is None else n_jobs, backend=options.backend,
                        scheduler=options.scheduler, desc=options.label(label), options=options)


def run_imap(fn: Callable[[Any], T], items: Iterable[Any], options: RunOptions, *, label: str | None = None,
             n_jobs: int | None = None) -> Iterator[tuple[int, T]]:
    """:func:`parallel_imap` run as ``options`` say (as :func:`run_map`): ``(i, result)`` as each
    job finishes."""
    return parallel_imap(fn, items, n_jobs=options.n_jobs if n_jobs is None else n_jobs, backend=options.backend,
                         scheduler=options.scheduler, desc=options.label(label), options=options)


def parallel_map(
    fn: Callable[[Any], T],
    items: Iterable[Any],
    *,
    n_jobs: int | None = None,
    backend: str | None = None,
    desc: str | None = None,
    scheduler: str | None = None,
    options: RunOptions | None = None,
) -> list[T]:
    """``[fn(x) for x in items]``, in parallel, in order, with a tqdm progress bar.

    ``n_jobs``: worker count (default: the number of CPUs);
    ``n_jobs=1`` runs in-process (no pickling), which is what tests and debuggers want.
    ``backend``: ``None``/``"loky"`` for local processes, ``"dask"`` for a Dask cluster
    (a ``distributed.Client`` must exist in the calling process, or give ``scheduler``: the
    address of a Dask scheduler, connected to for this call; every job is a task on a
    worker), ``"threading"``, ``"sequential"`` (in-process).
    Every job runs with one torch and one BLAS thread, whichever path runs it.
    ``fn`` must be picklable (a module-level function) for process backends.
    ``options``: the run options every job runs under (:func:`using`; pickled with each job to
    the workers); None: the options in force here (:func:`current_options`).
    """
    return [res for _, res in parallel_imap(fn, items, n_jobs=n_jobs, backend=backend, desc=desc,
                                            scheduler=scheduler, ordered=True, options=options)]


def _ignored_warnings() -> tuple[tuple[str, type[Warning], str], ...]:
    """The ``ignore`` filters in force in this process, as (message pattern, category, module
    pattern): what a job sent to another process takes with it (:func:`_indexed`), so that a
    warning its caller silenced (a page's expected notices) stays silent in the workers too."""
    out = []
    for action, message, category, module, lineno in warnings.filters:
        if action == "ignore" and not lineno and isinstance(category, type) and issubclass(category, Warning):
            out.append((getattr(message, "pattern", message) or "", category, getattr(module, "pattern", module) or ""))
    return tuple(out)


def _indexed(fn: Callable, index: int, item: Any, caller: int | None, options: RunOptions,
             ignored: tuple[tuple[str, type[Warning], str], ...]) -> tuple[int, Any]:
    """One job of a process pool (loky) or a Dask worker: ``(index, fn(item))`` with one torch/BLAS
    thread, under ``options`` (the job's run options, pickled with it) and the caller's ``ignore``
    warning filters (:func:`_ignored_warnings`). ``caller``: the pid of the process that started a
    loky pool (None on Dask); a worker watches it (:func:`_exit_with_parent`), and a job joblib runs
    in the calling process itself gets the scoped :func:`job_threads`, not the process-wide
    :func:`single_thread`."""
    with warnings.catch_warnings(), using(options):
        for message, category, module in reversed(ignored):  # filterwarnings prepends: keep the caller's order
            warnings.filterwarnings("ignore", message, category, module)
        if caller is not None:
            if os.getpid() == caller:
                with job_threads():
                    return index, fn(item)
            _exit_with_parent()
        return index, _call_single_threaded(fn, item)


def _pair(fn: Callable, index: int, item: Any, options: RunOptions) -> tuple[int, Any]:
    """One job of the threading backend: ``(index, fn(item))`` under ``options``."""
    with using(options):
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


def _dask_imap(fn: Callable, items: list, *, scheduler: str | None, ordered: bool, bar: Any,
               options: RunOptions) -> Iterator[tuple[int, Any]]:
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
        ignored = _ignored_warnings()
        futures = [client.submit(_indexed, fn, i, x, None, options, ignored, pure=False) for i, x in enumerate(items)]
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
    options: RunOptions | None = None,
) -> Iterator[tuple[int, T]]:
    """``(i, fn(items[i]))`` for every item, yielded as each job finishes (``ordered``: in the
    items' order), so that a caller can save each result while the other workers go on.
    Workers, backends and the bar as :func:`parallel_map`; with ``n_jobs=1`` (or
    ``backend="sequential"``) the items run in-process, in order, under :func:`job_threads`.
    ``backend="dask"`` submits one task per item to the cluster (``n_jobs`` is then the
    cluster's business: all its threads are used), with a warning when it offers one thread.
    Every job runs under ``options`` (None: the options in force here), wherever it runs."""
    from tqdm import tqdm  # plain text bars: no widget dependency in notebooks

    _check_backend(backend, scheduler)
    options = current_options() if options is None else _checked(options)
    items = list(items)
    n_jobs = resolve_jobs(n_jobs)
    if backend != "dask" and _in_process(backend, n_jobs):
        for i, x in enumerate(tqdm(items, desc=desc, disable=not desc)):
            with using(options), job_threads():  # the pool workers' configuration, restored between items
                res = fn(x)
            yield i, res
        return
    bar = tqdm(total=len(items), desc=desc, disable=not desc)
    try:
        if backend == "dask":
            yield from _dask_imap(fn, items, scheduler=scheduler, ordered=ordered, bar=bar, options=options)
            return
        import joblib

        if backend == "threading":  # one process: its thread settings are set once, for the whole map
            ctx, scope = joblib.parallel_backend("threading"), job_threads()
            jobs = (joblib.delayed(_pair)(fn, i, x, options) for i, x in enumerate(items))
        else:
            ctx, scope = joblib.parallel_backend("loky", inner_max_num_threads=1), contextlib.nullcontext()
            ignored = _ignored_warnings()
            jobs = (joblib.delayed(_indexed)(fn, i, x, os.getpid(), options, ignored) for i, x in enumerate(items))
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
    at once), ``job_threads`` (torch/BLAS threads of each job) and ``train_threads`` (of the
    options in force). For Dask it connects to the cluster and counts them."""
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
