"""The violation ablation (beyond ``ganev2025elusive`` §6.2; its violations are the paper's
Table 2): each switchable violation of a preset fixed alone, then all together, audited in
:data:`~pategan_audit.auditing.ABLATION_CHANNELS`; the table of both bounds, one figure per
attack, the fixes already in the benchmark, and for every variant whose released tables equal
the preset's as benchmarked the reason, checked in this run where a check applies.
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd

from ..plotting.auditing import plot_ablation
from ...auditing.audit import ablation_noops, ablation_settings, run_settings
from ...auditing.diagnostics import encoder_categories, student_labels, vote_unanimity
from ...auditing.profiles import ABLATION_CHANNELS
from ...auditing.settings import AuditSetting
from ...auditing.summaries import ablation_table
from ..blocks import Block, SaveFigure, SaveTable, ShowFigure, ShowTable, Text
from .context import AuditPage
from .diagnostics import rows_still

__all__ = ["ACCOUNTANT_REASON", "BOUNDS_REASON", "CATEGORIES_REASON", "ablation_view", "ablation_caption", "noop_text",
           "ablation", "overrides_of", "coincidence_reason", "coincidence_notes", "coincidences"]

ACCOUNTANT_REASON = ("the accountant fixes (V7–V9) change only ε̂, and at λ ≤ 10⁻³ the data-independent term "
                     "2λ²l(l+1) is the minimum for every vote and moment, so every accountant — buggy or not — "
                     "charges the same (implementation notes §common.small-lambda): ε̂, the stopping "
                     "iteration and therefore every released table are unchanged")
BOUNDS_REASON = ("the bounds fix changes nothing here: the preset's data-derived scaling of a constant 0 column (out "
                 "world) is scale 1, offset 0 — exactly what the public bounds {0, 1} give — and in the in world the "
                 "data bounds *are* {0, 1}")
CATEGORIES_REASON = ("the bounds fix replaces only the clip bounds of continuous columns; every worst-case column is "
                     "one-hot encoded over the categories seen in the data, which stay data-derived (table 'synthcity's "
                     "categories' above), so the out world still knows only the value 0")


def ablation_view(abl_cp: pd.DataFrame, abl_bayes: pd.DataFrame) -> pd.DataFrame:
    """The Clopper-Pearson ablation table with the Bayesian ε_emp beside it."""
    view = abl_cp.rename(columns={"ε_emp": "ε_emp CP", "Δε vs as benchmarked": "Δε CP"})
    view.insert(2, "ε_emp Bayesian", abl_bayes["ε_emp"])
    return view


def ablation_caption(page: AuditPage, attacks, implementations) -> str:
    """What the ablation ran: its channels, the page's runs, its cost reductions and O-findings."""
    reductions = page.profile.reductions()
    findings = "; ".join(f"{impl} {', '.join(ids)} on {a}" for a, impl, ids in page.profile.ablation_findings
                         if a in attacks and impl in implementations)
    return (f"Ablation, {', '.join(f'{a} in the {ABLATION_CHANNELS[a]} channel' for a in attacks)}; "
            f"{page.runs}" + (f"; reduced for cost: {'; '.join(r for r in reductions if 'ablation' in r)}"
                              if any("ablation" in r for r in reductions) else "")
            + (f"; O-findings switched off (beyond Table 2): {findings}" if findings else ""))


def noop_text(page: AuditPage, attacks, implementations) -> str:
    """Per preset, the fixes the benchmark already runs (empty when none)."""
    noops = {i: ablation_noops(i, findings=page.profile.ablation_finding_ids(a, i)) for a in attacks for i in implementations}
    return "; ".join(f"{i}: {', '.join(ids)}" for i, ids in noops.items() if ids)


def ablation(page: AuditPage) -> list[Block]:
    """Run the ablation (cached) on the profile's presets and attacks that the page audits; sets
    ``page.ablation``, ``page.ablation_settings`` and ``page.ablation_cp``. Nothing when
    ``run_ablation`` is off."""
    if not page.run_ablation:
        return []
    t0 = time.perf_counter()
    prof = page.profile
    impls = [i for i in prof.ablation_implementations if i in page.implementations]
    attacks = [a for a in prof.ablation_attacks if a in page.attacks]
    page.ablation_settings = ablation_settings(prof, implementations=impls, attacks=attacks, epsilon=page.eps,
                                               target=page.target)
    page.ablation = records = run_settings(page.ablation_settings, prof, **page.run_kwargs)
    page.time("ablation", t0)
    page.ablation_cp = ablation_table(records, method="clopper_pearson", channel_records=page.records)
    view = ablation_view(page.ablation_cp, ablation_table(records, method="bayesian", channel_records=page.records))
    figures = [plot_ablation(records, attack=a, method="clopper_pearson", ceiling=page.ceiling_cp, epsilon=page.eps)
               for a in attacks]
    noops = noop_text(page, attacks, impls)
    return [SaveTable("ablation_records", records, index=False), SaveTable("ablation_table", view),
            ShowTable(view.round(3)), Text(page.section.caption("Ablation table", ablation_caption(page, attacks, impls))),
            *[SaveFigure(f"ablation_{a}", f) for a, f in zip(attacks, figures)],
            *([Text(f"Left out because the benchmark already runs them fixed (harness defaults): {noops}.")] if noops else []),
            *[ShowFigure(f) for f in figures]]


def overrides_of(page: AuditPage, key: tuple[str, str, str]) -> dict:
    """The extra overrides of the ablation's (attack, implementation, variant)."""
    return next(s.extra_overrides for s in page.ablation_settings if (s.attack, s.implementation, s.variant) == key)


def coincidence_reason(page: AuditPage, key: tuple[str, str, str], channel: str) -> str:
    """Why the variant ``key`` = (attack, implementation, variant) releases the same tables as the
    preset as benchmarked: the accountant at small λ, released rows that training does not move,
    the student's labels unchanged by the partition fix (checked in one fit), or bounds that
    change nothing (synthcity: its category lists stay data-derived)."""
    from ...implementations import BY_ID

    attack, impl, variant = key
    vid = variant.split()[0]
    field = BY_ID[vid].field if vid in BY_ID else None
    base = AuditSetting(attack, impl, channel=channel, iterations=page.profile.iterations(attack, impl), epsilon=page.eps,
                        target=page.target)
    lam = getattr(base.factory(base.data()[0])(0).config, "lam", None)
    if field == "accountant" and lam is not None and lam <= 1e-3:
        return ACCOUNTANT_REASON + f" (λ = {lam:g} here)"
    if attack == "querybased" and rows_still(page, base):
        return (f"as benchmarked, {impl}'s released worst-case rows after {base.iterations} iterations are exactly "
                "those after 1 iteration (4 seeds, table above): training does not move the released rows at this "
                "length, and this switch does not change that" + (f"; and {BOUNDS_REASON}" if field == "bounds" else ""))
    if field == "partition" and (labels := student_labels(base)).size:
        same = np.array_equal(labels, student_labels(replace(base, extra_overrides=overrides_of(page, key))))
        u, share = vote_unanimity(base), labels.mean()
        return (f"in one fit on D the student received {'exactly the same' if same else 'different'} noisy labels "
                f"with the partition fixed ({100 * share:.0f} % of them 'real'; the teachers' votes were unanimous "
                f"in {100 * u:.1f} % of the queries)" + (", so which rows each teacher saw never reached the "
                "generator" if same else ", yet no released table changed"))
    if field == "bounds" and attack == "querybased":
        cats = encoder_categories(replace(base, channel="controlled"))
        return CATEGORIES_REASON if cats is not None and not cats["out"].equals(cats["in"]) else BOUNDS_REASON
    return "the switch does not change any released table in this setting"


def coincidence_notes(page: AuditPage, table: pd.DataFrame) -> list[str]:
    """One note per ablation row (``table``: :func:`~pategan_audit.auditing.ablation_table`) whose
    shadow-model outputs equal the preset's as benchmarked, with its :func:`coincidence_reason`."""
    return [f"* {impl}, {attack}, {variant}: {coincidence_reason(page, (attack, impl, variant), r['channel'])}."
            for (attack, impl, variant), r in table.iterrows() if "identical outputs" in r["outputs"]]


def coincidences(page: AuditPage) -> list[Block]:
    """The notes of :func:`coincidence_notes` for the page's ablation (nothing without one)."""
    if not page.run_ablation:
        return []
    t0 = time.perf_counter()
    notes = coincidence_notes(page, page.ablation_cp)
    page.time("diagnostics", t0, add=True)
    return [Text("\n".join(notes) if notes else "No variant coincides with its preset as benchmarked.")]
