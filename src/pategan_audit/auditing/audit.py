"""Run audit settings end to end: game → random-forest attack → ε bounds → tidy records.

One record per (setting, bound method) in the H schema of the protocols spec: implementation,
attack, channel, variant, AUC, ε_emp, threshold, direction, validation and test counts, plus
the profile knobs (shadow models per world, split) so every number says how it was made.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import pandas as pd

from .attacks import random_forest_attack
from .calibration import IgnoreFactory, ReleaseFactory
from .game import run_game
from .profiles import ABLATION_PRESETS, AuditProfile
from .settings import GROUNDHOG_TARGET, AuditSetting, attack_data

__all__ = ["run_setting", "run_settings", "make_settings", "run_calibration", "audit_generator", "ablation_variants", "ablation_settings", "ABLATION_PRESETS"]


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
    n_jobs: int | None = 1,
    backend: str | None = None,
    cache_namespace: str | None = "audit",
    cache_key: dict | None = None,
    cache_dir: str | None = None,
    desc: str | None = None,
) -> list[dict]:
    """Audit any ``make_generator`` on (D′, D): one record per bound method of the profile."""
    game = run_game(make_generator, d_out, d_in, n_per_world=profile.n_per_world, n_synth_rows=n_synth_rows,
                    featurise=featurise, seed=seed, n_jobs=n_jobs, backend=backend, cache_namespace=cache_namespace,
                    cache_key=cache_key, cache_dir=cache_dir, desc=desc)
    n_train, n_valid, n_test = profile.split
    results = random_forest_attack(features_out=game.features_out, features_in=game.features_in, n_train=n_train,
                                   n_valid=n_valid, seed=seed, methods=profile.methods, alpha=profile.alpha, delta=delta)
    base = {"profile": profile.name, "n_per_world": profile.n_per_world, "n_train": n_train, "n_valid": n_valid,
            "n_test": n_test, "n_synth_rows_out": game.n_synth_rows["out"], "n_synth_rows_in": game.n_synth_rows["in"],
            "seed": seed}
    return [{**base, **res.as_record()} for res in results.values()]


def run_setting(
    setting: AuditSetting,
    profile: AuditProfile,
    *,
    seed: int = 0,
    n_jobs: int | None = None,
    backend: str | None = None,
    cache_namespace: str | None = "audit",
    cache_dir: str | None = None,
    desc: str | None = None,
) -> list[dict]:
    """Audit one :class:`AuditSetting` at the scale of ``profile``."""
    if setting.iterations != profile.iterations(setting.attack):
        raise ValueError(
            f"setting has {setting.iterations} iterations but profile {profile.name!r} uses "
            f"{profile.iterations(setting.attack)} for {setting.attack}; build settings with make_settings()"
        )
    d_out, d_in = setting.data()
    records = audit_generator(
        setting.factory(d_out), d_out, d_in, profile=profile, featurise=setting.featuriser(),
        n_synth_rows=setting.n_synth_rows(d_out, d_in), delta=setting.delta, seed=seed, n_jobs=n_jobs,
        backend=backend, cache_namespace=cache_namespace, cache_key={"setting": setting.key()}, cache_dir=cache_dir,
        desc=desc,
    )
    key = {k: v for k, v in setting.key().items() if k != "extra_overrides"}
    return [{**key, **rec} for rec in records]


def run_settings(settings: Iterable[AuditSetting], profile: AuditProfile, *, progress: bool = True, **kwargs) -> pd.DataFrame:
    """:func:`run_setting` for each setting; a long table (one row per setting and method)."""
    rows: list[dict] = []
    for s in settings:
        label = f"{s.attack}/{s.implementation}/{s.channel}/{s.variant}" if progress else None
        rows.extend(run_setting(s, profile, desc=label, **kwargs))
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
    return [AuditSetting(attack=a, implementation=i, channel=c, iterations=profile.iterations(a), epsilon=epsilon,
                         target=target)
            for a in attacks for i in implementations for c in channels]


def run_calibration(profile: AuditProfile, *, seed: int = 0, n_jobs: int | None = None, **kwargs) -> pd.DataFrame:
    """Audit the two calibration generators on the worst case, both channels: releasing the
    training data must reach the ceiling (paper channel), ignoring it must give ≈ 0."""
    d_out, d_in = attack_data("querybased")
    from .featurisers import QueryFeaturiser

    rows = []
    for name, factory in (("release training data", ReleaseFactory()), ("ignore training data", IgnoreFactory())):
        for channel, n_rows in (("paper", "train_size"), ("controlled", len(d_in))):
            recs = audit_generator(factory, d_out, d_in, profile=profile, featurise=QueryFeaturiser(),
                                   n_synth_rows=n_rows, seed=seed, n_jobs=n_jobs, **kwargs)
            rows.extend({"attack": "querybased", "implementation": name, "channel": channel, **r} for r in recs)
    return pd.DataFrame(rows)


def ablation_variants(name: str) -> list[tuple[str, dict]]:
    """(label, overrides) pairs: as benchmarked, each switchable privacy violation fixed alone,
    and everything switchable fixed (privacy violations and bugs, ``all_fixed_overrides``).

    Reads the catalogue of ``pategan_audit.implementations.violations``; violations that cannot
    be switched in place (V1, V2, V14, V16) are fixed only by the ``corrected`` preset.
    A fix to ``bounds="public"`` gets the setting's public bounds (:class:`AuditSetting`).
    """
    from ..implementations import violations

    ids = [v.id for v in violations.violations_for(name, kinds=("privacy",)) if v.switchable]
    variants: list[tuple[str, dict]] = [("as benchmarked", {})]
    variants += [(f"{vid} fixed", violations.fix_overrides(name, [vid])) for vid in ids]
    everything = violations.all_fixed_overrides(name)
    if all(everything != ov for _, ov in variants):
        variants.append(("all fixed", everything))
    return variants


def ablation_settings(
    profile: AuditProfile,
    *,
    implementations: Iterable[str] | None = None,
    epsilon: float = 1.0,
    target: int = GROUNDHOG_TARGET,
) -> list[AuditSetting]:
    """The ablation's settings (paper channel) on the profile's ``ablation_attacks`` and
    ``ablation_implementations`` (or ``implementations``)."""
    implementations = profile.ablation_implementations if implementations is None else tuple(implementations)
    return [AuditSetting(attack=a, implementation=name, channel="paper", iterations=profile.iterations(a),
                         variant=label, extra_overrides=overrides, epsilon=epsilon, target=target)
            for a in profile.ablation_attacks for name in implementations for label, overrides in ablation_variants(name)]
