"""One verdict per implementation from the paper-scale archives, the audits past the ceiling and
the vote-aggregator audit (:func:`pategan_audit.auditing.verdicts.implementation_verdicts`;
``ganev2025elusive`` §6.2)."""
from __future__ import annotations

from ...auditing import past_ceiling, verdicts
from ..blocks import Block, SaveTable, ShowTable
from .context import AuditPage

__all__ = ["implementation_verdicts"]


def implementation_verdicts(page: AuditPage) -> list[Block]:
    """The verdict table (nothing without an archive)."""
    if page.large is None or page.large.empty:
        return []
    table = verdicts.implementation_verdicts(page.fig5_scale, page.aggregators, epsilon=page.eps,
                                             past=past_ceiling.past_ceiling_table(epsilon=page.eps))
    return [SaveTable("implementation_verdicts", table), ShowTable(table.round(2))]
