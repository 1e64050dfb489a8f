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
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import pandas as pd

from .registry import create, get_config_class

__all__ = ["with_public_bounds", "make_generator", "PresetFactory"]


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

    def fit_many(self, data: pd.DataFrame | Sequence[pd.DataFrame], seeds: Sequence[int], *,
                 label: str | None = None) -> list:
        """``[self(s).fit(df, label=label) for df, s in zip(data, seeds)]`` as one
        :func:`~pategan_audit.implementations.fit_many` call (batched where the preset has a
        batched step; networks equal up to float rounding). ``data``: one table per seed, or a
        single table shared by every seed."""
        from .many import fit_many  # lazy: the batched steps import torch

        frames = data if isinstance(data, pd.DataFrame) else list(data)
        return fit_many(self.name, frames, seeds=[int(s) for s in seeds], epsilon=self.epsilon, delta=self.delta,
                        label=label, **self.create_overrides())

    def batched(self) -> bool:
        """Whether :meth:`fit_many` runs batched for this factory (else the fits run one by one)."""
        from .many import batched_support

        return bool(batched_support(self.name, epsilon=self.epsilon, delta=self.delta, **self.create_overrides()))
