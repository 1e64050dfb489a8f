"""What a profile can show (``ganev2025elusive`` §6.2, implementation notes §audit.ceiling): the ceiling of
ε_emp that a perfect attack reaches with each profile's test outputs, and the perfect test
outputs per world that a target ε_emp needs.
"""
from __future__ import annotations

import pandas as pd

from ...auditing.bounds import min_test_outputs
from ...auditing.profiles import AUDIT_PROFILES
from ..blocks import Block, table
from .context import AuditPage

__all__ = ["TARGETS", "ceilings", "needed", "profile_limits"]

#: the ε_emp values of the second table
TARGETS = (0.5, 1, 2, 3, 4, 4.5)


def ceilings() -> pd.DataFrame:
    """Per audit profile: shadow models and test outputs per world, Clopper-Pearson and Bayesian ceiling."""
    return pd.DataFrame(
        [{"profile": p.name, "shadow models per world": p.n_per_world, "test outputs per world": p.split[2],
          "ceiling (Clopper-Pearson)": round(p.ceiling("clopper_pearson"), 4),
          "ceiling (Bayesian)": round(p.ceiling("bayesian"), 4)} for p in AUDIT_PROFILES.values()]
    ).set_index("profile")


def needed(targets=TARGETS) -> pd.DataFrame:
    """Perfect test outputs per world for a Clopper-Pearson ε_emp above each target (α = 0.1 and 0.05)."""
    return pd.DataFrame(
        [{"target ε_emp": t, "Clopper-Pearson, α = 0.1": min_test_outputs(target_epsilon=t),
          "Clopper-Pearson, α = 0.05": min_test_outputs(target_epsilon=t, alpha=0.05)} for t in targets]
    ).set_index("target ε_emp")


def profile_limits(page: AuditPage) -> list[Block]:
    """The ceilings and the outputs needed (each written and shown)."""
    return [*table("ceilings", ceilings()), *table("min_test_outputs", needed())]
