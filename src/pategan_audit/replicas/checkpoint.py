"""Resumable batched fits: snapshots of a replica group's whole training state.

A batched fit of the presets that run on :mod:`.loop` (borealis, smartnoise, ``corrected``,
updated, synthcity, gnmax) or on :mod:`.wgan` (original, turing; a single fit too) can run for
hours: synthcity on Epileptic at ε = 50 runs its 2,000 iterations in about 3 hours of one core,
and on Credit a model needs about 14 hours to the 10,000-iteration cap. Inside
:func:`checkpointing`, every replica group (:func:`.loop._run_group`, :func:`.wgan.run_group`)
writes a snapshot of its state between iterations every ``every`` seconds and when it finishes; a later fit of the same group under the same directory (after the
process was stopped) loads the snapshot and goes on from that iteration instead of iteration 0.

A snapshot holds everything a fit reads or writes after the iteration it was taken at: each
replica's own state (networks, optimisers, random streams, accountant, stopping rule, trace
buffers), the replica step (stacked networks, optimisers, data), the active mask, the iteration
counter and the process-wide random states of torch, NumPy and :mod:`random`. Resuming therefore
gives the same numbers as the fit that was never stopped (tested bitwise). The caller's model
objects are kept: the snapshot's references to them are stored by position
(``persistent_id``), and their state is restored in place, so ``fit_many`` returns the same
objects it created. Arrays of 64 KiB or more that training has not changed since the group
started (the data) are not stored: the resumed fit rebuilds the starting state, and the snapshot
refers to them by position, checked by digest.

Snapshots are pickles written atomically (:func:`pategan_audit.runner.atomic_write_bytes`); load
them only from a directory you trust. A snapshot of another fit (other preset, seeds,
configuration or data) is an error that names the directory to delete; one written by another
version of the package source is set aside with a warning (the fit starts again). A pickle
stores two arrays that share memory apart, so a state holding views of one another takes no
snapshots (a warning says so; none of the presets' harness configurations does).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import pickle
import random
import subprocess
import time
import warnings
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from .. import runner
from ..implementations.base import flush_denormal_requested

__all__ = ["Checkpointing", "GroupSlot", "checkpointing", "current", "default_every"]

_ACTIVE: ContextVar["Checkpointing | None"] = ContextVar("pategan_audit_checkpointing", default=None)


def default_every() -> float:
    """Seconds between snapshots: the run options' ``checkpoint_seconds`` (default 600; 0
    snapshots after every iteration; ``$PATEGAN_AUDIT_CHECKPOINT_SECONDS`` at an entry point)."""
    return float(runner.current_options().checkpoint_seconds)


@dataclass
class Checkpointing:
    """Where the groups of one fit keep their snapshots, and what resuming found.

    ``groups`` counts the groups opened so far (their order is deterministic: ``fit_many``'s
    chunks, then each chunk's stackable groups); ``prior_seconds`` is the fit time the resumed
    snapshots had already spent (a caller adds it to its own wall time); ``resumed`` lists
    ``(group, iteration)`` for each group that went on from a snapshot."""

    directory: Path
    every: float
    groups: int = 0
    prior_seconds: float = 0.0
    resumed: list[tuple[int, int]] = field(default_factory=list)

    def open_group(self) -> "GroupSlot":
        slot = GroupSlot(self, self.groups)
        self.groups += 1
        return slot


@contextlib.contextmanager
def checkpointing(directory: str | os.PathLike, every: float | None = None) -> Iterator[Checkpointing]:
    """Snapshot (and resume) the batched fits run inside the block under ``directory``."""
    every = default_every() if every is None else float(every)
    if not every >= 0:
        raise ValueError(f"every must be >= 0 seconds, got {every!r}")
    state = Checkpointing(Path(directory), every)
    token = _ACTIVE.set(state)
    try:
        yield state
    finally:
        _ACTIVE.reset(token)


def current() -> Checkpointing | None:
    """The active :class:`Checkpointing`, or None outside :func:`checkpointing`."""
    return _ACTIVE.get()


@functools.lru_cache(maxsize=1)
def _commit() -> str | None:
    """The git commit of the package's work tree (None outside git), named by a snapshot so that
    a later run can resume it from a work tree of that commit after the code moved on."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=runner.PACKAGE_DIR, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _fingerprint(models: Sequence[Any]) -> list[str]:
    return [f"{type(m).__module__}.{type(m).__qualname__} {m.config!r}" for m in models]  # the config holds the seed


#: Arrays and tensors at least this large (64 KiB) that a snapshot finds unchanged since the group started
#: (the training data, stacked once) are not stored: a resumed fit rebuilds them as it did at the
#: start and the snapshot refers to them by position, checked by digest. This keeps snapshots to
#: the state that training changes (a few MB), small enough to commit beside an archive.
LARGE_BYTES = 1 << 16


def _bytes_of(obj: Any, least: int) -> np.ndarray | None:
    """The raw bytes of a tensor or a (non-object) array of at least ``least`` bytes, else None."""
    if isinstance(obj, torch.Tensor) and obj.nbytes >= least:
        return obj.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy()
    if isinstance(obj, np.ndarray) and obj.nbytes >= least and obj.dtype != object:
        return np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
    return None


def _memory(obj: Any) -> tuple[int, int, str] | None:
    """The address range a tensor's or an array's elements span, and which library holds them."""
    if isinstance(obj, torch.Tensor) and obj.numel() > 0 and obj.device.type == "cpu":
        extent = 1 + sum((n - 1) * abs(st) for n, st in zip(obj.shape, obj.stride()))
        low = obj.data_ptr() - sum((n - 1) * abs(st) for n, st in zip(obj.shape, obj.stride()) if st < 0) * obj.element_size()
        return low, low + extent * obj.element_size(), "torch"
    if isinstance(obj, np.ndarray) and obj.nbytes > 0 and obj.dtype != object:
        return (*np.lib.array_utils.byte_bounds(obj), "numpy")
    return None


def _digest(raw: np.ndarray) -> str:
    return hashlib.blake2b(raw.data, digest_size=16).hexdigest()


class _Pickler(pickle.Pickler):
    """Stores the caller's models by position and, given a baseline, its unchanged large arrays
    by position; everything else as a normal pickle."""

    def __init__(self, file, ids: dict[int, int], baseline: "_Baseline | None" = None):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._ids = ids
        self._baseline = baseline
        self.found: list[tuple[Any, str]] = []  # when recording a baseline: (large object, digest) in order
        self.arrays: list[str] = []  # ... and the digest of every array met
        self.spans: set[tuple[int, int, str]] = set()  # the memory each array met spans

    def shared(self) -> bool:
        """Whether two arrays met overlap in memory without being the same view (a slice of
        another, ``torch.from_numpy``): a pickle stores them apart, so a resumed fit would lose
        the link; such a state is not snapshotted. (A parameter and its ``.data``, which pickling
        itself creates, are the same view.)"""
        spans = sorted(self.spans)
        return any(b[0] < a[1] for a, b in zip(spans, spans[1:]))

    def persistent_id(self, obj):
        r = self._ids.get(id(obj))
        if r is not None:
            return ("replica", r)
        span = _memory(obj)
        if span is not None:
            self.spans.add(span)
        if self._baseline is None:  # recording a baseline: every array's digest, the large ones kept
            raw = _bytes_of(obj, 0)
            if raw is None:
                return None
            self.arrays.append(_digest(raw))
            if raw.nbytes < LARGE_BYTES:
                return None
            self.found.append((obj, self.arrays[-1]))
            return ("base", len(self.found) - 1)
        j = self._baseline.index.get(id(obj))
        if j is not None and _digest(_bytes_of(obj, 0)) == self._baseline.digests[j]:
            return ("base", j)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, models: Sequence[Any], baseline: "_Baseline"):
        super().__init__(file)
        self._models = models
        self._baseline = baseline

    def persistent_load(self, pid):
        kind, r = pid
        if kind == "replica":
            return self._models[r]
        if kind == "base":
            return self._baseline.objects[r]
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


@dataclass
class _Baseline:
    """The large arrays of a group's state as it starts (in pickling order), with digests."""

    objects: list[Any]
    digests: list[str]
    start: str  # digest of every array of the starting state (data, partitions, initial weights)

    def __post_init__(self) -> None:
        self.index = {id(o): j for j, o in enumerate(self.objects)}  # the objects stay referenced here

    shared: bool = False  # the starting state holds tensors that share memory

    @classmethod
    def of(cls, models: Sequence[Any], step: Any) -> "_Baseline":
        p = _Pickler(io.BytesIO(), {id(m): r for r, m in enumerate(models)}, None)
        p.dump({"states": [m.__dict__ for m in models], "step": step})
        start = hashlib.blake2b("".join(p.arrays).encode(), digest_size=16).hexdigest()
        return cls([o for o, _ in p.found], [d for _, d in p.found], start, p.shared())


@dataclass
class GroupSlot:
    """The snapshot file of one replica group."""

    owner: Checkpointing
    index: int
    _last: float = field(default_factory=time.monotonic)
    _start: float = field(default_factory=time.perf_counter)
    _prior: float = 0.0
    _baseline: _Baseline | None = None
    _off: str = ""  # why this group takes no snapshots ("" while it does)

    @property
    def path(self) -> Path:
        return self.owner.directory / f"group{self.index}.pkl"

    def begin(self, models: Sequence[Any], step: Any) -> None:
        """Note the group's starting state (its fresh ``step``, the models after ``begin_fit``)."""
        self._baseline = _Baseline.of(models, step)
        if self._baseline.shared:
            self._stop("its starting state holds arrays that share memory")

    def _stop(self, why: str) -> None:
        self._off = why
        warnings.warn(f"{self.path}: this fit takes no snapshots ({why}: a pickle would store them apart); "
                      "it runs to the end as usual, but a stopped run starts it again", UserWarning, stacklevel=3)

    def load(self, models: Sequence[Any]) -> dict[str, Any] | None:
        """The saved state of this group with ``models`` restored in place, or None (no snapshot,
        or one of an older source, which is set aside with a warning). Call after :meth:`begin`."""
        if self._off or not self.path.exists():
            return None
        with self.path.open("rb") as f:
            head = pickle.load(f)
            if head["source"] != runner.source_hash():
                warnings.warn(f"the snapshot {self.path} was written by another version of the code (source "
                              f"{head['source']}, commit {head.get('commit')}; now {runner.source_hash()}); this fit "
                              "starts from iteration 0 (to resume it instead, run from a work tree of that commit, "
                              "e.g. `git worktree add ../resume COMMIT`)", UserWarning, stacklevel=2)
                return None
            if head.get("flush_denormal", False) != flush_denormal_requested():
                raise ValueError(f"the snapshot {self.path} was written with ${runner.ENV['flush_denormal']}="
                                 f"{int(head.get('flush_denormal', False))}; set it the same (RunOptions.flush_denormal) "
                                 "to resume the fit "
                                 f"(or delete {self.owner.directory} to start it again)")
            if head["fingerprint"] != _fingerprint(models) or head["start"] != self._baseline.start:
                raise ValueError(f"the snapshot {self.path} belongs to another fit (other preset, seeds, configuration "
                                 f"or data); delete {self.owner.directory} to start this fit from iteration 0")
            saved = _Unpickler(f, models, self._baseline).load()
        for m, state in zip(models, saved["states"]):
            m.__dict__.clear()
            m.__dict__.update(state)
        torch.set_rng_state(saved["rng"]["torch"])
        np.random.set_state(saved["rng"]["numpy"])
        random.setstate(saved["rng"]["random"])
        self._prior = float(saved["seconds"])
        self._start = time.perf_counter()
        self.owner.prior_seconds += self._prior
        self.owner.resumed.append((self.index, int(saved["it"])))
        return saved

    def due(self) -> bool:
        return not self._off and time.monotonic() - self._last >= self.owner.every

    def save(self, models: Sequence[Any], **loop_state: Any) -> None:
        """Write the group's state atomically (``loop_state``: the step, active mask, iteration…)."""
        head = {"source": runner.source_hash(), "commit": _commit(), "flush_denormal": flush_denormal_requested(),
                "fingerprint": _fingerprint(models),
                "start": self._baseline.start}
        body = {
            "states": [m.__dict__ for m in models],
            "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "random": random.getstate()},
            "seconds": self._prior + time.perf_counter() - self._start,
            **loop_state,
        }
        if self._off:
            return
        buf = io.BytesIO()
        pickle.dump(head, buf, protocol=pickle.HIGHEST_PROTOCOL)
        pickler = _Pickler(buf, {id(m): r for r, m in enumerate(models)}, self._baseline)
        pickler.dump(body)
        if pickler.shared():
            self.path.unlink(missing_ok=True)
            self._stop("its state came to hold arrays that share memory")
            return
        runner.atomic_write_bytes(self.path, buf.getvalue())
        self._last = time.monotonic()
