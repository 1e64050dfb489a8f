"""The audit archives (``ganev2025elusive`` §6.2, Figure 5 and its ablation at the paper's scale of
1,000 shadow models per world): which settings each one runs, and the runners that compute them
resumably through the archive store (:mod:`pategan_audit.archive_store`);
``python -m pategan_audit.archive <name>`` runs one.

``audit_querybased_large``
    Figure 5's Querybased game (worst-case dataset) at the ``large`` audit profile for the six
    presets and ``corrected``.
``audit_querybased_controlled_large``
    The same in the ``controlled`` channel (same synthetic size in both worlds, bounds fixed in
    advance): what the PATE mechanism itself leaks at the paper's scale.
``audit_groundhog_large``
    Figure 5b's GroundHog game (Cervical, target 397, the paper's 1,000-iteration cap) for the
    seven presets in the paper and the controlled channel, 1,000 shadow models per world,
    trained through the replica axis; saved after every setting and resumed across sessions.
``audit_querybased_fixed_size_large``
    The Querybased game with the same synthetic size in both worlds (the size channel closed,
    bounds still read from the data), seven presets, 1,000 per world; resumable per setting.
``audit_calibration_large``
    The calibration lines at 1,000 per world: a generator that releases its data, one that
    ignores it, and a constant one, in the paper's game and with equal output sizes.
``audit_calibration_channels_large``
    The calibration lines of GroundHog (release / ignore / read only the bounds) and the
    bounds-only generator in the Querybased game: what each side channel leaks on its own.
``audit_ablation_querybased_large`` / ``audit_ablation_groundhog_large``
    The ablation (each violation fixed alone, everything fixed, each O-finding fixed alone) for the
    six presets in each attack's ablation channel; resumable per setting. Querybased runs at 1,000
    shadow models per world (a setting takes minutes). GroundHog's 35 settings would take about an
    hour of CPU each at 1,000, so its archive runs at profile ``resolvable`` (200 per world, the
    paper's 1,000 iterations; :data:`ARCHIVE_PROFILES`): about 6 core-hours, and a fix that stops a
    perfect attack still moves ε_emp from the ceiling 3.05 to 0.
``audit_targets_large``
    The GroundHog target selection at the paper's scale: 64 candidates, 100 + 100 ``original``
    models each (1,000 iterations), resumable per pair of candidates.
``audit_corrected_large``
    ``corrected`` as it is now (teacher assignment exact under add/remove, fresh entropy unless
    seeded) in every channel of both attacks at 1,000 per world: the re-audit of the hardened
    preset (the other archives' ``corrected`` rows predate the add/remove assignment).
``audit_gnmax_large``
    ``gnmax`` in every channel of both attacks at 1,000 per world.
``audit_past_ceiling_querybased`` / ``audit_past_ceiling_groundhog``
    The channels :data:`PAST_CEILING_CELLS` names (archived ε_emp within :data:`CEILING_MARGIN` of
    the ceiling) with more test outputs per world, so that the ceiling rises above them.
``audit_alternatives_large``
    The marginal mechanisms of :data:`ALTERNATIVE_MECHANISMS` (:mod:`pategan_audit.alternatives`,
    needs the ``alternatives`` extra) in the Querybased game's controlled channel at 1,000 shadow
    models per world, beside the PATE-GANs' archived rows. GroundHog is not in it: one fit on
    Cervical's 686 rows takes a minute (PrivBayes) to a quarter of an hour (AIM) of wall-clock at
    300 inference iterations (``utility_alternatives_large``'s records), so 2,000 fits per
    mechanism are out of a CPU machine's reach.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import asdict
from typing import Any, Callable, Sequence

import pandas as pd

from . import audit as A
from . import targets as T
from ..alternatives import ALTERNATIVE_MECHANISMS, ALTERNATIVE_N_ITERS
from ..archive_store import accumulate, run_options
from ..implementations.many import resolve_device
from ..runner import resolve_jobs
from .calibration import BoundsOnlyFactory, IgnoreFactory, ReleaseFactory
from .featurisers import NaiveFeaturiser, QueryFeaturiser
from .alternative_settings import alternative_settings
from .profiles import ABLATION_CHANNELS, ABLATION_PRESETS, ALL_FINDINGS, AUDIT_PROFILES, get_profile
from .settings import PresetFactory, attack_data

ALL_PRESETS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected")
SETTING_COLUMNS = ("attack", "implementation", "channel", "variant")


def audit_channels(attack: str, channels: tuple[str, ...]) -> Callable[..., tuple[pd.DataFrame, dict]]:
    """One attack's game for the six presets and ``corrected`` in ``channels`` (``paper``: the
    paper's game; ``controlled``: same size in both worlds and public bounds); see
    :func:`audit_runs`."""
    return audit_runs(((attack, channels),), ALL_PRESETS)


#: cheapest presets first (measured GroundHog core-s per model, benchmarks/many_models.py), so that a
#: session that ends mid-run has saved the most settings
_COST_ORDER = ("borealis", "corrected", "gnmax", "smartnoise", "updated", "turing", "synthcity", "original")


def run_settings(settings: list, profile: Any, n_jobs: int | None, backend: str | None, *, done: pd.DataFrame | None,
                  save: Callable[[pd.DataFrame, dict], None] | None,
                  meta_now: Callable[[pd.DataFrame], dict], only: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """Run ``settings`` (in order) that ``done`` does not hold yet, saving after each one:
    the resumable loop of every audit archive. ``meta_now(records)`` describes the records so far;
    ``only``: run just the settings of these presets this time (the others stay to do)."""
    if only is not None:
        unknown = sorted(set(only) - {s.implementation for s in settings})
        if unknown:
            raise ValueError(f"--only {unknown}: not a preset of this archive; choose from "
                             f"{sorted({s.implementation for s in settings})}")

    parts = [done] if done is not None and not done.empty else []
    finished = set() if not parts else set(map(tuple, done[list(SETTING_COLUMNS)].astype(str).to_numpy()))
    todo = [s for s in settings if (s.attack, s.implementation, s.channel, s.variant) not in finished
            and (only is None or s.implementation in only)]
    return accumulate(parts, todo, lambda s: pd.DataFrame(A.run_setting(
        s, profile, options=run_options(n_jobs, backend, f"{s.attack}/{s.implementation}/{s.channel}/{s.variant}"))),
        save=save, meta_now=meta_now)



def settings_meta(profile: Any, settings: list, records: pd.DataFrame, what: str) -> dict:
    """The meta every audit archive shares: profile, settings, progress, ceilings, core seconds."""
    n_train, n_valid, n_test = profile.split
    core = float(records.groupby("run_id")["train_seconds"].first().sum()) if len(records) else 0.0
    ran = records.groupby(list(SETTING_COLUMNS)).ngroups if len(records) else 0
    return {"profile": profile.name, "profile_description": profile.description, "profile_knobs": asdict(profile),
            "settings": [s.key() for s in settings], "settings_done": ran, "complete": ran == len(settings),
            "runs": (f"{profile.n_per_world:,} shadow models per world and preset ({n_train}/{n_valid}/{n_test} "
                     f"train/validation/test), {ran} of {len(settings)} settings ({what})"),
            "ceiling_clopper_pearson": profile.ceiling("clopper_pearson"),
            "ceiling_bayesian": profile.ceiling("bayesian"), "core_seconds_measured": core}


def audit_runs(games: tuple[tuple[str, tuple[str, ...]], ...], presets: tuple[str, ...], *,
                cells: tuple[tuple[str, str], ...] | None = None,
                rule: str | None = None) -> Callable[..., tuple[pd.DataFrame, dict]]:
    """The audit settings of ``presets`` in each (attack, channels) of ``games``: the paper's own
    channel first (Figure 5's cells), then the others, each cheapest preset first. ``cells``: only
    these (implementation, channel) pairs, in this order; ``rule``: how they were chosen (meta).

    Resumable per setting: ``done`` holds the records of settings finished in an earlier session
    (read back from the archive folder, where :func:`run_archive` writes them after every
    setting), which are kept and not recomputed."""

    def run(profile_name: str, n_jobs: int | None, backend: str | None, *, done: pd.DataFrame | None = None,
            save: Callable[[pd.DataFrame, dict], None] | None = None,
            only: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
        profile = get_profile(profile_name)
        order = sorted(presets, key=_COST_ORDER.index)
        settings = [s for attack, channels in games
                    for s in A.make_settings(profile, attacks=(attack,), implementations=order, channels=channels)]
        settings.sort(key=lambda s: (s.channel != "paper", order.index(s.implementation)))
        if cells is not None:
            settings = sorted((s for s in settings if (s.implementation, s.channel) in cells),
                              key=lambda s: cells.index((s.implementation, s.channel)))
        attacks = [a for a, _ in games]
        channels = sorted({c for _, cs in games for c in cs}, key=list(("paper", "fixed_size", "controlled")).index)
        what = (f"{attacks[0]}: " + ", ".join(f"{i} {c}" for i, c in cells) if cells is not None else
                f"{len(presets)} presets x {', '.join(channels)} channel" if len(games) == 1 else
                f"{', '.join(presets)}; " + "; ".join(f"{a}: {', '.join(cs)}" for a, cs in games))

        def meta_now(records: pd.DataFrame) -> dict:
            return {**settings_meta(profile, settings, records, what),
                    "attack": attacks[0] if len(attacks) == 1 else attacks, "channels": channels,
                    **({"cells": [list(c) for c in cells], "cells_rule": rule} if cells is not None else {})}

        return run_settings(settings, profile, n_jobs, backend, done=done, save=save, meta_now=meta_now, only=only)

    return run


#: how close to the ceiling an archived ε_emp must be for its channel to be audited past it
CEILING_MARGIN = 0.2
#: the archives (1,000 shadow models per world) whose channels :data:`PAST_CEILING_CELLS` is read from
CEILING_SOURCES = ("audit_querybased_fixed_size_large", "audit_querybased_controlled_large", "audit_groundhog_large",
                   "audit_corrected_large", "audit_gnmax_large")
#: (implementation, channel) per attack where the archived Clopper-Pearson ε_emp is within
#: :data:`CEILING_MARGIN` of its ceiling, the paper's own Querybased game excluded (there a constant
#: generator reaches the ceiling through the output size alone, so a higher ceiling measures
#: nothing): the audits past the ceiling, cheapest first by the archived training seconds.
#: :func:`pategan_audit.auditing.summaries.near_ceiling` applied to :data:`CEILING_SOURCES` gives the
#: same set (tests/test_archive.py).
PAST_CEILING_CELLS = {
    "querybased": (("original", "fixed_size"), ("turing", "fixed_size"), ("smartnoise", "fixed_size"),
                   ("synthcity", "fixed_size"), ("synthcity", "controlled")),
    "groundhog": (("borealis", "paper"), ("smartnoise", "paper"), ("updated", "paper"), ("synthcity", "controlled"),
                  ("synthcity", "paper")),
}


def past_ceiling(attack: str) -> Callable[..., tuple[pd.DataFrame, dict]]:
    """The settings of :data:`PAST_CEILING_CELLS` for ``attack`` at the profile's scale (``ceiling10k``:
    10,000 test outputs per world; ``ceiling2k``: 2,000, GroundHog on CPU), the attack trained and
    validated on the same first 400 / 200 models per world as the archived 1,000-per-world run
    (same seeds), so only the test split grows. Resumable per setting."""
    cells = PAST_CEILING_CELLS[attack]
    return audit_runs(((attack, tuple(dict.fromkeys(c for _, c in cells))),), tuple(dict.fromkeys(i for i, _ in cells)),
                       cells=cells, rule=(f"archived Clopper-Pearson eps_emp within {CEILING_MARGIN} of its ceiling in "
                                          f"{', '.join(CEILING_SOURCES)}; the paper's own Querybased game excluded"))


def ablation(attack: str) -> Callable[..., tuple[pd.DataFrame, dict]]:
    """The ablation of ``attack`` (one violation fixed at a time, everything fixed, each O-finding
    fixed alone; ``auditing.audit.ablation_settings``) for the six presets at the profile's scale,
    in the attack's ablation channel (Querybased: equal output sizes, so the game's size channel
    does not mask what a fix changes). The profile's own iteration caps apply, so each preset's
    "as benchmarked" row is the archived Figure 5 setting. Resumable per setting."""

    def run(profile_name: str, n_jobs: int | None, backend: str | None, *, done: pd.DataFrame | None = None,
            save: Callable[[pd.DataFrame, dict], None] | None = None,
            only: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
        profile = dataclasses.replace(get_profile(profile_name), ablation_attacks=(attack,),
                                      ablation_findings=tuple((attack, i, ALL_FINDINGS) for i in ABLATION_PRESETS))
        order = sorted(ABLATION_PRESETS, key=_COST_ORDER.index)
        settings = A.ablation_settings(profile, implementations=order, attacks=(attack,))

        def meta_now(records: pd.DataFrame) -> dict:
            return {**settings_meta(profile, settings, records, f"ablation of {len(order)} presets, "
                                                                  f"{ABLATION_CHANNELS[attack]} channel"),
                    "attack": attack, "channels": [ABLATION_CHANNELS[attack]]}

        return run_settings(settings, profile, n_jobs, backend, done=done, save=save, meta_now=meta_now, only=only)

    return run


def targets(profile_name: str, n_jobs: int | None, backend: str | None, *, done: pd.DataFrame | None = None,
             save: Callable[[pd.DataFrame, dict], None] | None = None,
             only: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """The GroundHog target selection (implementation notes §audit.target) at the profile's scale:
    the ``target_candidates`` most isolated rows of the Cervical training split, each with
    ``target_models`` ``original`` models per world (k = 5, ``target_iterations`` iterations)
    scored by their critic on the candidate; the target is the candidate with the largest AUC.
    Resumable per pair of candidates (one row per candidate in the records)."""
    if only is not None:
        raise ValueError("--only selects presets of the audit archives; this archive has no per-preset settings")

    profile = get_profile(profile_name)
    train = attack_data("groundhog")[1]
    ranked = T.rank_candidates(train, n_candidates=profile.target_candidates)
    factory = PresetFactory("original", epsilon=1.0, overrides={"num_teachers": 5, "max_iter": profile.target_iterations})
    parts = [done] if done is not None and not done.empty else []
    finished = set() if not parts else set(done["row"].astype(int))
    todo = [int(r) for r in ranked["row"] if int(r) not in finished]

    def meta_now(records: pd.DataFrame) -> dict:
        ran = len(records)
        best = records.loc[records["auc"].idxmax()] if ran else None
        return {"profile": profile.name, "profile_description": profile.description, "profile_knobs": asdict(profile),
                "candidates": [int(r) for r in ranked["row"]], "candidates_done": ran,
                "complete": ran == len(ranked), "epsilon": 1.0, "delta": 1e-5, "generator": "original, k = 5",
                "target": None if best is None else int(best["row"]),
                "target_auc": None if best is None else float(best["auc"]),
                "runs": (f"{profile.target_models} + {profile.target_models} original models per candidate "
                         f"({profile.target_iterations} iterations), {ran} of {len(ranked)} candidates"),
                # wall seconds x workers: an upper bound of the core seconds (the fits run in the workers);
                # rows from before the workers column count this run's workers
                "core_seconds_measured": float((records["wall_seconds"] * workers(records)).sum()) if ran else 0.0}

    def workers(records: pd.DataFrame) -> pd.Series:
        given = records["workers"] if "workers" in records else pd.Series(float("nan"), index=records.index)
        return given.fillna(runner_jobs)

    runner_jobs = resolve_jobs(n_jobs)
    # where each candidate's models were fitted (RunOptions.device): one archive may mix devices
    # across sessions, and the records say which candidate came from which
    device = str(resolve_device())
    # each candidate is two (candidate, world) chunks: half as many candidates per step as workers
    # keeps every worker busy (two at least), and a stop loses at most one step
    step = max(2, -(-runner_jobs // 2))

    def candidates(rows: list[int]) -> pd.DataFrame:
        t0 = time.perf_counter()
        selection = T.select_target(train, factory, n_candidates=profile.target_candidates, rows=rows,
                                    n_models=profile.target_models, seed=0,
                                    options=run_options(n_jobs, backend, f"targets {rows}"))
        return selection.candidates.assign(n_models=profile.target_models,
                                           wall_seconds=(time.perf_counter() - t0) / len(rows), workers=runner_jobs,
                                           device=device)

    return accumulate(parts, [todo[i:i + step] for i in range(0, len(todo), step)], candidates, save=save,
                      meta_now=meta_now)


def calibration(profile_name: str, n_jobs: int | None, backend: str | None) -> tuple[pd.DataFrame, dict]:
    """The calibration lines of the Querybased game (:func:`~pategan_audit.auditing.audit.run_calibration`):
    releasing the training data, ignoring it (uniform rows) and a constant output, each in the
    paper's game (4 vs 5 rows) and with the same size in both worlds."""
    profile = get_profile(profile_name)
    records = A.run_calibration(profile, options=run_options(n_jobs, backend))
    return records, calibration_meta(profile, records, ["implementation", "channel"],
                                     ", 3 reference generators x (paper, fixed_size) channel")


def calibration_meta(profile, records: pd.DataFrame, run_keys: list[str], what: str) -> dict:
    """Meta of a calibration archive: the profile, what ran, the ceilings and the core seconds
    (one ``train_seconds`` per run, a run being one combination of ``run_keys``)."""
    n_train, n_valid, n_test = profile.split
    return {"profile": profile.name, "profile_description": profile.description, "profile_knobs": asdict(profile),
            "runs": f"{profile.n_per_world:,} outputs per world ({n_train}/{n_valid}/{n_test} train/validation/test){what}",
            "ceiling_clopper_pearson": profile.ceiling("clopper_pearson"),
            "ceiling_bayesian": profile.ceiling("bayesian"),
            "core_seconds_measured": float(records.groupby(run_keys)["train_seconds"].first().sum())}



def calibration_channel_runs() -> list[tuple[str, str, str, object]]:
    """(attack, generator name, channel, factory) of :func:`calibration_channels`."""
    return [("groundhog", "release training data", "paper", ReleaseFactory()),
            ("groundhog", "ignore training data", "paper", IgnoreFactory()),
            ("groundhog", "read only the bounds", "paper", BoundsOnlyFactory()),
            ("querybased", "read only the bounds", "paper", BoundsOnlyFactory()),
            ("querybased", "read only the bounds", "fixed_size", BoundsOnlyFactory()),
            # the null generator in the controlled channels (equal sizes, public bounds it never reads)
            ("groundhog", "ignore training data", "controlled", IgnoreFactory()),
            ("querybased", "ignore training data", "controlled", IgnoreFactory())]


def calibration_channels(profile_name: str, n_jobs: int | None, backend: str | None) -> tuple[pd.DataFrame, dict]:
    """The calibration lines the Querybased archive lacks: GroundHog (Cervical, target 397, 686
    output rows in both worlds) against a generator that releases its data, one that ignores it
    and one that reads only each column's min and max (the bounds channel alone); and the
    bounds-only generator in the Querybased game, paper sizes and equal sizes; and the null generator
    (ignores its data) in both games' controlled channel (equal sizes; public bounds it never reads),
    the calibration line of that channel."""
    profile = get_profile(profile_name)
    rows = []
    for attack, name, channel, factory in calibration_channel_runs():
        d_out, d_in = attack_data(attack)
        n_rows = "train_size" if (attack == "querybased" and channel == "paper") else len(d_in)
        featurise = NaiveFeaturiser() if attack == "groundhog" else QueryFeaturiser()
        recs = A.audit_generator(factory, d_out, d_in, profile=profile, featurise=featurise, n_synth_rows=n_rows,
                                 options=run_options(n_jobs, backend, f"calibration {attack}/{name}/{channel}"))
        rows.extend({"attack": attack, "implementation": name, "channel": channel, **r} for r in recs)
    records = pd.DataFrame(rows)
    return records, calibration_meta(profile, records, ["attack", "implementation", "channel"],
                                     "; GroundHog x 3 reference generators, Querybased x bounds-only x (paper, fixed_size), "
                                     "the null generator in both games' controlled channel")


def alternatives(profile_name: str, n_jobs: int | None, backend: str | None, *, done: pd.DataFrame | None = None,
                 save: Callable[[pd.DataFrame, dict], None] | None = None,
                 only: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """:data:`ALTERNATIVE_MECHANISMS` in the Querybased game's controlled channel
    (:func:`~pategan_audit.auditing.alternative_settings.alternative_settings`); resumable per setting."""
    profile = get_profile(profile_name)
    settings = alternative_settings(profile, mechanisms=ALTERNATIVE_MECHANISMS, attacks=("querybased",),
                                    n_iters=ALTERNATIVE_N_ITERS)
    what = f"{', '.join(ALTERNATIVE_MECHANISMS)}; querybased: controlled; n_iters {ALTERNATIVE_N_ITERS}"

    def meta_now(records: pd.DataFrame) -> dict:
        return {**settings_meta(profile, settings, records, what), "attack": "querybased", "channels": ["controlled"],
                "mechanisms": list(ALTERNATIVE_MECHANISMS), "n_iters": ALTERNATIVE_N_ITERS}

    return run_settings(settings, profile, n_jobs, backend, done=done, save=save, meta_now=meta_now, only=only)


def audit_querybased(channel: str) -> Callable[..., tuple[pd.DataFrame, dict]]:
    return audit_channels("querybased", (channel,))


#: name -> function(profile, n_jobs, backend[, *, done, save, only]) returning (records, meta), in
#: the order the archives' page lists them
ARCHIVES: dict[str, Callable[..., tuple[pd.DataFrame, dict]]] = {
    "audit_querybased_large": audit_querybased("paper"),
    "audit_querybased_controlled_large": audit_querybased("controlled"),
    "audit_groundhog_large": audit_channels("groundhog", ("paper", "controlled")),
    "audit_querybased_fixed_size_large": audit_channels("querybased", ("fixed_size",)),
    "audit_calibration_large": calibration,
    "audit_calibration_channels_large": calibration_channels,
    "audit_ablation_querybased_large": ablation("querybased"),
    "audit_ablation_groundhog_large": ablation("groundhog"),
    "audit_targets_large": targets,
    "audit_corrected_large": audit_runs((("querybased", ("paper", "fixed_size", "controlled")),
                                         ("groundhog", ("paper", "controlled"))), ("corrected",)),
    "audit_gnmax_large": audit_runs((("querybased", ("paper", "fixed_size", "controlled")),
                                     ("groundhog", ("paper", "controlled"))), ("gnmax",)),
    "audit_past_ceiling_querybased": past_ceiling("querybased"),
    "audit_past_ceiling_groundhog": past_ceiling("groundhog"),
    "audit_alternatives_large": alternatives,
}
#: the audit archives that save after every setting (or pair of candidates) and resume from what an
#: earlier session saved; the calibration archives run whole
RESUMABLE = tuple(n for n in ARCHIVES if n not in ("audit_calibration_large", "audit_calibration_channels_large"))
#: the profiles an audit archive can run at
PROFILES = AUDIT_PROFILES
#: archives committed at another profile than ``large``: the GroundHog ablation at 200 shadow models
#: per world (``resolvable``: a fix that stops a perfect attack is resolved, ceiling 3.05 against 0), a
#: fifth of the ~35 core-hours it would take at the paper's 1,000; the audits past the ceiling at
#: 10,000 test outputs per world (Querybased) and 2,000 (GroundHog, the CPU's reach: about 8
#: core-hours, synthcity most of it)
ARCHIVE_PROFILES = {"audit_ablation_groundhog_large": "resolvable", "audit_past_ceiling_querybased": "ceiling10k",
                    "audit_past_ceiling_groundhog": "ceiling2k"}
