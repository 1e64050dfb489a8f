"""Audit settings for the marginal mechanisms MST, AIM and PrivBayes (:mod:`pategan_audit.alternatives`),
in the games the PATE-GANs are audited in (``ganev2025elusive`` §6.2; issue 41 item 3).

The mechanisms are end-to-end DP and are given the public bounds of the game as their domain (the
audit's ``controlled`` channel, as ``corrected`` is given them): {0, 1} for A, B, C on the
Querybased worst case, the widened bounds of D′ on Cervical for GroundHog. With public bounds the
``fixed_size`` setting runs the same models as ``controlled`` (same effective key: trained once,
one ``run_id``), so only ``controlled`` is made here; the paper's own Querybased game (4 vs 5
output rows) is left out, since a constant generator reaches its ceiling through the size alone.

``n_iters``: the iterations of private-pgm's inference (dpmm's ``n_iters``; None: dpmm's default).
Inference is post-processing of the noisy measurements, so it changes utility but not the
privacy guarantee an audit tests; ``variant`` records the value. ``bins``: the public-bounds
discretisation (8 on Cervical, the setting ``benchmarks/alternatives_cost.py`` defends; the
worst case's 0/1 columns keep one code per value at any ``bins`` >= 2). The dpmm version enters
the shadow models' cache key.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..alternatives import MECHANISMS, AlternativeFactory, bounds_domain, dpmm_version
from .profiles import AuditProfile
from .settings import GROUNDHOG_TARGET, AuditSetting

__all__ = ["AlternativeSetting", "alternative_settings", "BINS"]

#: public-bounds bins per attack (the worst case's columns are 0/1 whatever the bins)
BINS = {"querybased": 2, "groundhog": 8}


@dataclass(frozen=True)
class AlternativeSetting(AuditSetting):
    """One audited (mechanism, attack) in the ``controlled`` channel: ``implementation`` is a key of
    :data:`pategan_audit.alternatives.MECHANISMS` (``"mst"``, ``"aim"``, ``"priv-bayes"``).
    ``iterations`` is the profile's value for the game (checked by ``run_setting``; the mechanisms
    do not train in iterations): the records carry ``n_iters`` instead."""

    bins: int = 2
    n_iters: int | None = None

    def __post_init__(self) -> None:
        if self.implementation not in MECHANISMS:
            raise ValueError(f"unknown mechanism {self.implementation!r}; use one of {sorted(MECHANISMS)}")
        if self.streams != "torch" or self.extra_overrides:
            raise ValueError("streams and extra_overrides are PATE-GAN settings; the mechanisms take neither")
        super().__post_init__()  # attack, channel and iterations, as every setting checks them
        if self.channel != "controlled":
            raise ValueError(f"the marginal mechanisms are audited with public bounds, in the 'controlled' channel; "
                             f"got channel={self.channel!r}")
        if self.n_iters is not None and (isinstance(self.n_iters, bool) or not isinstance(self.n_iters, int)
                                         or self.n_iters < 1):
            raise ValueError(f"n_iters must be an integer >= 1 or None (dpmm's default), got {self.n_iters!r}")
        if isinstance(self.bins, bool) or not isinstance(self.bins, int) or self.bins < 2:
            raise ValueError(f"bins must be an integer >= 2, got {self.bins!r}")

    def factory(self, d_out: pd.DataFrame) -> AlternativeFactory:  # type: ignore[override]
        bounds = self.public_bounds(d_out)
        return AlternativeFactory(self.implementation, epsilon=self.epsilon, delta=self.delta, bins=self.bins,
                                  domain=bounds_domain(bounds),
                                  model_kwargs=() if self.n_iters is None else (("n_iters", self.n_iters),))

    def _effective_key(self, factory: Any, n_synth_rows: int | str, featuriser: Any) -> dict:
        return {**super()._effective_key(factory, n_synth_rows, featuriser), "dpmm": dpmm_version()}

    def key(self) -> dict:
        key = super().key()
        key.update(iterations=None, n_iters=self.n_iters, bins=self.bins)
        return key


def alternative_settings(profile: AuditProfile, *, mechanisms: tuple[str, ...] = ("mst", "aim"),
                         attacks: tuple[str, ...] = ("querybased", "groundhog"), n_iters: int | None = None,
                         epsilon: float = 1.0, target: int = GROUNDHOG_TARGET) -> list[AlternativeSetting]:
    """The ``controlled`` settings of ``mechanisms`` in ``attacks`` at ``profile``'s scale, Querybased
    first (its fits cost seconds; GroundHog's, on 686 rows of 36 columns, minutes)."""
    variant = "dpmm defaults" if n_iters is None else f"n_iters {n_iters}"
    return [AlternativeSetting(attack=a, implementation=m, channel="controlled", iterations=profile.iterations(a, m),
                               variant=variant, epsilon=epsilon, target=target, bins=BINS[a], n_iters=n_iters)
            for a in attacks for m in mechanisms]
