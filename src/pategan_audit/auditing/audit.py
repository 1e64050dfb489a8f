"""Run audit settings end to end: game → random-forest attack → ε bounds → tidy records.

One record per (setting, bound method) in the schema of implementation notes §records.schema: implementation,
attack, channel, variant, AUC, ε_emp, threshold, direction, validation and test counts, plus
the profile knobs (shadow models per world, split, iterations) so every number says how it was
made, and three bookkeeping columns:

* ``run_id`` — hash of what the setting actually runs (:meth:`AuditSetting.effective_key`);
  settings that coincide (GroundHog ``fixed_size`` = ``paper``; the corrected preset's
  ``fixed_size`` = ``controlled``; an ablation's bounds fix = the ``controlled`` channel) share it
  and are trained once (same cache entries);
* ``outputs_digest`` — hash of all featurised shadow-model outputs: equal digests mean the
  switch did not change a single synthetic table (e.g. accountant fixes masked at λ ≤ 1e-3);
* ``train_seconds`` — core-seconds the shadow models took when they were computed.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from .. import runner
from .attacks import random_forest_attack
from .calibration import IgnoreFactory, ReleaseFactory
from .game import run_game
from .profiles import ABLATION_CHANNELS, ABLATION_PRESETS, AuditProfile
from .settings import GROUNDHOG_TARGET, AuditSetting, attack_data

__all__ = ["run_setting", "run_settings", "make_settings", "run_calibration", "CALIBRATION_GENERATORS",
           "audit_generator", "ablation_variants",
           "ablation_noops", "ablation_settings", "ABLATION_PRESETS", "FINDING_SUFFIX"]

#: Label suffix of ablation rows that switch off an O-finding (not a violation of Table 2).
FINDING_SUFFIX = " (beyond Table 2)"


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()[:12]


@runner.with_options(n_jobs=1)
def audit_generator(
    make_generator: Callable[[int], Any],
    d_out: pd.DataFrame,
    d_in: pd.DataFrame,
    *,
    profile: AuditProfile,
    featurise: Callable,
    n_synth_rows: int | str = "train_size",
    delta: float = 1e-5,
    seed: int = 0,
    options: runner.RunOptions | None = None,
    cache_namespace: str | None = "audit",
    cache_key: dict | None = None,
    batched: bool = True,
) -> list[dict]:
    """Audit any ``make_generator`` on (D′, D): one record per bound method of the profile
    (``ganev2025elusive`` §6.2: the distinguishing game, then the random-forest attack).

    options: how it runs (:class:`~pategan_audit.runner.RunOptions`; default: the options in
    force with one in-process worker).
    batched: train a preset's shadow models in chunks through ``fit_many`` where it has a
    batched step (:func:`~pategan_audit.auditing.game.run_game`); False: one by one."""
    game = run_game(make_generator, d_out, d_in, n_per_world=profile.n_per_world, n_synth_rows=n_synth_rows,
                    featurise=featurise, seed=seed, options=options, cache_namespace=cache_namespace,
                    cache_key=cache_key, batched=batched)
    n_train, n_valid, n_test = profile.split
    start = time.perf_counter()
    results = random_forest_attack(features_out=game.features_out, features_in=game.features_in, n_train=n_train,
                                   n_valid=n_valid, seed=seed, methods=profile.methods, alpha=profile.alpha, delta=delta)
    base = {"profile": profile.name, "n_per_world": profile.n_per_world, "n_train": n_train, "n_valid": n_valid,
            "n_test": n_test, "n_synth_rows_out": game.n_synth_rows["out"], "n_synth_rows_in": game.n_synth_rows["in"],
            "seed": seed, "outputs_digest": _digest(game.features_out, game.features_in),
            "train_seconds": round(game.train_seconds, 3), "attack_seconds": round(time.perf_counter() - start, 3)}
    return [{**base, **res.as_record()} for res in results.values()]


@runner.with_options()
def run_setting(
    setting: AuditSetting,
    profile: AuditProfile,
    *,
    seed: int = 0,
    options: runner.RunOptions | None = None,
    cache_namespace: str | None = "audit",
    batched: bool = True,
) -> list[dict]:
    """Audit one :class:`AuditSetting` at the scale of ``profile``.

    The setting is resolved once (:meth:`AuditSetting.resolve`: worlds, factory, featuriser,
    synthetic size, effective key). Its shadow models are cached under the *effective* key, so
    settings that run the same thing under different labels are trained once. ``options``: see
    :func:`audit_generator` (default: the options in force with all CPUs; with ``progress=True`` the bar
    is labelled attack/implementation/channel/variant). ``batched``: see
    :func:`audit_generator` (the cache entries are the same either way).
    """
    expected = profile.iterations(setting.attack, setting.implementation)
    if setting.iterations != expected:
        raise ValueError(
            f"setting has {setting.iterations} iterations but profile {profile.name!r} uses {expected} for "
            f"{setting.implementation} on {setting.attack}; build settings with make_settings()/ablation_settings()"
        )
    run = setting.resolve()
    label = options.label(f"{setting.attack}/{setting.implementation}/{setting.channel}/{setting.variant}")
    records = audit_generator(
        run.factory, run.d_out, run.d_in, profile=profile, featurise=run.featuriser, n_synth_rows=run.n_synth_rows,
        delta=setting.delta, seed=seed, options=replace(options, progress=label or False),
        cache_namespace=cache_namespace, cache_key=run.cache_key, batched=batched,
    )
    key = {k: v for k, v in setting.key().items() if k != "extra_overrides"}
    return [{**key, "run_id": run.run_id, **rec} for rec in records]


@runner.with_options(progress=True)
def run_settings(settings: Iterable[AuditSetting], profile: AuditProfile, *, seed: int = 0,
                 options: runner.RunOptions | None = None, cache_namespace: str | None = "audit",
                 batched: bool = True) -> pd.DataFrame:
    """:func:`run_setting` for each setting; a long table (one row per setting and method).

    options: as :func:`run_setting` (default: the options in force with all CPUs, a progress bar
    per setting)."""
    rows: list[dict] = []
    for s in settings:
        rows.extend(run_setting(s, profile, seed=seed, options=options, cache_namespace=cache_namespace, batched=batched))
    return pd.DataFrame(rows)


def make_settings(
    profile: AuditProfile,
    *,
    attacks: Iterable[str],
    implementations: Iterable[str],
    channels: Iterable[str] = ("paper",),
    epsilon: float = 1.0,
    target: int = GROUNDHOG_TARGET,
) -> list[AuditSetting]:
    """Every (attack, implementation, channel) setting at the profile's iteration counts."""
    return [AuditSetting(attack=a, implementation=i, channel=c, iterations=profile.iterations(a, i), epsilon=epsilon,
                         target=target)
            for a in attacks for i in implementations for c in channels]


#: Reference generators of :func:`run_calibration`: (name, factory).
CALIBRATION_GENERATORS = (
    ("release training data", ReleaseFactory()),
    ("ignore training data", IgnoreFactory()),
    ("constant (0,0,0)", IgnoreFactory(support=(0.0,))),
)


@runner.with_options()
def run_calibration(profile: AuditProfile, *, seed: int = 0, options: runner.RunOptions | None = None,
                    cache_namespace: str | None = "audit") -> pd.DataFrame:
    """Audit the reference generators on the worst case, with the paper's sizes (4 vs 5 rows)
    and the same size (5 rows): releasing the training data must reach the ceiling; ignoring it
    (uniform rows) must give ≈ 0 once the size is fixed; a constant (0,0,0) output — perfectly
    private — isolates the size channel: the count of (0,0,0) is 4 vs 5 in the paper's game.
    ``options``: as :func:`run_setting` (default: the options in force with all CPUs)."""
    d_out, d_in = attack_data("querybased")
    from .featurisers import QueryFeaturiser

    rows = []
    for name, factory in CALIBRATION_GENERATORS:
        for channel, n_rows in (("paper", "train_size"), ("fixed_size", len(d_in))):
            recs = audit_generator(factory, d_out, d_in, profile=profile, featurise=QueryFeaturiser(),
                                   n_synth_rows=n_rows, seed=seed, options=options, cache_namespace=cache_namespace)
            rows.extend({"attack": "querybased", "implementation": name, "channel": channel, **r} for r in recs)
    return pd.DataFrame(rows)


def _is_noop(name: str, overrides: dict) -> bool:
    """True when every overridden field already has that value in the preset as benchmarked."""
    from ..implementations import get_config_class

    config = get_config_class(name)()
    return all(getattr(config, k) == v for k, v in overrides.items())


def ablation_noops(name: str, *, findings: Iterable[str] = ()) -> list[str]:
    """Catalogue ids of ``name`` whose fix is already the benchmark's default (e.g. V19: the
    harness runs original unconditionally), so fixing them changes nothing."""
    from ..implementations import violations

    ids = [v.id for v in violations.violations_for(name, kinds=("privacy", "bug")) if v.switchable]
    ids += [f for f in findings if f in {v.id for v in violations.violations_for(name, kinds=("finding",)) if v.switchable}]
    return [vid for vid in ids if _is_noop(name, violations.fix_overrides(name, [vid]))]


def ablation_variants(name: str, *, findings: Iterable[str] = ()) -> list[tuple[str, dict]]:
    """(label, overrides) pairs: as benchmarked, each switchable privacy violation fixed alone,
    everything switchable fixed (privacy violations and bugs, ``all_fixed_overrides``), then each
    listed O-finding fixed alone (label suffix :data:`FINDING_SUFFIX`).

    Reads the catalogue of ``pategan_audit.implementations.violations``; violations that cannot
    be switched in place (V1, V2, V14, V16) are fixed only by the ``corrected`` preset. Fixes
    that are already the benchmark's default (:func:`ablation_noops`) and duplicates are left
    out. A fix to ``bounds="public"`` gets the setting's public bounds (:class:`AuditSetting`).
    """
    from ..implementations import violations

    applicable = {v.id for v in violations.violations_for(name, kinds=("finding",)) if v.switchable}
    unknown = [f for f in findings if f not in applicable]
    if unknown:
        raise ValueError(f"findings {unknown} are not switchable O-findings of {name!r}; choose from {sorted(applicable)}")
    ids = [v.id for v in violations.violations_for(name, kinds=("privacy",)) if v.switchable]
    candidates: list[tuple[str, dict]] = [(f"{vid} fixed", violations.fix_overrides(name, [vid])) for vid in ids]
    candidates.append(("all fixed", violations.all_fixed_overrides(name)))
    candidates += [(f"{fid} fixed{FINDING_SUFFIX}", violations.fix_overrides(name, [fid])) for fid in findings]
    variants: list[tuple[str, dict]] = [("as benchmarked", {})]
    for label, overrides in candidates:
        if _is_noop(name, overrides) or any(overrides == ov for _, ov in variants):
            continue
        variants.append((label, overrides))
    return variants


def ablation_settings(
    profile: AuditProfile,
    *,
    implementations: Iterable[str] | None = None,
    attacks: Iterable[str] | None = None,
    epsilon: float = 1.0,
    target: int = GROUNDHOG_TARGET,
) -> list[AuditSetting]:
    """The ablation's settings on the profile's ``ablation_attacks`` and
    ``ablation_implementations`` (or the arguments), each attack in its
    :data:`~pategan_audit.auditing.profiles.ABLATION_CHANNELS` channel, with the profile's
    variant limits and O-findings."""
    implementations = profile.ablation_implementations if implementations is None else tuple(implementations)
    attacks = profile.ablation_attacks if attacks is None else tuple(attacks)
    out = []
    for a in attacks:
        for name in implementations:
            kept = profile.ablation_variants_kept(a, name)
            for label, overrides in ablation_variants(name, findings=profile.ablation_finding_ids(a, name)):
                if kept is not None and label not in kept:
                    continue
                out.append(AuditSetting(attack=a, implementation=name, channel=ABLATION_CHANNELS[a],
                                        iterations=profile.iterations(a, name), variant=label,
                                        extra_overrides=overrides, epsilon=epsilon, target=target))
    return out
