"""One run of the auditing page (``notebooks/auditing.py``; ``ganev2025elusive`` §6.2): its
parameters, the profile behind them and what each section computes for the sections after it.

:func:`start_page` reads the notebook's parameters into an :class:`AuditPage`; the builders of
this package take the page, compute their part (the audits, cached), keep on the page what
later sections read (``target``, ``records``, ``large``, ...) and return blocks
(:mod:`.blocks`) that ``page.show`` writes under ``results/auditing/`` and displays.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import pandas as pd

from ...auditing.profiles import AuditProfile, get_profile
from ..blocks import Block, Print, SectionPage
from ...runner import RunOptions

__all__ = ["AuditPage", "start_page", "runs_text", "profile_summary"]


def runs_text(profile: AuditProfile) -> str:
    """Caption text: the shadow models, split and training lengths behind the page's audits."""
    n_train, n_valid, n_test = profile.split
    caps = "; ".join(f"{impl} {n} on {att}" for att, impl, n in profile.iteration_caps)
    return (f"{profile.n_per_world} shadow models per world and setting ({n_train} train / {n_valid} validation / "
            f"{n_test} test), {profile.querybased_iterations} iterations (Querybased), ≤ {profile.groundhog_iterations} "
            f"(GroundHog; PATE presets stop earlier when ε̂ reaches ε)" + (f"; except {caps}" if caps else ""))


@dataclass
class AuditPage(SectionPage):
    """The page's inputs and what its sections computed so far.

    section: the :class:`pategan_audit.pages.report.Section` the page writes to (profile, ε, seed).
    implementations, attacks: the presets and games audited; groundhog_target: the row the
    GroundHog audit uses (< 0: the row the mini-MIAs pick); n_jobs, backend: how shadow models
    run (backend None: local processes).
    timings: wall seconds per part of the page; still: preset -> its released worst-case rows
    do not change with training (filled by the diagnostics, read by the ablation's notes).
    Set by the sections: target (target selection), records (Figure 5's audit, all channels),
    large / large_floor / fig5_scale (paper-scale archives), aggregators (vote aggregators),
    ablation / ablation_settings / ablation_cp (the ablation).
    """

    section: Any
    profile: AuditProfile
    implementations: tuple[str, ...]
    attacks: tuple[str, ...]
    groundhog_target: int = 397
    run_ablation: bool = True
    n_jobs: int = 2
    backend: str | None = None
    client: Any = None  # the Dask client when the page runs on a scheduler (kept alive with the page)
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)
    still: dict[str, bool] = field(default_factory=dict)
    target: int | None = None
    records: pd.DataFrame | None = None
    large: pd.DataFrame | None = None
    large_floor: dict | None = None
    fig5_scale: pd.DataFrame | None = None
    aggregators: pd.DataFrame | None = None
    ablation: pd.DataFrame | None = None
    ablation_settings: list = field(default_factory=list)
    ablation_cp: pd.DataFrame | None = None

    @property
    def ceiling_cp(self) -> float:
        return self.profile.ceiling("clopper_pearson")

    @property
    def ceiling_bayes(self) -> float:
        return self.profile.ceiling("bayesian")

    @property
    def runs(self) -> str:
        return runs_text(self.profile)

    @property
    def run_kwargs(self) -> dict:
        """How the page's audits run (calibration, target selection, the audited settings): the
        seed, and the workers and backend as run options (no progress bars, which would clutter the page)."""
        return dict(seed=self.seed, options=RunOptions.defaulted(None, n_jobs=int(self.n_jobs), backend=self.backend))

    def caption(self, text: str, runs: str | None = None) -> str:
        return self.section.caption(text, self.runs if runs is None else runs)

    def time(self, part: str, start: float, *, add: bool = False) -> None:
        """Record the wall seconds of ``part`` since ``start`` (``add``: add to what it has)."""
        self.timings[part] = (self.timings.get(part, 0.0) if add else 0.0) + time.perf_counter() - start


def start_page(section: Any, *, implementations: Sequence[str], attacks: Sequence[str], groundhog_target: int = 397,
               run_ablation: bool = True, n_jobs: int = 2, backend: str = "loky", started: float | None = None,
               dask_scheduler: str = "") -> AuditPage:
    """The page for ``section``'s profile, ε and seed; ``backend`` "loky" runs on local processes.
    ``dask_scheduler``: address of a running Dask scheduler (e.g. "tcp://10.0.0.5:8786"): the
    shadow models then run on its workers (``backend`` becomes "dask"); empty for local workers.
    ``started``: when the page started (``time.perf_counter()``; default now), for its total wall time."""
    client = None
    if dask_scheduler:
        from distributed import Client

        client, backend = Client(dask_scheduler), "dask"
    return AuditPage(section=section, profile=get_profile(section.profile), implementations=tuple(implementations),
                     attacks=tuple(attacks), groundhog_target=int(groundhog_target), run_ablation=bool(run_ablation),
                     n_jobs=int(n_jobs), backend=None if backend == "loky" else backend, client=client,
                     started=time.perf_counter() if started is None else started)


def profile_summary(page: AuditPage) -> list[Block]:
    """The run's profile, ε, seed and shadow models, and the profile's cost reductions."""
    sec, reductions = page.section, page.profile.reductions()
    out: list[Block] = [Print(f"profile={sec.profile}, eps={sec.eps}, seed={sec.seed}: {page.runs}")]
    if reductions:
        out.append(Print("cost reductions of this profile:\n  - " + "\n  - ".join(reductions)))
    return out
