"""The vote aggregators alone (a mechanism-level audit beside ``ganev2025elusive`` §4 and
§6.2, in the style of Chadha et al. 2024): each preset's noisy vote queried on two neighbouring
vote counts without training (:mod:`pategan_audit.auditing.mechanism`), at the benchmarked λ and
at λ = 1 (the setting of the paper's Figure 4), where the accountant formula bugs show.
"""
from __future__ import annotations

import pandas as pd

from ...auditing import mechanism
from ..blocks import Block, SaveTable, ShowTable, Text
from .context import AuditPage

__all__ = ["LAMBDA1_PRESETS", "queries", "updated_note", "vote_aggregators", "at_lambda1"]

#: the presets with a vote aggregator whose accountant depends on λ
LAMBDA1_PRESETS = ("updated", "synthcity", "borealis", "smartnoise", "corrected")


def queries(page: AuditPage) -> int:
    """Queries per vote count: 10⁶, 10⁴ at the smoke profile."""
    return 10**6 if page.profile.name != "smoke" else 10**4


def updated_note(table: pd.DataFrame, n_queries: int) -> str:
    """What one query of updated's aggregator leaks against what its accountant charges (V15)."""
    upd = table.loc["updated"]
    charged = upd["accountant's 2λ"]
    return (f"{n_queries:,} queries per vote count, each preset at its benchmarked λ. updated's noise has scale λ "
            f"where its accountant assumes 1/λ (V15): one query leaks {upd['ε per query, exact (this pair)']:.4g} "
            f"(exact; measured lower bound {upd['ε per query, measured (lower CI)']:.3g}) while the accountant charges "
            f"{charged:.3g}; refuted by the measurement alone: {bool(upd['refuted by measurement alone'])}. "
            "Verdict per preset in the last rows (sound: the accountant charges at least the exact loss).")


def vote_aggregators(page: AuditPage) -> list[Block]:
    """Every preset's aggregator at its benchmarked λ (one column per preset); sets ``page.aggregators``."""
    n_queries = queries(page)
    page.aggregators = table = mechanism.summary_table(mechanism.audit_all(queries=n_queries, seed=page.seed))
    return [SaveTable("vote_aggregator_audit", table), ShowTable(table.T), Text(updated_note(table, n_queries))]


def at_lambda1(page: AuditPage) -> list[Block]:
    """The aggregators of :data:`LAMBDA1_PRESETS` at λ = 1."""
    table = mechanism.summary_table(mechanism.audit_all(queries=queries(page), seed=page.seed, lam=1.0,
                                                        presets=LAMBDA1_PRESETS))
    return [SaveTable("vote_aggregator_audit_lambda1", table), ShowTable(table.T)]
