"""One run of the training-traces page (``notebooks/training_traces.py``; ``ganev2025elusive``
§6.1, Figures 2, 3, 4 and 11): the traces of the profile, computed once
(:func:`pategan_audit.traces.compute_traces`, cached), and the settings table behind them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...traces.profiles import TraceProfile, get_profile
from ...traces.suite import TraceResults, compute_traces
from ..blocks import Block, Print, SectionPage, table
from ...runner import RunOptions

__all__ = ["TracesPage", "run_page", "settings"]


@dataclass
class TracesPage(SectionPage):
    """The page's inputs and traces: what every builder of this package reads.

    section: the :class:`pategan_audit.pages.report.Section` the page writes to (profile, ε, seed);
    results: the traces (:class:`~pategan_audit.traces.suite.TraceResults`); loss_definition:
    which "others" line Figures 3 and 11 draw ("paper" or "notebook").
    """

    section: Any
    profile: TraceProfile
    results: TraceResults
    loss_definition: str = "paper"

    @property
    def knobs(self) -> dict:
        """The knobs behind the numbers (profile, ε, seed, runs, caps)."""
        return self.results.settings

    def first_losses(self) -> pd.DataFrame:
        """The loss traces of the page's own seed (one run per implementation)."""
        losses = self.results.losses
        return losses[losses.seed == self.seed]


def run_page(section: Any, *, n_jobs: int | None = None, loss_definition: str = "paper",
             dask_scheduler: str = "") -> TracesPage:
    """Compute (or read from the cache) the traces of ``section``'s profile, ε and seed.
    ``dask_scheduler``: address of a running Dask scheduler, empty for local joblib workers."""
    client = None
    if dask_scheduler:
        from distributed import Client

        client = Client(dask_scheduler)  # joblib's "dask" backend uses the default client
    try:
        results = compute_traces(section.profile, epsilon=section.eps, seed=section.seed,
                                 options=RunOptions.defaulted(None, n_jobs=n_jobs, backend="dask" if client else None))
    finally:
        if client is not None:
            client.close()
    return TracesPage(section=section, profile=get_profile(section.profile), results=results,
                      loss_definition=loss_definition)


def settings(page: TracesPage) -> list[Block]:
    """The run's profile, ε and seed, and the table of every knob behind the page."""
    sec = page.section
    return [Print(f"profile={sec.profile}, eps={sec.eps}, seed={sec.seed}"),
            *table("settings", pd.Series(page.knobs, name="value").astype(str).to_frame())]
