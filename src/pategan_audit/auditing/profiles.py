"""Audit profiles: how many shadow models and iterations each run of the book uses.

The statistics fix the minimum scale (protocols spec F.3): with the paper's 2 : 1 : 2
train / validation / test split, a perfect attack needs ≥ 12 test outputs per world (30 shadow
models per world) before the Clopper-Pearson bound can exceed ε = 1; the ceiling is 1.35 at 16
test outputs (40 per world) and 4.68 at 400 (the paper's 1,000 per world).

* ``smoke`` — CI: seconds to a minute; checks the code paths only (its bounds cannot exceed 1).
* ``book``  — the book's default: 40 shadow models per world (16 / 8 / 16; CP ceiling 1.35,
  Bayesian 3.02), 50 training iterations (F.2), so ε_emp can exceed 1 wherever the paper
  found (near-)perfect attacks (F.4), in ≲ 20 minutes of auditing on 2 cores.
* ``paper`` — the authors' scale: 1,000 per world (400 / 200 / 400), 100 iterations for
  Querybased ([code]; the paper says 1,000), 1,000 for GroundHog, 64 × 100 × 2 target-selection
  models. Hundreds of core-hours (E.3).
"""
from __future__ import annotations

from dataclasses import dataclass

from .attacks import split_sizes
from .bounds import perfect_attack_ceiling

__all__ = ["AuditProfile", "AUDIT_PROFILES", "ABLATION_PRESETS", "get_profile"]

#: Presets whose violations the ablation switches off one at a time (task brief: at least these).
ABLATION_PRESETS = ("updated", "synthcity", "borealis", "smartnoise")


@dataclass(frozen=True)
class AuditProfile:
    """Knobs of one audit run (all code paths are the same at every scale).

    n_per_world: shadow models per world and setting (split 2 : 1 : 2).
    querybased_iterations / groundhog_iterations: training iterations (cap) per shadow model.
    target_candidates, target_models, target_iterations: mini-MIA target selection (D.3).
    ablation_attacks / ablation_implementations: where the violation ablation runs.
    """

    name: str
    n_per_world: int
    querybased_iterations: int
    groundhog_iterations: int
    target_candidates: int
    target_models: int
    target_iterations: int
    ablation_attacks: tuple[str, ...] = ("querybased", "groundhog")
    ablation_implementations: tuple[str, ...] = ABLATION_PRESETS
    methods: tuple[str, ...] = ("clopper_pearson", "bayesian")
    alpha: float = 0.1

    def __post_init__(self) -> None:
        split_sizes(self.n_per_world)  # validates

    @property
    def split(self) -> tuple[int, int, int]:
        """(train, validation, test) outputs per world."""
        return split_sizes(self.n_per_world)

    def iterations(self, attack: str) -> int:
        return self.querybased_iterations if attack == "querybased" else self.groundhog_iterations

    def ceiling(self, method: str = "clopper_pearson", delta: float = 1e-5) -> float:
        """Largest ε_emp this profile can report (a perfect attack on the test split)."""
        return perfect_attack_ceiling(n_per_world=self.split[2], method=method, alpha=self.alpha, delta=delta)


AUDIT_PROFILES: dict[str, AuditProfile] = {
    "smoke": AuditProfile("smoke", n_per_world=10, querybased_iterations=3, groundhog_iterations=3,
                          target_candidates=2, target_models=3, target_iterations=3,
                          ablation_attacks=("querybased",), ablation_implementations=("updated",)),
    "book": AuditProfile("book", n_per_world=40, querybased_iterations=50, groundhog_iterations=50,
                         target_candidates=4, target_models=10, target_iterations=100,
                         ablation_attacks=("querybased",)),
    "paper": AuditProfile("paper", n_per_world=1000, querybased_iterations=100, groundhog_iterations=1000,
                          target_candidates=64, target_models=100, target_iterations=1000),
}


def get_profile(name: str) -> AuditProfile:
    try:
        return AUDIT_PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown audit profile {name!r}; use one of {sorted(AUDIT_PROFILES)}") from None
