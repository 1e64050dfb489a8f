"""Checks that explain the page's audits (:mod:`pategan_audit.auditing.diagnostics`): the
metadata that public bounds do not replace (synthcity's category lists, implementations
catalogue V12 note) and whether training moves the released worst-case rows at all.
"""
from __future__ import annotations

import time

import pandas as pd

from ...auditing.diagnostics import encoder_categories, released_rows_move
from ...auditing.profiles import AUDIT_PROFILES
from ...auditing.settings import AuditSetting
from ..blocks import Block, SaveTable, ShowTable, Text
from .context import AuditPage

__all__ = ["CATEGORY_COLUMNS", "differing_categories", "categories_note", "synthcity_categories", "rows_move",
           "released_rows", "rows_still"]

CATEGORY_COLUMNS = ["attack", "column", "categories in D′", "categories in D", "only in D"]


def differing_categories(attack: str, cats: pd.DataFrame | None) -> list[dict]:
    """Columns whose encoder categories differ between the worlds (``cats``: from
    :func:`~pategan_audit.auditing.encoder_categories`, None for a preset without an encoder)."""
    rows = []
    for column, (c_out, c_in) in (cats.iterrows() if cats is not None else []):
        if c_out != c_in:
            rows.append({"attack": attack, "column": column, "categories in D′": len(c_out), "categories in D": len(c_in),
                         "only in D": ", ".join(f"{v:g}" for v in sorted(set(c_in) - set(c_out)))})
    return rows


def categories_note(table: pd.DataFrame) -> str:
    if len(table):
        return (f"synthcity's categories in the controlled setting **differ between the worlds** in {len(table)} column(s) "
                f"({', '.join(sorted(set(table['attack'])))}): its controlled ε_emp still contains this metadata channel "
                "and is *not* the PATE mechanism alone.")
    return "synthcity's categories are the same in both worlds: its controlled ε_emp is the mechanism's."


def synthcity_categories(page: AuditPage) -> list[Block]:
    """synthcity fitted in the controlled setting on both worlds of each attack: the columns whose
    categories differ (nothing when synthcity is not audited)."""
    if "synthcity" not in page.implementations:
        return []
    differing = []
    for attack in page.attacks:
        cats = encoder_categories(AuditSetting(attack, "synthcity", channel="controlled", iterations=1, epsilon=page.eps,
                                               target=page.target))
        differing += differing_categories(attack, cats)
    table = pd.DataFrame(differing, columns=CATEGORY_COLUMNS)
    return [SaveTable("synthcity_controlled_categories", table, index=False), ShowTable(table), Text(categories_note(table))]


def rows_move(page: AuditPage) -> pd.DataFrame:
    """Per preset: do its released worst-case rows change between 1 iteration and this profile's
    training length (and the authors' 100 iterations, except at smoke)? Fills ``page.still``."""
    moves = []
    for impl in page.implementations:
        n_it = page.profile.iterations("querybased", impl)
        row = {"implementation": impl}
        lengths = {n_it} if page.section.profile == "smoke" else {n_it, AUDIT_PROFILES["paper"].querybased_iterations}
        for n in sorted(lengths):
            if n > 1:
                row[f"rows change by {n} iterations"] = released_rows_move(
                    AuditSetting("querybased", impl, channel="fixed_size", iterations=n, epsilon=page.eps))
        if n_it > 1:
            page.still[impl] = not row[f"rows change by {n_it} iterations"]
        moves.append(row)
    return pd.DataFrame(moves).set_index("implementation")


def released_rows(page: AuditPage) -> list[Block]:
    """:func:`rows_move` as a table (only when Querybased is audited)."""
    if "querybased" not in page.attacks:
        return []
    t0 = time.perf_counter()
    moves = rows_move(page)
    page.time("diagnostics", t0)
    return [SaveTable("released_rows_move", moves), ShowTable(moves)]


def rows_still(page: AuditPage, setting: AuditSetting) -> bool:
    """True if the preset's released worst-case rows do not change with training (``page.still``,
    checked here for a preset it lacks)."""
    if setting.implementation not in page.still:
        page.still[setting.implementation] = setting.iterations > 1 and not released_rows_move(setting)
    return page.still[setting.implementation]
