"""What the utility page shows, as data: an ordered list of blocks per notebook cell.

Each builder of :mod:`pategan_audit.utility.page` returns blocks instead of displaying, so the
numbers, captions and figures of the page (``ganev2025elusive`` §5 and Appendix C) are computed
and tested in the library; :func:`publish` is the one place that writes them under
``results/utility/`` (through :class:`pategan_audit.report.Section`) and displays them, in order.

Blocks: :class:`SaveTable` (CSV only), :class:`ShowTable` (display only; :func:`table` gives
both), :class:`Text` (Markdown), :class:`Figure` (PNG + PDF, displayed as PNG), :class:`Glue`
(a ``{glue:text}`` value for the narrative) and :class:`Scorecard` (our values of printed numbers).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Union

import pandas as pd

__all__ = ["SaveTable", "ShowTable", "Text", "Figure", "Glue", "Scorecard", "Block", "table", "scorecard", "publish"]


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


Block = Union[SaveTable, ShowTable, Text, Figure, Glue, Scorecard]


def table(name: str, frame: pd.DataFrame, *, index: bool = True) -> list[Block]:
    """Write ``frame`` as ``<name>.csv`` and display it."""
    return [SaveTable(name, frame, index), ShowTable(frame)]


def scorecard(rows: Iterable[dict]) -> Scorecard:
    return Scorecard(tuple(rows))


def publish(section: Any, blocks: Iterable[Block]) -> None:
    """Write and display ``blocks`` in order (``section``: a :class:`pategan_audit.report.Section`)."""
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
        elif isinstance(block, Glue):
            from myst_nb import glue

            glue(block.name, block.text, display=False)
        elif isinstance(block, Scorecard):
            if block.rows:
                section.scorecard(list(block.rows))
        else:
            raise TypeError(f"not a page block: {block!r}")
