"""What the auditing page shows, as data: the blocks of :mod:`pategan_audit.utility.page.blocks`
(:class:`SaveTable`, :class:`ShowTable`, :class:`Text`, :class:`Glue`, :class:`Scorecard`) plus
three the auditing page needs:

* :class:`Print`: a line of plain text (the run's profile, the compute summary);
* :class:`SaveFigure` / :class:`ShowFigure`: a figure is written where it is made and shown at
  the end of its cell, as the notebook's inline backend shows an open figure; the two blocks
  keep that order explicit (a figure is closed once shown).

:func:`publish` writes and displays them in order (``section``: a
:class:`pategan_audit.report.Section`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Union

from ...utility.page import blocks as common
from ...utility.page.blocks import Glue, SaveTable, Scorecard, ShowTable, Text, scorecard, table

__all__ = ["SaveTable", "ShowTable", "Text", "Glue", "Scorecard", "Print", "SaveFigure", "ShowFigure", "Block", "table",
           "scorecard", "figure", "publish"]


@dataclass(frozen=True)
class Print:
    """Print ``text`` (a plain-text line of the page)."""

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


Block = Union[common.Block, Print, SaveFigure, ShowFigure]


def figure(name: str, fig: Any) -> tuple[SaveFigure, ShowFigure]:
    """The two blocks of one figure: written as ``<name>``, shown (put the second last in a cell)."""
    return SaveFigure(name, fig), ShowFigure(fig)


def publish(section: Any, blocks: Iterable[Block]) -> None:
    """Write and display ``blocks`` in order."""
    from IPython.display import display

    for block in blocks:
        if isinstance(block, Print):
            print(block.text)
        elif isinstance(block, SaveFigure):
            section.figure(block.figure, block.name)
        elif isinstance(block, ShowFigure):
            import matplotlib.pyplot as plt

            display(block.figure)
            plt.close(block.figure)
        else:
            common.publish(section, [block])
