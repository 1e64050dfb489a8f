"""Pick a preset by name (after Opacus' ``accountants/registry.py``).

Presets are imported on demand, so a missing optional module only breaks its own name.
"""
from __future__ import annotations

import importlib
from typing import Any

from .base import BaseConfig, BaseGenerator, make_config

__all__ = ["PRESETS", "ALL_NAMES", "REGISTRY", "create", "get_class", "get_config_class", "released_overrides",
           "utility_harness_overrides"]

PRESETS: tuple[str, ...] = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected")

REGISTRY: dict[str, str] = {
    "original": "pategan_audit.implementations.original:Original",
    "updated": "pategan_audit.implementations.updated:Updated",
    "synthcity": "pategan_audit.implementations.synthcity:Synthcity",
    "turing": "pategan_audit.implementations.turing:Turing",
    "borealis": "pategan_audit.implementations.borealis:Borealis",
    "smartnoise": "pategan_audit.implementations.smartnoise:Smartnoise",
    "corrected": "pategan_audit.implementations.corrected:Corrected",
    "gnmax": "pategan_audit.implementations.gnmax:GNMax",
}
#: every registered name: the seven of :data:`PRESETS` and our ``gnmax`` (PATE 2018's aggregation)
ALL_NAMES: tuple[str, ...] = tuple(REGISTRY)


def _check_name(name: str) -> str:
    if name not in REGISTRY:
        raise ValueError(f"unknown implementation {name!r}; choose one of: {', '.join(REGISTRY)}")
    return name


def get_class(name: str) -> type[BaseGenerator]:
    """The generator class registered under ``name``."""
    module_name, attr = REGISTRY[_check_name(name)].split(":")
    return getattr(importlib.import_module(module_name), attr)


def get_config_class(name: str) -> type[BaseConfig]:
    """The frozen config dataclass of ``name`` (its fields are every setting and switch)."""
    return get_class(name).Config


def released_overrides(name: str) -> dict[str, Any]:
    """Overrides that turn the preset's benchmarked defaults into the behaviour as released
    (each preset module's ``RELEASED_OVERRIDES``; empty if it has none)."""
    module_name = REGISTRY[_check_name(name)].split(":")[0]
    return dict(getattr(importlib.import_module(module_name), "RELEASED_OVERRIDES", {}))


def utility_harness_overrides(name: str) -> dict[str, Any]:
    """Overrides the utility benchmark applies to ``name``: where the authors' utility harness ran
    the preset differently from their audit harness (the presets' defaults), each preset module's
    ``UTILITY_HARNESS_OVERRIDES`` (empty if it has none; only turing has one)."""
    module_name = REGISTRY[_check_name(name)].split(":")[0]
    return dict(getattr(importlib.import_module(module_name), "UTILITY_HARNESS_OVERRIDES", {}))


def create(name: str, epsilon: float = 1.0, delta: float | None = 1e-5, seed: int | None | str = "default",
           **overrides: Any) -> BaseGenerator:
    """An unfitted generator ``name`` with the given privacy target, seed and setting overrides.

    seed: an integer (reproducible), None (fresh OS entropy at every fit) or omitted: the
    preset's default, 0 for the six benchmarked presets and None for ``corrected`` (its DP noise
    must not be predictable from a constant; pass a seed for reproducible experiments).

    Unknown names and unknown settings raise a ValueError listing the valid ones.

    >>> model = create("borealis", epsilon=1.0, num_teachers=3, max_iter=2)
    >>> model.config.accountant
    'borealis'
    """
    cls = get_class(name)
    settings = dict(overrides, epsilon=epsilon, delta=delta)
    if not (isinstance(seed, str) and seed == "default"):
        settings["seed"] = seed
    return cls(make_config(cls.Config, name, settings))
