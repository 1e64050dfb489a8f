"""The audit settings of paper §6.2 and their channel controls (implementation notes §audit.querybased, §audit.groundhog, §audit.channels).

* **Querybased** on the worst-case dataset (implementation notes §audit.querybased): D′ = four rows (0,0,0), D = D′ + (1,1,1);
  k = 2; ε = 1, δ = 1e-5; updated λ = 1e-3, other λ at their defaults (borealis therefore 1e-4,
  implementation notes §audit.querybased); 100 iterations in the authors' code (1,000 in the paper's text); synthetic tables as large as the
  training set (4 vs 5 rows); features = counts of the 8 points of {0,1}³.
* **GroundHog** on Cervical (implementation notes §audit.groundhog): D = the 686-row training split, D′ = D without the target
  (row 397); k = 5; λ = 1e-3 for updated and borealis; ≤ 1,000 iterations; 686 synthetic rows in
  both worlds; features = F_naive.

Channels (implementation notes §audit.channels), closing one side channel at a time:

* ``"paper"`` — the runs above (synthetic size = training size; bounds read from the data);
* ``"fixed_size"`` — closes the **size** channel: the synthetic table has the same number of
  rows in both worlds (5 on the worst case); bounds still as each preset reads them. GroundHog
  already draws 686 rows in both worlds, so there ``fixed_size`` *is* ``paper`` (same run);
* ``"controlled"`` — also closes the **bounds** channel: every preset gets ``bounds="public"``
  with bounds fixed in advance that do not depend on the target's presence: {0, 1} for A, B, C
  on the worst case; on Cervical the bounds of D′ *widened* so that no row of either world is
  clipped (:func:`cervical_public_bounds`). What remains is the mechanism — and any metadata a
  preset still derives from the data despite public bounds (e.g. synthcity's category lists,
  implementations catalogue V12 note).

ε_emp(paper) − ε_emp(fixed_size) is the part the size channel accounts for, ε_emp(fixed_size) −
ε_emp(controlled) the part the bounds channel accounts for. The ``corrected`` preset never reads
bounds from data, so its ``fixed_size`` and ``controlled`` settings coincide.
:meth:`AuditSetting.effective_key` describes what a setting actually runs, so coinciding settings
share one cache entry (they are trained once) and one ``run_id``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .. import runner
from ..implementations.factory import PresetFactory, with_public_bounds  # PresetFactory: re-exported (old home)
from ..implementations.many import check_streams
from .featurisers import NaiveFeaturiser, QueryFeaturiser

__all__ = [
    "ATTACKS",
    "CHANNELS",
    "GROUNDHOG_TARGET",
    "PresetFactory",
    "AuditSetting",
    "ResolvedSetting",
    "attack_data",
    "worst_case_public_bounds",
    "cervical_public_bounds",
    "paper_overrides",
]

ATTACKS = ("querybased", "groundhog")
#: Channels in the order they close the side channels of implementation notes §audit.channels (paper → size closed → bounds closed).
CHANNELS = ("paper", "fixed_size", "controlled")
#: implementation notes §audit.target: the target row of the stored Cervical training split.
GROUNDHOG_TARGET = 397
#: implementation notes §audit.querybased, §audit.groundhog: teachers per attack (worst case: 2; Cervical: ⌊686/125⌋ = 5).
NUM_TEACHERS = {"querybased": 2, "groundhog": 5}
#: implementation notes §audit.querybased, §audit.groundhog λ overrides per attack (everything else at the preset's default).
LAMBDA_OVERRIDES = {"querybased": {"updated": 1e-3}, "groundhog": {"updated": 1e-3, "borealis": 1e-3}}


def attack_data(attack: str, *, target: int = GROUNDHOG_TARGET) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(D′, D) for an attack: the worst-case tables (implementation notes §data.worst-case) or Cervical without / with the target."""
    from .. import datasets

    if attack == "querybased":
        return datasets.worst_case("out"), datasets.worst_case("in")
    if attack == "groundhog":
        d_in = datasets.load("cervical_cancer").train.reset_index(drop=True)
        if not 0 <= target < len(d_in):
            raise ValueError(f"target must be a row position of the Cervical training split (0..{len(d_in) - 1}), got {target}")
        return d_in.drop(index=target).reset_index(drop=True), d_in
    raise ValueError(f"unknown attack {attack!r}; use one of {ATTACKS}")


def worst_case_public_bounds() -> dict[str, tuple[float, float]]:
    """{0, 1} for A, B, C: the domain of the worst-case dataset, fixed before seeing it."""
    return {c: (0.0, 1.0) for c in ("A", "B", "C")}


def cervical_public_bounds(d_out: pd.DataFrame, *, widen: float = 0.5) -> dict[str, tuple[float, float]]:
    """Public bounds for Cervical that do not depend on the target's presence.

    Computed from D′ (identical in both worlds) and widened to a plausible domain so that no
    record of D is clipped: binary columns → (0, 1); other columns → lower end min(0, min),
    upper end max + max(1, ``widen``·(max − lower)), rounded up for integer columns. E.g. the
    target's two unique maxima (STDs_number 4, STDs_N_diagnosis 3; D′ maxima 3 and 2) fall
    inside (0, 5) and (0, 3).
    """
    bounds = {}
    for col in d_out.columns:
        x = d_out[col].astype(float)
        lo, hi = float(x.min()), float(x.max())
        if set(x.unique()) <= {0.0, 1.0}:
            bounds[col] = (0.0, 1.0)
            continue
        lo = min(0.0, lo)
        hi = hi + max(1.0, widen * (hi - lo))
        if pd.api.types.is_integer_dtype(d_out[col].dtype):
            hi = float(math.ceil(hi))
        bounds[col] = (lo, hi)
    return bounds


def paper_overrides(attack: str, implementation: str, *, iterations: int) -> dict:
    """Generator settings of one implementation in the paper's audit (k, iteration cap, λ; implementation notes §audit.querybased, §audit.groundhog)."""
    if attack not in ATTACKS:
        raise ValueError(f"unknown attack {attack!r}; use one of {ATTACKS}")
    out = {"num_teachers": NUM_TEACHERS[attack], "max_iter": int(iterations)}
    lam = LAMBDA_OVERRIDES[attack].get(implementation)
    if lam is not None:
        out["lam"] = lam
    return out


@dataclass(frozen=True)
class AuditSetting:
    """One audited (implementation, attack, channel, variant).

    variant: a label for ``extra_overrides`` (e.g. "V4 fixed" in the ablation); the default
    "as benchmarked" means no extra overrides.
    streams: the shadow models' random streams (:func:`~pategan_audit.implementations.fit_many`):
        "torch" (default: each model's own generators, the numbers of a single fit and of every
        archived audit) or "counter" (one counter-based call per iteration for all models of a
        chunk, the same numbers at any chunking and device; other numbers than "torch", cached and
        recorded apart); a preset without counter streams is refused here, before any training.
    """

    attack: str
    implementation: str
    channel: str = "paper"
    iterations: int = 100
    variant: str = "as benchmarked"
    extra_overrides: dict = field(default_factory=dict)
    target: int = GROUNDHOG_TARGET
    epsilon: float = 1.0
    delta: float = 1e-5
    streams: str = "torch"

    def __post_init__(self) -> None:
        check_streams(self.implementation, self.streams, True)
        if self.attack not in ATTACKS:
            raise ValueError(f"unknown attack {self.attack!r}; use one of {ATTACKS}")
        if self.channel not in CHANNELS:
            raise ValueError(f"unknown channel {self.channel!r}; use one of {CHANNELS}")
        if self.iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {self.iterations}")

    def data(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return attack_data(self.attack, target=self.target)

    def public_bounds(self, d_out: pd.DataFrame) -> dict[str, tuple[float, float]]:
        return worst_case_public_bounds() if self.attack == "querybased" else cervical_public_bounds(d_out)

    def overrides(self, d_out: pd.DataFrame) -> dict:
        """The preset overrides of this setting: the paper's (:func:`paper_overrides`; implementation notes §audit.querybased, §audit.groundhog), public
        bounds for the ``controlled`` channel and for ``corrected`` (which never reads bounds
        from data, ``ganev2025elusive`` §6.2), then ``extra_overrides``, then the public-bounds
        rule (:func:`~pategan_audit.implementations.factory.with_public_bounds`) with this
        setting's bounds (e.g. the V10-V13 fixes of the ablation)."""
        out = paper_overrides(self.attack, self.implementation, iterations=self.iterations)
        bounds = self.public_bounds(d_out)
        if self.channel == "controlled" or self.implementation == "corrected":
            out.update(bounds="public", public_bounds=bounds)
        out.update(self.extra_overrides)
        return with_public_bounds(self.implementation, out, bounds)

    def factory(self, d_out: pd.DataFrame) -> PresetFactory:
        return PresetFactory(self.implementation, self.epsilon, self.delta, self.overrides(d_out)).with_streams(self.streams)

    def n_synth_rows(self, d_out: pd.DataFrame, d_in: pd.DataFrame) -> int | str:
        if self.attack == "groundhog":
            return len(d_in)  # implementation notes §audit.groundhog: 686 rows in both worlds
        return "train_size" if self.channel == "paper" else len(d_in)

    def featuriser(self):
        return QueryFeaturiser() if self.attack == "querybased" else NaiveFeaturiser()

    def effective_key(self, d_out: pd.DataFrame, d_in: pd.DataFrame) -> dict:
        """What the setting runs, without its labels (channel, variant): attack, data, preset,
        ε, δ, the preset overrides and the synthetic size. Two settings with the same effective
        key train the same shadow models (e.g. GroundHog ``fixed_size`` and ``paper``)."""
        return self._effective_key(self.factory(d_out), self.n_synth_rows(d_out, d_in), self.featuriser())

    def _effective_key(self, factory: PresetFactory, n_synth_rows: int | str, featuriser: Any) -> dict:
        return {"attack": self.attack, "target": self.target if self.attack == "groundhog" else None,
                "generator": runner.describe_for_cache(factory), "n_synth_rows": n_synth_rows,
                "featuriser": runner.describe_for_cache(featuriser)}

    def resolve(self) -> ResolvedSetting:
        """Everything this setting runs, resolved once: its worlds (D′, D), the preset factory,
        the featuriser, the synthetic size, the effective key and ``run_id``."""
        d_out, d_in = self.data()
        factory, n_rows, featuriser = self.factory(d_out), self.n_synth_rows(d_out, d_in), self.featuriser()
        return ResolvedSetting(self, d_out, d_in, factory, featuriser, n_rows, self._effective_key(factory, n_rows, featuriser))

    def key(self) -> dict:
        """JSON-able description of the setting's labels and knobs, for result records."""
        key = {"attack": self.attack, "implementation": self.implementation, "channel": self.channel,
               "iterations": self.iterations, "variant": self.variant, "extra_overrides": self.extra_overrides,
               "target": self.target, "epsilon": self.epsilon, "delta": self.delta}
        if self.streams != "torch":  # the default leaves the records of every archived audit as they were
            key["streams"] = self.streams
        return key


@dataclass(frozen=True, eq=False)
class ResolvedSetting:
    """An :class:`AuditSetting` resolved once (:meth:`AuditSetting.resolve`): what it trains and
    how its results are addressed.

    ``effective_key`` describes what runs without the setting's labels (settings that run the
    same shadow models share it); ``cache_key`` is what each shadow model's cache entry adds to
    its own (world, index, seed) description; ``run_id`` the short hash in every record.
    """

    setting: AuditSetting
    d_out: pd.DataFrame
    d_in: pd.DataFrame
    factory: PresetFactory
    featuriser: Any
    n_synth_rows: int | str
    effective_key: dict

    @property
    def cache_key(self) -> dict:
        return {"setting": self.effective_key}

    @property
    def run_id(self) -> str:
        return runner.config_hash(self.effective_key, namespace="audit-run", include_source=False)[:10]
