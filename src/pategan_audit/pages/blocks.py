"""What a book page shows, as data: an ordered list of blocks per notebook cell.

The builders of the section pages (:mod:`pategan_audit.pages.utility`,
:mod:`pategan_audit.pages.auditing`, :mod:`pategan_audit.pages.traces`) return blocks instead of
displaying, so the numbers, captions and figures of a page are computed and tested in the library;
:func:`publish` is the one place that writes them under ``results/<section>/`` (through
:class:`pategan_audit.pages.report.Section`) and displays them, in order.

Blocks: :class:`SaveTable` (CSV only), :class:`ShowTable` (display only; :func:`table` gives
both), :class:`Text` (Markdown), :class:`Print` (a plain-text line), :class:`Figure` (PNG + PDF,
displayed as PNG), :class:`SaveFigure` / :class:`ShowFigure` (a figure written where it is made
and shown at the end of its cell, as the inline backend shows an open figure; :func:`figure`
gives both), :class:`Glue` (a ``{glue:text}`` value for the narrative) and :class:`Scorecard`
(our values of printed numbers). :class:`SectionPage` gives a page context the section's ε, seed,
captions and :meth:`~SectionPage.show`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence, Union

import pandas as pd

from .archives import regenerate_command

__all__ = ["SaveTable", "ShowTable", "Text", "Print", "Figure", "SaveFigure", "ShowFigure", "Glue", "Scorecard", "Block",
           "table", "scorecard", "figure", "publish", "SectionPage"]


@dataclass(frozen=True)
class SaveTable:
    """Write ``frame`` to ``<results>/<section>/<name>.csv`` (not displayed; ``index``: write the index)."""

    name: str
    frame: pd.DataFrame
    index: bool = True


@dataclass(frozen=True)
class ShowTable:
    """Display ``frame`` on the page."""

    frame: pd.DataFrame


@dataclass(frozen=True)
class Text:
    """Display a Markdown paragraph (captions, notes, "not run at this profile")."""

    markdown: str


@dataclass(frozen=True)
class Figure:
    """Write a matplotlib figure as ``<name>.png`` and ``.pdf``, display it as a PNG and close it."""

    name: str
    figure: Any


@dataclass(frozen=True)
class Glue:
    """A text value the narrative cites as ``{glue:text}`name``` (not displayed where it is made)."""

    name: str
    text: Any


@dataclass(frozen=True)
class Scorecard:
    """Our values of numbers the paper prints (rows for ``Section.scorecard``); no rows, nothing."""

    rows: tuple[dict, ...]


@dataclass(frozen=True)
class Print:
    """Print ``text`` (a plain-text line of the page: the run's profile, the compute summary)."""

    text: str


@dataclass(frozen=True)
class SaveFigure:
    """Write a matplotlib figure as ``<name>.png`` and ``.pdf`` (not displayed, not closed)."""

    name: str
    figure: Any


@dataclass(frozen=True)
class ShowFigure:
    """Display a matplotlib figure and close it."""

    figure: Any


Block = Union[SaveTable, ShowTable, Text, Print, Figure, SaveFigure, ShowFigure, Glue, Scorecard]


def table(name: str, frame: pd.DataFrame, *, index: bool = True) -> list[Block]:
    """Write ``frame`` as ``<name>.csv`` and display it."""
    return [SaveTable(name, frame, index), ShowTable(frame)]


def archive_missing(name: str, cost: str = "") -> Text:
    """The note a page shows where archive ``name`` has not run yet: what it costs and the command
    that computes it (and resumes where an earlier session stopped)."""
    what = f" ({cost})" if cost else ""
    return Text(f"*`{name}` has not run yet{what}: `{regenerate_command(name)} --n-jobs 2` computes it "
                "and resumes where an earlier session stopped.*")


def scorecard(rows: Iterable[dict]) -> Scorecard:
    return Scorecard(tuple(rows))


def figure(name: str, fig: Any) -> tuple[SaveFigure, ShowFigure]:
    """The two blocks of one figure: written as ``<name>``, shown (put the second last in a cell)."""
    return SaveFigure(name, fig), ShowFigure(fig)


def publish(section: Any, blocks: Iterable[Block]) -> None:
    """Write and display ``blocks`` in order (``section``: a :class:`pategan_audit.pages.report.Section`)."""
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image, Markdown, display

    for block in blocks:
        if isinstance(block, SaveTable):
            section.table(block.frame, block.name, index=block.index)
        elif isinstance(block, ShowTable):
            display(block.frame)
        elif isinstance(block, Text):
            display(Markdown(block.markdown))
        elif isinstance(block, Figure):
            section.figure(block.figure, block.name)
            buf = io.BytesIO()
            block.figure.savefig(buf, format="png")
            plt.close(block.figure)
            display(Image(data=buf.getvalue()))
        elif isinstance(block, Print):
            print(block.text)
        elif isinstance(block, SaveFigure):
            section.figure(block.figure, block.name)
        elif isinstance(block, ShowFigure):
            display(block.figure)
            plt.close(block.figure)
        elif isinstance(block, Glue):
            from myst_nb import glue

            glue(block.name, block.text, display=False)
        elif isinstance(block, Scorecard):
            if block.rows:
                section.scorecard(list(block.rows))
        else:
            raise TypeError(f"not a page block: {block!r}")


class SectionPage:
    """What every section page context shares: it holds ``section`` (a
    :class:`pategan_audit.pages.report.Section`: profile, ε, seed, where results go) and shows blocks."""

    section: Any

    @property
    def eps(self) -> float:
        return self.section.eps

    @property
    def seed(self) -> int:
        return self.section.seed

    def caption(self, text: str, runs: str) -> str:
        return self.section.caption(text, runs)

    def show(self, blocks: Sequence[Block]) -> None:
        """Write and display ``blocks`` (:func:`publish`)."""
        publish(self.section, blocks)
