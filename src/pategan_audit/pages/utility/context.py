"""One run of the utility page: the cells of every table and figure, their results, and the
settings table that lists every knob behind them (``ganev2025elusive`` §5 and Appendix C).

:func:`page_cells` names the experiment groups of the page (one builder of
:mod:`pategan_audit.utility.profiles` each); :func:`run_page` runs their union once through
:func:`~pategan_audit.utility.run_cells` (cached) and returns a :class:`UtilityPage`, which the
artefact builders of this package read.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import pandas as pd

from ... import reference
from ...utility.cells import UtilityCell
from ...utility.profiles import (
    MAIN_EPSILON,
    UtilityProfile,
    conditional_cells,
    epsilon_sweep_cells,
    get_profile,
    hyperparameter_cells,
    main_cells,
    mnist_cells,
    setting_a_cells,
    teacher_sweep_cells,
)
from ...utility.tables import runs_text, select
from ..blocks import Block, SectionPage, table
from ...runner import RunOptions

__all__ = ["EPILEPTIC", "CREDIT", "UtilityPage", "page_cells", "run_page", "settings"]

EPILEPTIC, CREDIT = "epileptic_seizure", "credit"


def page_cells(profile: UtilityProfile, *, datasets: Sequence[str], implementations: Sequence[str], epsilon: float,
               seed: int) -> dict[str, list]:
    """The experiment groups of the page, each a list of cells (duplicates across groups are run once).

    ``datasets`` are the requested Table 4 rows; ``main`` runs at ``epsilon``, ``main_eps1`` at the
    paper's ε = 1 (Tables 6 and 12 compare against it; the same cells as ``main`` unless ε was changed).
    """
    order = [d for d in reference.DATASETS if d in datasets]  # Table 4 row order

    def only(names):
        return [n for n in names if n in datasets]

    extra_mnist = ["mnist"] if profile.mnist and "mnist" in profile.setting_a else []
    return {
        "setting_a": setting_a_cells(profile, datasets=only(profile.setting_a) + extra_mnist, seed=seed),
        "main": main_cells(profile, epsilon=epsilon, implementations=implementations, datasets=order, seed=seed),
        "main_eps1": main_cells(profile, epsilon=MAIN_EPSILON, implementations=reference.IMPLEMENTATIONS, datasets=order,
                                seed=seed),
        "sweep_epileptic": (epsilon_sweep_cells(profile, dataset=EPILEPTIC, implementations=implementations, seed=seed)
                            if EPILEPTIC in datasets else []),
        "sweep_credit": (epsilon_sweep_cells(profile, dataset=CREDIT, implementations=implementations, seed=seed)
                         if CREDIT in datasets else []),
        "teachers": teacher_sweep_cells(profile, seed=seed) if EPILEPTIC in datasets else [],
        "conditional": conditional_cells(profile, datasets=only(profile.conditional_datasets), seed=seed),
        "hyperparameters": hyperparameter_cells(profile, implementations=reference.IMPLEMENTATIONS,
                                                datasets=only(profile.hyperparameter_datasets), seed=seed),
        "mnist": mnist_cells(profile, implementations=implementations, seed=seed),
    }


@dataclass
class UtilityPage(SectionPage):
    """The page's inputs and results: what every artefact builder of this package reads.

    section: the :class:`pategan_audit.pages.report.Section` the page writes to (profile, ε, seed).
    requested: the ``datasets`` asked for; ``datasets`` the same in Table 4 row order.
    cells: the experiment groups of :func:`page_cells`; results: the tidy rows of all of them.
    spread: the 90 % bootstrap intervals of its best-of-n cells (:func:`.spread.intervals`, cached).
    """

    section: Any
    profile: UtilityProfile
    requested: tuple[str, ...]
    implementations: tuple[str, ...]
    cells: dict[str, list]
    results: pd.DataFrame
    elapsed: float = 0.0
    client: Any = field(default=None, repr=False)  # a Dask client kept alive for the page's run
    #: the bootstrap intervals of the page's best-of-n cells, computed once (:func:`.spread.intervals`)
    spread: pd.DataFrame | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def datasets(self) -> list[str]:
        return [d for d in reference.DATASETS if d in self.requested]

    @property
    def at_main_epsilon(self) -> bool:
        """The page runs at the paper's ε = 1: only then do its numbers go to the scorecard."""
        return self.section.eps == MAIN_EPSILON

    def rows(self, group: str) -> pd.DataFrame:
        """The result rows of one experiment group."""
        return select(self.results, self.cells[group])

    def runs(self, group: str, *, dataset: str | None = None) -> str:
        """Caption text: what stands behind the numbers of a group (of one dataset)."""
        return runs_text([c for c in self.cells[group] if dataset is None or c.dataset == dataset])


def run_page(section: Any, *, datasets: Sequence[str] = (), implementations: Sequence[str], n_jobs: int | None = None,
             dask_scheduler: str = "") -> UtilityPage:
    """Build the page's cells for ``section``'s profile, ε and seed and run them (cached).

    ``datasets``: Table 4 rows, empty for the profile's; ``dask_scheduler``: address of a running
    Dask scheduler, empty for local joblib workers.
    """
    from ...utility.run import run_cells

    profile = get_profile(section.profile)
    requested = tuple(datasets) if datasets else profile.datasets
    cells = page_cells(profile, datasets=requested, implementations=tuple(implementations), epsilon=section.eps,
                       seed=section.seed)
    client = None
    if dask_scheduler:
        from distributed import Client

        client = Client(dask_scheduler)
    start = time.perf_counter()
    results = run_cells([c for group in cells.values() for c in group],
                        options=RunOptions.defaulted(None, n_jobs=n_jobs, backend="dask" if client else None))
    return UtilityPage(section=section, profile=profile, requested=requested, implementations=tuple(implementations),
                       cells=cells, results=results, elapsed=time.perf_counter() - start, client=client)


def settings(page: UtilityPage) -> list[Block]:
    """The table of every knob behind the page (profile, ε, datasets, iteration caps, subsamples,
    M × S, classifier knobs, distinct cells and trainings, wall time)."""
    p, requested = page.profile, page.requested
    everything = {c for group in page.cells.values() for c in group}
    trainings = sum(c.n_models for c in everything if isinstance(c, UtilityCell))
    knobs = pd.Series({
        "profile": f"{p.name}: {p.description}",
        "main ε (Tables 1, 4, 5, 8-10)": page.eps,
        "datasets": ", ".join(page.datasets),
        "implementations": ", ".join(page.implementations),
        "iteration cap": f"{p.max_iter}" + "".join(f", {d} {n}" for d, n in p.max_iter_by_dataset.items() if d in requested),
        "training subsample": ", ".join(f"{d} {n:,}" for d, n in p.subsample.items() if d in requested) or "none (full splits)",
        "M × S at the main ε": ", ".join(f"{d} {m}×{s}" for d, (m, s) in p.main_tables.items() if d in requested),
        "M × S elsewhere (sweeps)": "{}×{}".format(*p.sweep_tables),
        "classifier knobs": f"MLP max_iter {p.mlp_max_iter}, XGB n_jobs {p.xgb_n_jobs}",
        "distinct cells / generator trainings": f"{len(everything)} / {trainings}",
        "wall time of this run (s, cached cells are read back)": round(page.elapsed, 1),
    }, name="value")
    return table("settings", knobs.astype(str).to_frame())


