"""``fit_many``: R independent fits of one preset as one batched computation (the replica axis).

``fit_many(name, data, seeds=[s_0, ..., s_{R-1}], ...)[i]`` is the batched counterpart of
``create(name, seed=s_i, ...).fit(data_i)``: the same partitions, batches, vote noise,
accountant trajectory and stopping iteration (each replica draws from its own seed-derived
streams in the order a single fit does), networks equal up to float rounding, and the same
``sample(n)``, ``trace`` and hooks afterwards. A group of one replica is the single fit to the
bit: every preset fits through its batched step at R = 1 (``tests/replicas/oracle_*.py`` keep
the single-fit loops they replaced). Why batch: the presets' networks are tiny, so a
single fit spends most of its time in framework overhead (dispatch, autograd, Python); R
replicas stacked along a leading axis (:mod:`pategan_audit.replicas`) pay that overhead once.

Replicas are fitted in chunks of at most ``max_replicas`` (default: what a quarter of the
machine's free memory holds, at most 512); inside a chunk, replicas whose networks have the same
shapes (e.g. the same number of training rows) are stacked together. A preset or setting
without a batched step falls back to fitting the replicas one by one (``batched=False`` in
``model.trace.extra``).

``streams="counter"`` (opt-in; original, turing, borealis, smartnoise, corrected, updated and synthcity,
:data:`STREAMS`, the presets whose family module lists it in ``STREAM_MODES``) draws every replica's
training randomness of an iteration from one counter-based call on the device
(:mod:`pategan_audit.replicas.streams`; synthcity: one call per phase of the iteration): draws independent of R, chunking and device, but not
the single fit's, so the mode is a property of the fit (``model.trace.extra["streams"]``).

What the replica axis does not fix, in either mode: the float rounding of the batched kernels
depends on the number of replicas stacked (``baddbmm`` picks its kernel by batch size; vectorised
and scalar code round ``sigmoid`` and ``softplus`` differently), so a replica's weights at R = 1
and inside a larger chunk agree to rounding (about 1e-6 in released values after 20 iterations),
not to the bit. Discrete outputs that do not sit on a rounding boundary (rows seen, votes,
stopping iteration) agree exactly; an audit rerun with another chunk size (``n_jobs`` changes it)
trains shadow models equal to rounding, not to the bit.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import torch

from .base import BaseGenerator
from .base import flush_denormal_requested, training_threads
from .registry import _check_name, create

__all__ = ["fit_many", "BATCHED", "STREAMS", "batched_support", "check_streams", "default_max_replicas", "resolve_device"]

# preset -> module with ``supports(config) -> bool`` and ``run(models, frames, label, *, device, on_done)``
BATCHED: dict[str, str] = {
    "borealis": "pategan_audit.replicas.neural",
    "smartnoise": "pategan_audit.replicas.neural",
    "corrected": "pategan_audit.replicas.neural",
    "gnmax": "pategan_audit.replicas.gnmax",
    "original": "pategan_audit.replicas.wgan",
    "turing": "pategan_audit.replicas.wgan",
    "updated": "pategan_audit.replicas.updated",
    "synthcity": "pategan_audit.replicas.synthcity",
}


#: fit_many's ``streams`` values: "torch" (each replica's own generators, every preset) and the
#: presets whose batched step also runs "counter" (a family module's ``STREAM_MODES``)
STREAMS: tuple[str, ...] = ("torch", "counter")


def _counter_presets() -> list[str]:
    return sorted(n for n in BATCHED if "counter" in getattr(_family(n), "STREAM_MODES", ("torch",)))


def check_streams(name: str, streams: str, batched: bool) -> None:
    """A ``streams`` value this preset's batched step runs, else a ValueError naming the valid ones."""
    if streams not in STREAMS:
        raise ValueError(f"streams must be one of {STREAMS}, got {streams!r}")
    if streams == "torch":
        return
    presets = _counter_presets()
    if name not in presets:
        families: dict[str, list[str]] = {}
        for n in presets:
            families.setdefault(BATCHED[n].rsplit(".", 1)[-1], []).append(n)
        named = ", ".join(f"{fam} {members}" for fam, members in families.items())
        raise ValueError(f"streams='counter' is not available for preset {name!r}; it runs for {presets} "
                         f"(families: {named}); use streams='torch', the default, elsewhere")
    if not batched:
        raise ValueError("streams='counter' needs the batched path; drop batched=False or use streams='torch'")


def _family(name: str):
    path = BATCHED.get(name)
    return importlib.import_module(path) if path else None


def batched_support(name: str, **overrides: Any) -> bool:
    """Whether ``fit_many(name, ..., **overrides)`` runs batched (else replica by replica)."""
    family = _family(_check_name(name))
    return family is not None and bool(family.supports(create(name, **overrides).config))


def _available_memory() -> int:
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 4 << 30


def default_max_replicas(bytes_per_replica: int | None = None) -> int:
    """Replicas per chunk: a quarter of the free memory over an estimate of one replica's
    working set (default 8 MiB: parameters, gradients, optimiser moments and activations of the
    presets' networks at the paper's widths), clamped to [1, 512]."""
    per = int(bytes_per_replica) if bytes_per_replica else 8 << 20
    return int(max(1, min(512, _available_memory() // 4 // per)))


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The device of a batched fit: ``device`` itself, else the run options' ``device`` (so that
    an archive or a notebook runs its batched fits on an accelerator without new arguments), else
    the CPU.

    An unknown name or an accelerator this machine lacks is an error that names the fix, never a
    silent fall-back to the CPU."""
    from ..runner import ENV, _check_device, current_options

    source = "device"
    if device is None:
        device, source = current_options().device or "cpu", "RunOptions.device"
    dev = _check_device(device, source)
    if dev.type == "cuda" and not torch.cuda.is_available():
        unset = "" if source == "device" else f" (or unset ${ENV['device']} at the entry point)"
        raise ValueError(f"{source}={device!r} asks for CUDA, which this machine's torch cannot use; use 'cpu'{unset}")
    return dev


def _as_frames(data: pd.DataFrame | Sequence[pd.DataFrame], n: int) -> list[pd.DataFrame]:
    if isinstance(data, pd.DataFrame):
        return [data] * n
    if isinstance(data, (list, tuple)):
        if len(data) != n:
            raise ValueError(f"data holds {len(data)} tables for {n} seeds; pass one table per seed or a single shared DataFrame")
        bad = [i for i, d in enumerate(data) if not isinstance(d, pd.DataFrame)]
        if bad:
            raise TypeError(f"data[{bad[0]}] is a {type(data[bad[0]]).__name__}, not a pandas DataFrame")
        return list(data)
    raise TypeError(f"data must be a DataFrame or a list of DataFrames (one per seed), got {type(data).__name__}")


def _as_seeds(seeds: Sequence[int]) -> list[int]:
    if isinstance(seeds, (int, np.integer)) or isinstance(seeds, (str, bytes)):
        raise TypeError("seeds must be a sequence of integers, e.g. seeds=range(100)")
    out = list(seeds)
    if not out:
        raise ValueError("seeds is empty; pass at least one seed, e.g. seeds=range(10)")
    bad = [s for s in out if isinstance(s, bool) or not isinstance(s, (int, np.integer))]
    if bad:
        raise TypeError(f"every seed must be an integer, got {bad[0]!r}")
    return [int(s) for s in out]


def _refuse_repeated_seeds(seeds: list[int], frames: list[pd.DataFrame]) -> None:
    """Replicas with the same seed on the same table are the same fit twice, not independent
    replicas: refuse them (the same seed on different tables, as D and D' of a paired game, is
    allowed)."""
    first: dict[int, list[int]] = {}
    repeated: list[int] = []
    for i, s in enumerate(seeds):
        for j in first.get(s, []):
            if frames[j] is frames[i] or frames[j].equals(frames[i]):
                repeated.append(s)
                break
        first.setdefault(s, []).append(i)
    if repeated:
        shown = sorted(set(repeated))
        raise ValueError(f"seeds repeats {shown[:10]}{'...' if len(shown) > 10 else ''} on the same table: replicas "
                         "with one seed and one table are the same fit twice, not independent replicas; pass distinct "
                         "seeds, e.g. seeds=range(n)")


def fit_many(
    name: str,
    data: pd.DataFrame | Sequence[pd.DataFrame],
    *,
    seeds: Sequence[int],
    epsilon: float = 1.0,
    delta: float | None = 1e-5,
    label: str | None = None,
    max_replicas: int | None = None,
    device: str | torch.device | None = None,
    batched: bool = True,
    progress: bool | Callable[[int], None] = False,
    streams: str = "torch",
    **overrides: Any,
) -> list[BaseGenerator]:
    """Fit ``len(seeds)`` independent replicas of preset ``name``; returns the fitted generators.

    data: one DataFrame shared by all replicas, or a list with one DataFrame per seed (tables may
        differ in rows, as the audit's D and D').
    seeds: one integer per replica; replica i is ``create(name, epsilon, delta, seed=seeds[i], **overrides)``;
        a seed repeated on the same table is an error (the same fit twice). Every table is checked
        (``_check_input``) before any replica computes.
    max_replicas: replicas per batched chunk (None: :func:`default_max_replicas`).
    device: any torch device for the batched tensor work (None: the run options' ``device``,
        else "cpu"); random draws stay on the CPU generators of each replica, so results do not depend
        on the device's RNG, but float rounding does: the same seed gives the same numbers on one
        device, and numbers equal up to rounding (amplified by training) on another.
    batched: False fits the replicas one by one (the reference path the batched one must match).
    progress: True shows a tqdm bar counting models; a callable is called with each finished count.
    streams: "torch" (default: each replica's own torch generators, the numbers of
        ``create(...).fit``) or "counter" (original, turing, borealis, smartnoise, corrected, updated, synthcity: one
        counter-based call per iteration for all replicas, on ``device``; the same draws for a
        seed at any R, chunking and device (weights then equal to float rounding, module
        docstring), but other draws than a single fit, which has no such mode; seeds must be
        non-negative). Recorded in ``model.trace.extra["streams"]``.
    """
    check_streams(_check_name(name), streams, batched)
    seeds = _as_seeds(seeds)
    frames = _as_frames(data, len(seeds))
    if max_replicas is not None and (isinstance(max_replicas, bool) or not isinstance(max_replicas, (int, np.integer)) or max_replicas < 1):
        raise ValueError(f"max_replicas must be a positive integer or None, got {max_replicas!r}")
    _refuse_repeated_seeds(seeds, frames)
    device = resolve_device(device)
    models = [create(name, epsilon=epsilon, delta=delta, seed=s, **overrides) for s in seeds]
    checked: set[int] = set()
    for m, df in zip(models, frames):  # every table checked before the first replica computes anything
        if id(df) not in checked:
            m._check_input(df, label)
            checked.add(id(df))
    family = _family(name) if batched else None
    use_batched = family is not None and bool(family.supports(models[0].config))
    if streams != "torch":
        if not use_batched:
            raise ValueError(f"streams={streams!r} needs {name!r}'s batched step, which these settings do not run; "
                             "use streams='torch'")
        bad = [s for s in seeds if s < 0]
        if bad:
            raise ValueError(f"streams={streams!r} keys each replica by its seed; got {bad[0]}, pass non-negative seeds")
    chunk = int(max_replicas) if max_replicas is not None else default_max_replicas()
    bar, tick = _progress(progress, len(models), name)
    try:
        with training_threads():
            for start in range(0, len(models), chunk if use_batched else len(models)):
                part = models[start:start + chunk] if use_batched else models
                part_frames = frames[start:start + len(part)]
                if use_batched:
                    extra = {"streams": streams} if streams != "torch" else {}
                    family.run(part, part_frames, label, device=device, on_done=lambda i: tick(), **extra)
                else:
                    for m, df in zip(part, part_frames):
                        m.fit(df, label=label)
                        tick()
    finally:
        if bar is not None:
            bar.close()
    flushed = flush_denormal_requested()
    for m in models:
        m.trace.extra["batched"] = use_batched
        m.trace.extra["flush_denormal"] = flushed
        m.trace.extra["streams"] = streams
    return models


def _progress(progress, total: int, name: str):
    count = [0]
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=f"fit_many {name}", unit="model", leave=False)

        def tick() -> None:
            bar.update(1)

        return bar, tick
    if callable(progress):
        def tick() -> None:
            count[0] += 1
            progress(count[0])

        return None, tick
    return None, lambda: None
