"""The training-traces page's scorecard entries (``ganev2025elusive`` §6.1, Figures 2-4): the rows
of :func:`pategan_audit.traces.records.rows_of` for this profile's run, only where it is comparable
with the paper's. The same rows, computed at the authors' run sizes, are the ``traces_paper``
archive (:func:`pategan_audit.traces.records.archive_records`)."""
from __future__ import annotations

from ...traces.records import rows_of
from ..blocks import Block, Print, scorecard
from .context import TracesPage

__all__ = ["scorecard_rows", "scorecard_entries"]


def scorecard_rows(page: TracesPage) -> list[dict]:
    """:func:`~pategan_audit.traces.records.rows_of` of the page's traces."""
    return rows_of(page.results, page.profile, page.seed)


def scorecard_entries(page: TracesPage) -> list[Block]:
    """The rows (nothing written without any) and how many there are."""
    rows = scorecard_rows(page)
    return [scorecard(rows), Print(f"{len(rows)} scorecard entries written")]

