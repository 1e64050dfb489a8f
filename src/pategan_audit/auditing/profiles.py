"""Audit profiles: how many shadow models and iterations each run of the book uses.

The statistics fix the minimum scale (implementation notes §audit.ceiling): with the paper's 2 : 1 : 2
train / validation / test split, a perfect attack needs ≥ 12 test outputs per world (30 shadow
models per world) before the Clopper-Pearson bound can exceed ε = 1; the ceiling is 1.35 at 16
test outputs (40 per world) and 4.68 at 400 (the paper's 1,000 per world).

* ``smoke`` — CI: under a minute and a half for the whole page; checks the code paths only
  (5 shadow models per world; its bounds cannot exceed 1).
* ``book``  — the book's default: 40 shadow models per world in *every* audited setting
  (16 / 8 / 16; CP ceiling 1.35, Bayesian 3.02), 50 training iterations (implementation notes §profiles.fast), so ε_emp can
  exceed 1 wherever the paper found (near-)perfect attacks (implementation notes §profiles.fast). Budget: ≤ 20 minutes of
  auditing from a cold cache on 2 quiet cores. Reductions, each stated in the page's captions:
  synthcity (≈ 10× slower per iteration than the others) trains 20 iterations on Querybased;
  the ablation's synthcity rows on GroundHog are limited to the bounds fix (the other fixes
  cost ≈ 200 core-s each there); target selection uses 4 candidates × (10 + 10) models.
* ``large`` — the archived run of the Querybased game (:mod:`pategan_audit.archive`): the
  paper's 1,000 shadow models per world and 100 iterations for every preset (synthcity capped at
  20 iterations, as in ``book``: at 100 it costs ≈ 2.4 core-s per model), Querybased only.
  ≈ 2 core-hours for the seven presets.
* ``paper`` — the authors' scale: 1,000 per world (400 / 200 / 400), 100 iterations for
  Querybased (the authors' code; the paper says 1,000), 1,000 for GroundHog, 64 × 100 × 2 target-selection
  models, the full ablation. Hundreds of core-hours (implementation notes §profiles.fast).
"""
from __future__ import annotations

from dataclasses import dataclass

from .attacks import split_sizes
from .bounds import perfect_attack_ceiling

__all__ = ["AuditProfile", "AUDIT_PROFILES", "ABLATION_PRESETS", "ABLATION_CHANNELS", "get_profile"]

#: Presets whose violations the ablation switches off one at a time (task brief: at least
#: these four PATE-based ones; the WGAN-based ``original`` and ``turing`` are cheap extras).
ABLATION_PRESETS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")

#: Channel in which each attack's ablation runs (implementation notes §audit.channels). Querybased: same
#: synthetic size in both worlds but bounds as each preset reads them, so that the size channel
#: (4 vs 5 rows), which no switch touches and which saturates every variant, is closed while
#: the metadata fixes V10-V13 can still show their effect. GroundHog: the paper's game (its
#: synthetic size is already the same in both worlds).
ABLATION_CHANNELS = {"querybased": "fixed_size", "groundhog": "paper"}

#: Every switchable O-finding id. A profile may list them for every preset: the ablation keeps,
#: per preset, those that have a switch there (:meth:`AuditProfile.ablation_finding_ids`).
ALL_FINDINGS = ("O1", "O2", "O3", "O4", "O5", "O6", "O9", "O10")


@dataclass(frozen=True)
class AuditProfile:
    """Knobs of one audit run (all code paths are the same at every scale).

    n_per_world: shadow models per world and setting (split 2 : 1 : 2 unless ``outputs`` says otherwise).
    outputs: (train, validation, test) outputs per world when they are not the 2 : 1 : 2 split of
        ``n_per_world`` (they must add up to it): the audits past the ceiling keep the attack's
        training and validation at the paper's 400 / 200 and spend every further model on the test
        split, which alone sets the ceiling.
    querybased_iterations / groundhog_iterations: training iterations (cap) per shadow model.
    iteration_caps: ((attack, implementation, iterations), ...) — per-preset exceptions to the
        two counts above (cost reductions; stated in captions).
    target_candidates, target_models, target_iterations: mini-MIA target selection (implementation notes §audit.groundhog).
    ablation_attacks / ablation_implementations: where the violation ablation runs.
    ablation_skip: ((attack, implementation), ...) — presets left out of one attack's ablation.
    ablation_limits: ((attack, implementation, (variant labels kept...)), ...) — restricts
        the ablation's variants of one preset on one attack (cost reductions).
    ablation_findings: ((attack, implementation, (finding ids...)), ...) — also switch these
        O-findings (implementation notes §violations.findings) off one at a time there (beyond Table 2); ids
        without a switch in that preset are skipped (e.g. ``ALL_FINDINGS`` for every preset).
    """

    name: str
    n_per_world: int
    querybased_iterations: int
    groundhog_iterations: int
    target_candidates: int
    target_models: int
    target_iterations: int
    iteration_caps: tuple[tuple[str, str, int], ...] = ()
    ablation_attacks: tuple[str, ...] = ("querybased", "groundhog")
    ablation_implementations: tuple[str, ...] = ABLATION_PRESETS
    ablation_skip: tuple[tuple[str, str], ...] = ()
    ablation_limits: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    ablation_findings: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    methods: tuple[str, ...] = ("clopper_pearson", "bayesian")
    alpha: float = 0.1
    description: str = ""
    outputs: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        split_sizes(self.n_per_world)  # validates
        if self.outputs is not None:
            if (len(self.outputs) != 3 or not all(isinstance(n, int) and n >= 1 for n in self.outputs)
                    or sum(self.outputs) != self.n_per_world):
                raise ValueError(f"profile {self.name!r}: outputs must be three positive ints (train, validation, test) "
                                 f"adding up to n_per_world={self.n_per_world}, got {self.outputs!r}")
        for entry in self.iteration_caps:
            if len(entry) != 3 or not (isinstance(entry[2], int) and entry[2] >= 1):
                raise ValueError(f"iteration_caps entries are (attack, implementation, iterations >= 1), got {entry!r}")

    @property
    def split(self) -> tuple[int, int, int]:
        """(train, validation, test) outputs per world."""
        return self.outputs if self.outputs is not None else split_sizes(self.n_per_world)

    def iterations(self, attack: str, implementation: str | None = None) -> int:
        """Training iterations (cap) of ``implementation``'s shadow models on ``attack``."""
        for a, impl, n in self.iteration_caps:
            if a == attack and impl == implementation:
                return n
        return self.querybased_iterations if attack == "querybased" else self.groundhog_iterations

    def ablation_variants_kept(self, attack: str, implementation: str) -> tuple[str, ...] | None:
        """Variant labels the ablation keeps for (attack, implementation); None = all, () = none."""
        if (attack, implementation) in self.ablation_skip:
            return ()
        for a, impl, labels in self.ablation_limits:
            if a == attack and impl == implementation:
                return tuple(labels)
        return None

    def ablation_finding_ids(self, attack: str, implementation: str) -> tuple[str, ...]:
        """O-finding ids the ablation also switches off for (attack, implementation): those listed
        for it that are switchable O-findings *of this preset* in the violation catalogue (an
        O-finding belongs to some presets only, e.g. O1 to synthcity; the others have no switch
        for it). Ids that are no switchable O-finding of any preset raise a ValueError (typos)."""
        for a, impl, ids in self.ablation_findings:
            if a == attack and impl == implementation:
                from ..implementations import violations  # lazy: the package imports torch

                switchable = [v for v in violations.VIOLATIONS if v.kind == "finding" and v.switchable]
                unknown = [f for f in ids if f not in {v.id for v in switchable}]
                if unknown:
                    raise ValueError(f"profile {self.name!r} lists {unknown} for {implementation} on {attack}; these are "
                                     f"no switchable O-findings (choose from {[v.id for v in switchable]})")
                own = {v.id for v in switchable if implementation in v.implementations}
                return tuple(f for f in ids if f in own)
        return ()

    def ceiling(self, method: str = "clopper_pearson", delta: float = 1e-5) -> float:
        """Largest ε_emp this profile can report (a perfect attack on the test split)."""
        return perfect_attack_ceiling(n_per_world=self.split[2], method=method, alpha=self.alpha, delta=delta)

    def reductions(self) -> list[str]:
        """Human-readable list of this profile's cost reductions (for captions)."""
        out = [f"{impl} trains {n} iterations on {attack} (others: {self.iterations(attack)})"
               for attack, impl, n in self.iteration_caps]
        skipped = [f"{impl}" for attack, impl in self.ablation_skip]
        if skipped:
            attacks = sorted({a for a, _ in self.ablation_skip})
            out.append(f"ablation on {', '.join(attacks)} without {', '.join(skipped)}")
        out += [f"ablation of {impl} on {attack} limited to: {', '.join(labels)}"
                for attack, impl, labels in self.ablation_limits]
        return out


def _past_ceiling(name: str, n_test: int) -> AuditProfile:
    """The ``large`` profile's iterations with the attack trained and validated on the first 400 /
    200 shadow models per world, as at the paper's 1,000 (same seeds, so the same models while the
    code computes them as it did), and tested on ``n_test`` more: only the ceiling grows."""
    return AuditProfile(name, n_per_world=600 + n_test, querybased_iterations=100, groundhog_iterations=1000,
                        target_candidates=64, target_models=100, target_iterations=1000,
                        iteration_caps=(("querybased", "synthcity", 20),), ablation_attacks=(),
                        outputs=(400, 200, n_test),
                        description=f"past the ceiling: {600 + n_test:,} shadow models per world, the attack trained "
                                    f"and validated on the first 400 / 200 as at the paper's 1,000 and tested on "
                                    f"{n_test:,}; iterations as large")


AUDIT_PROFILES: dict[str, AuditProfile] = {
    "smoke": AuditProfile("smoke", n_per_world=5, querybased_iterations=3, groundhog_iterations=2,
                          target_candidates=2, target_models=3, target_iterations=3,
                          iteration_caps=(("querybased", "synthcity", 1), ("groundhog", "synthcity", 1)),
                          ablation_attacks=("querybased",), ablation_implementations=("updated",),
                          description="CI: 5 shadow models per world; checks code paths only (bounds cannot exceed 1)"),
    "book": AuditProfile("book", n_per_world=40, querybased_iterations=50, groundhog_iterations=50,
                         target_candidates=4, target_models=10, target_iterations=100,
                         iteration_caps=(("querybased", "synthcity", 20),),
                         ablation_skip=(("groundhog", "original"), ("groundhog", "turing")),
                         ablation_limits=(("groundhog", "synthcity", ("as benchmarked", "V12 fixed")),),
                         ablation_findings=(("querybased", "synthcity", ("O1",)),),
                         description="40 shadow models per world (16 / 8 / 16), 50 iterations; synthcity 20 on Querybased"),
    "large": AuditProfile("large", n_per_world=1000, querybased_iterations=100, groundhog_iterations=1000,
                          target_candidates=64, target_models=100, target_iterations=1000,
                          iteration_caps=(("querybased", "synthcity", 20),), ablation_attacks=(),
                          description="the paper's 1,000 shadow models per world (400 / 200 / 400) and 100 iterations "
                                      "on Querybased; synthcity capped at 20 iterations as in book; no ablation"),
    "resolvable": AuditProfile("resolvable", n_per_world=200, querybased_iterations=100, groundhog_iterations=1000,
                               target_candidates=64, target_models=100, target_iterations=1000,
                               iteration_caps=(("querybased", "synthcity", 20),), ablation_attacks=("groundhog",),
                               description="200 shadow models per world (80 / 40 / 80) at the paper's iteration counts: "
                                           "the GroundHog ablation where a fix that stops a perfect attack is resolved "
                                           "(ceiling 3.05 against 0) at a fifth of the paper's cost"),
    "paper": AuditProfile("paper", n_per_world=1000, querybased_iterations=100, groundhog_iterations=1000,
                          target_candidates=64, target_models=100, target_iterations=1000,
                          ablation_findings=tuple((a, i, ALL_FINDINGS) for a in ("querybased", "groundhog")
                                                  for i in ABLATION_PRESETS),
                          description="the authors' scale: 1,000 shadow models per world, 100 / 1,000 iterations, full ablation"),
    **{name: _past_ceiling(name, n_test) for name, n_test in (("ceiling10k", 10_000), ("ceiling2k", 2_000))},
}


def get_profile(name: str) -> AuditProfile:
    try:
        return AUDIT_PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown audit profile {name!r}; use one of {sorted(AUDIT_PROFILES)}") from None
