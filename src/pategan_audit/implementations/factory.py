"""One way to build a preset's generator for an experiment: the public-bounds rule, applied once.

Every experiment of the book trains presets through this module: the utility cells
(``ganev2025elusive`` §5), the training traces (§6.1) and the shadow models of the audit (§6.2).

* :func:`with_public_bounds` is **the public-bounds rule**: a preset that takes its bounds as
  public (``bounds="public"``, by default only ``corrected``, or any preset whose Metadata
  violations V10-V13 are switched off) and is given no ``public_bounds`` gets the bounds of the
  experiment's dataset. The paper treats the min/max of a dataset's domain as public (§5); the
  audit passes bounds that do not depend on the target's presence instead (§6.2,
  :func:`pategan_audit.auditing.settings.cervical_public_bounds`).
* :func:`make_generator` builds one unfitted generator with the rule applied.
* :class:`PresetFactory` is the picklable ``seed -> generator`` of one preset, ε, δ and
  overrides (rule already applied, :meth:`PresetFactory.for_data`), with a batched
  :meth:`~PresetFactory.fit_many` (the replica axis, :func:`pategan_audit.implementations.fit_many`).
  Its description in result-cache keys keeps the class path it had when it lived in
  :mod:`pategan_audit.auditing.settings` (:attr:`PresetFactory.cache_class`), so cached shadow
  models and archived ``run_id`` values stay valid.
* :meth:`PresetFactory.with_streams` gives the same factory with ``fit_many``'s counter-based
  streams (:class:`CounterStreamsFactory`, issue 40 item 2): the audit game's batched path
  (``factory.fit_many``) then trains every chunk in that mode, and its own cache description
  keeps its shadow models apart from the default streams' (whose keys do not change).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import pandas as pd

from .many import batched_support, check_streams, fit_many
from .registry import create, get_config_class

__all__ = ["with_public_bounds", "make_generator", "PresetFactory", "CounterStreamsFactory", "StreamsFit"]


def with_public_bounds(name: str, overrides: Mapping[str, Any] | None,
                       public_bounds: Mapping[str, Sequence[float]] | None) -> dict[str, Any]:
    """``overrides`` plus ``public_bounds`` where the preset takes public bounds and has none.

    The rule (module docstring): when the preset's effective ``bounds`` setting (the override,
    else the preset's default) is ``"public"`` and ``overrides`` gives no ``public_bounds``,
    ``public_bounds`` (``{column: (lo, hi)}``) is added; otherwise ``overrides`` is returned
    unchanged (as a new dict). Presets without a ``bounds`` setting are left alone.
    """
    out = dict(overrides or {})
    if public_bounds is None or out.get("public_bounds") is not None:
        return out
    fields = {f.name: f for f in dataclasses.fields(get_config_class(name))}
    if "bounds" in fields and "public_bounds" in fields and out.get("bounds", fields["bounds"].default) == "public":
        out["public_bounds"] = dict(public_bounds)
    return out


def make_generator(name: str, *, epsilon: float = 1.0, delta: float | None = 1e-5, seed: int | None | str = "default",
                   overrides: Mapping[str, Any] | None = None,
                   public_bounds: Mapping[str, Sequence[float]] | None = None):
    """An unfitted generator of preset ``name`` (:func:`~pategan_audit.implementations.create`)
    with the public-bounds rule applied (:func:`with_public_bounds`)."""
    return create(name, epsilon=epsilon, delta=delta, seed=seed, **with_public_bounds(name, overrides, public_bounds))


@dataclass(frozen=True)
class PresetFactory:
    """``seed -> make_generator(name, epsilon, delta, seed, overrides)`` for one preset.

    ``overrides`` are passed through (``num_teachers``, ``max_iter``, ``lam``, ``bounds``,
    ``public_bounds``, violation switches...); ``record=False`` unless overridden: shadow models
    and utility models do not need the per-query introspection. Build it with
    :meth:`for_data` to apply the public-bounds rule. Frozen and made of plain values, so it
    pickles to parallel workers and describes itself in cache keys
    (:func:`pategan_audit.runner.describe_for_cache`).
    """

    name: str
    epsilon: float = 1.0
    delta: float | None = 1e-5
    overrides: dict = field(default_factory=dict)

    #: Class path written into result-cache keys: this class was defined as
    #: ``pategan_audit.auditing.settings.PresetFactory`` when the audit cache and the archives
    #: were computed, and the keys must stay byte-identical (tests/test_pinned_keys.py).
    cache_class: ClassVar[str] = "pategan_audit.auditing.settings.PresetFactory"

    @classmethod
    def for_data(cls, name: str, *, epsilon: float = 1.0, delta: float | None = 1e-5,
                 overrides: Mapping[str, Any] | None = None,
                 public_bounds: Mapping[str, Sequence[float]] | None = None) -> PresetFactory:
        """The factory of ``name`` with the public-bounds rule applied to ``overrides`` once
        (:func:`with_public_bounds`): the resolved bounds are part of the factory (and so of
        its cache description)."""
        return cls(name, epsilon, delta, with_public_bounds(name, overrides, public_bounds))

    def create_overrides(self) -> dict:
        """The keyword overrides every model of this factory is created with (``record=False``
        unless ``overrides`` says otherwise); :meth:`fit_many` uses the same ones."""
        return {"record": False, **self.overrides}

    def __call__(self, seed: int) -> Any:
        return make_generator(self.name, epsilon=self.epsilon, delta=self.delta, seed=int(seed),
                              overrides=self.create_overrides())

    def stream_mode(self) -> str:
        """The ``streams`` of :meth:`fit_many` when none is given: ``"torch"`` (each replica's
        own generators, the numbers of a single fit)."""
        return "torch"

    def with_streams(self, streams: str) -> PresetFactory:
        """This factory with :meth:`fit_many`'s stream mode ``streams``: itself for ``"torch"``,
        a :class:`CounterStreamsFactory` for ``"counter"`` (a ValueError, before any training,
        for a preset without counter streams, naming the families that have them)."""
        if streams == "torch":
            return PresetFactory(self.name, self.epsilon, self.delta, dict(self.overrides))
        return CounterStreamsFactory(self.name, self.epsilon, self.delta, dict(self.overrides), streams=streams)

    def fit_many(self, data: pd.DataFrame | Sequence[pd.DataFrame], seeds: Sequence[int], *,
                 label: str | None = None, streams: str | None = None) -> list:
        """``[self(s).fit(df, label=label) for df, s in zip(data, seeds)]`` as one
        :func:`~pategan_audit.implementations.fit_many` call (batched where the preset has a
        batched step; networks equal up to float rounding). ``data``: one table per seed, or a
        single table shared by every seed. ``streams``: passed to ``fit_many`` (None: this
        factory's :meth:`stream_mode`, ``"torch"`` unless made by :meth:`with_streams`); a
        preset without counter streams is a ValueError naming the families that have them."""
        streams = self.stream_mode() if streams is None else streams
        check_streams(self.name, streams, True)
        frames = data if isinstance(data, pd.DataFrame) else list(data)
        return fit_many(self.name, frames, seeds=[int(s) for s in seeds], epsilon=self.epsilon, delta=self.delta,
                        label=label, streams=streams, **self.create_overrides())

    def batched(self) -> bool:
        """Whether :meth:`fit_many` runs batched for this factory (else the fits run one by one)."""
        return bool(batched_support(self.name, epsilon=self.epsilon, delta=self.delta, **self.create_overrides()))


@dataclass(frozen=True)
class CounterStreamsFactory(PresetFactory):
    """A :class:`PresetFactory` whose models train with ``fit_many(..., streams="counter")``
    (:mod:`pategan_audit.replicas.streams`: a replica's numbers depend only on its seed, the same
    at any R and chunking). Build it with :meth:`PresetFactory.with_streams`. ``streams`` is a
    field and the class path its own, so its cache description differs from the default
    factory's. Calling it gives a :class:`StreamsFit` (a single fit in this mode)."""

    streams: str = "counter"

    cache_class: ClassVar[str] = "pategan_audit.implementations.factory.CounterStreamsFactory"

    def __post_init__(self) -> None:
        if self.streams == "torch":
            raise ValueError("CounterStreamsFactory is for streams='counter'; use PresetFactory for the default streams")
        check_streams(self.name, self.streams, True)

    def stream_mode(self) -> str:
        return self.streams

    def __call__(self, seed: int) -> StreamsFit:
        return StreamsFit(self, int(seed))


class StreamsFit:
    """One unfitted generator of a :class:`CounterStreamsFactory`: ``fit(df, label)`` is
    ``factory.fit_many(df, [seed], label=label)[0]`` (the counter streams have no single-fit
    path; at R = 1 a replica gets the numbers it gets inside any batch), after which
    ``sample``, ``trace`` and every other attribute are the fitted model's (before: the unfitted
    model's, e.g. ``config``)."""

    def __init__(self, factory: CounterStreamsFactory, seed: int):
        self.factory, self.seed = factory, int(seed)
        self.model = make_generator(factory.name, epsilon=factory.epsilon, delta=factory.delta, seed=self.seed,
                                    overrides=factory.create_overrides())

    def fit(self, df: pd.DataFrame, label: str | None = None) -> StreamsFit:
        self.model = self.factory.fit_many(df, [self.seed], label=label)[0]
        return self

    def __getattr__(self, name: str) -> Any:
        if name in ("factory", "seed", "model") or name.startswith("__"):  # not yet set (unpickling)
            raise AttributeError(name)
        return getattr(self.model, name)
