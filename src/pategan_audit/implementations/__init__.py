"""The seven PATE-GAN presets (audit paper §4, Tables 2-3; implementation notes §common.table3, §violations.catalogue).

``create(name, epsilon=1.0, delta=1e-5, seed=0, **overrides)`` returns an unfitted generator
with ``fit(df, label=None)`` and ``sample(n, seed=None)``; ``fit_many(name, data, seeds=...)`` fits many replicas as one
batched computation; ``make_generator`` / ``PresetFactory`` build them for an experiment
(:mod:`.factory`: the public-bounds rule, applied once); names in :data:`PRESETS` order:
original, updated, synthcity, turing, borealis, smartnoise, corrected. Defaults reproduce each
implementation as benchmarked by the paper; ``released_overrides(name)`` gives the behaviour as
released; the violation catalogue (:mod:`.violations`) names the switch of every violation.
"""
from typing import Any

from .factory import PresetFactory, make_generator, with_public_bounds
from .registry import PRESETS, REGISTRY, create, get_class, get_config_class, released_overrides, utility_harness_overrides
from .violations import BY_ID, VIOLATIONS, Violation, all_fixed_overrides, as_frame, fix_overrides, violations_for

__all__ = [
    "PRESETS",
    "REGISTRY",
    "create",
    "make_generator",
    "PresetFactory",
    "with_public_bounds",
    "fit_many",
    "batched_support",
    "BATCHED",
    "get_class",
    "get_config_class",
    "released_overrides",
    "utility_harness_overrides",
    "Violation",
    "VIOLATIONS",
    "BY_ID",
    "violations_for",
    "fix_overrides",
    "all_fixed_overrides",
    "as_frame",
]


_LAZY = {"BATCHED", "batched_support", "fit_many"}  # .many imports torch: loaded on first use


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import many

        return getattr(many, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
