"""Past the ceiling (``ganev2025elusive`` §6.2, Figure 5): where the paper-scale audit was perfect,
the same attack tested on 10,000 (Querybased) or 2,000 (GroundHog, CPU) outputs per world, read
back from the archives through :mod:`pategan_audit.auditing.past_ceiling` (never recomputed by the
page): the figure, the table and one sentence per cell.
"""
from __future__ import annotations

from ...archive_store import read_archive
from ...auditing import past_ceiling as P
from ..blocks import Block, SaveTable, ShowTable, Text, archive_missing, figure
from ..plotting.auditing import plot_past_ceiling
from .context import AuditPage
from .figure5 import paper_by_attack

__all__ = ["SHOWN", "COSTS", "past_ceiling"]

#: what an archive not yet run would cost on CPU: an estimate, shown only until it runs (then its
#: meta's recorded core seconds are shown). Querybased's from the core seconds its own meta recorded
#: for four of its five settings; GroundHog's from the 1,000-per-world archive's training time, scaled.
COSTS = {"audit_past_ceiling_querybased": "estimated at about 10 core-hours, synthcity most of it",
         "audit_past_ceiling_groundhog": "estimated at 8 core-hours or more on CPU, synthcity most of it"}

SHOWN = ["attack", "implementation", "channel", "ε_emp before", "ceiling before", "ε_emp", "ceiling", "status", "test errors",
         "Bayesian", "Bayesian ceiling", "GDP μ_lo", "GDP ε if Gaussian", "GDP ε ceiling", "AUC", "same attack", "same outputs as", "opened by"]


def past_ceiling(page: AuditPage, directory=None) -> list[Block]:
    """The audits past the ceiling (figure, table, sentences), or what is not archived yet."""
    table = P.past_ceiling_table(directory, epsilon=page.eps)
    missing = []
    for name in P.PAST_CEILING_ARCHIVES:
        arch = read_archive(name, directory=directory)
        if arch is None:
            missing.append(archive_missing(name, COSTS[name]))
        elif not arch.meta.get("complete", True):
            ran = set(zip(arch.records["implementation"], arch.records["channel"]))
            left = [f"{s['implementation']} {s['channel']}" for s in arch.meta.get("settings", [])
                    if (s["implementation"], s["channel"]) not in ran]
            spent = arch.meta.get("core_seconds")
            spent = f"; {spent / 3600:.1f} core-hours recorded so far" if isinstance(spent, (int, float)) else ""
            missing.append(Text(f"*`{name}` is partial ({arch.meta.get('settings_done')} of "
                                f"{len(arch.meta.get('settings', []))} settings; not yet run: {', '.join(left)}{spent}): "
                                f"`python -m pategan_audit.archive {name}` resumes it.*"))
    if table.empty:
        return missing
    save, show = figure("past_ceiling", plot_past_ceiling(table, reference=paper_by_attack(), epsilon=page.eps))
    return [save, SaveTable("past_ceiling", table), ShowTable(table[SHOWN].round(2)),
            Text("\n".join(f"* {s}" for s in P.leak_sentences(table, epsilon=page.eps))), *missing, show]
