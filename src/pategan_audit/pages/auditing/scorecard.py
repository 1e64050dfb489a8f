"""The auditing page's scorecard entries: Figure 5's ε_emp (``ganev2025elusive`` §6.2;
Clopper-Pearson, paper channel) per implementation and attack, with the profile's ceiling so
that a bound limited by the number of shadow models is not read as a mismatch."""
from __future__ import annotations

import pandas as pd

from ...auditing.profiles import AuditProfile
from ..blocks import Block, Text, scorecard
from .context import AuditPage
from .figure5 import paper_channel

__all__ = ["runs_of", "scorecard_rows", "scorecard_entries"]


def runs_of(profile: AuditProfile, attack: str, implementation: str) -> str:
    """What stands behind one entry: shadow models per world and iterations (a cap on GroundHog)."""
    n_it = profile.iterations(attack, implementation)
    return f"{profile.n_per_world} shadow models per world, {'≤ ' if attack == 'groundhog' else ''}{n_it} iterations"


def scorecard_rows(records: pd.DataFrame, profile: AuditProfile) -> list[dict]:
    """One row per (attack, implementation) of the paper (not ``corrected``), ε_emp unrounded."""
    ceiling = profile.ceiling("clopper_pearson")
    return [{"table": "figure5", "row": impl, "column": attack, "ours": float(r["epsilon_emp"]),
             "runs": runs_of(profile, attack, impl), "ceiling": ceiling}
            for (attack, impl), r in paper_channel(records, "clopper_pearson").iterrows() if impl != "corrected"]


def scorecard_entries(page: AuditPage) -> list[Block]:
    """The scorecard rows of the page and the caption of the audit results."""
    return [scorecard(scorecard_rows(page.records, page.profile)), Text(page.caption("Audit results"))]
