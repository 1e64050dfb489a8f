"""Theme, fixed colours/markers per implementation, and figure saving.

The order is the paper's legend order (Figs. 1, 5, 6-9 of ``ganev2025elusive``): original, updated,
synthcity, turing, borealis, smartnoise; ``corrected`` (ours) comes last and is drawn in
black so it stands apart from the six studied implementations.
"""
from __future__ import annotations

from pathlib import Path

import sys

import matplotlib

if "ipykernel" not in sys.modules:
    matplotlib.use("Agg")  # headless scripts and tests; in a notebook keep the inline backend so figures show

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from ...runner import atomic_write_bytes  # noqa: E402

__all__ = ["axes_of", "ordered_names", "IMPLEMENTATION_ORDER", "IMPLEMENTATION_COLORS", "IMPLEMENTATION_MARKERS", "BEST_SIX", "MIN_FONT_PT", "ANNOTATION_FONT_PT",
           "COLUMN_WIDTH_IN", "FIGURE_DPI", "set_theme", "readable", "save_figure", "caption"]

#: Smallest font size (points) of any text of a figure, at the figure's own size ("1:1").
MIN_FONT_PT = 9.0
#: Size of the numbers and notes written into a plot (bar values, heat-map cells, paper ticks).
ANNOTATION_FONT_PT = 9.0
#: Widest figure (inches, after ``bbox_inches="tight"``) that the book's text column shows at
#: 1:1 or larger: the column holds 676 CSS px at a 1280 px window, 96 CSS px per inch.
COLUMN_WIDTH_IN = 7.0
#: One resolution for the inline figures and the saved PNGs (so both look the same).
FIGURE_DPI = 150

#: Font sizes of the theme (points); every one >= MIN_FONT_PT.
_FONT_SIZES = {
    "font.size": 10.0,
    "axes.labelsize": 10.0,
    "axes.titlesize": 10.5,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9.5,
    "legend.title_fontsize": 10.0,
    "figure.titlesize": 11.0,
}

IMPLEMENTATION_ORDER = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected", "gnmax")
_palette = sns.color_palette("colorblind", 6)
IMPLEMENTATION_COLORS = {name: _palette[i] for i, name in enumerate(IMPLEMENTATION_ORDER[:6])}
IMPLEMENTATION_COLORS["corrected"] = (0.0, 0.0, 0.0)
IMPLEMENTATION_COLORS["gnmax"] = (0.55, 0.0, 0.55)  # ours too: dashed like corrected, in purple
IMPLEMENTATION_MARKERS = dict(zip(IMPLEMENTATION_ORDER, ("o", "s", "^", "D", "v", "P", "*", "X")))
#: the row that stands for the six benchmarked presets where a page shows only their best ("What to use instead")
BEST_SIX = "best of the six"
IMPLEMENTATION_COLORS[BEST_SIX] = (0.45, 0.45, 0.45)
IMPLEMENTATION_MARKERS[BEST_SIX] = "o"
#: the marginal mechanisms (pategan_audit.alternatives): dark colours apart from the six's palette
IMPLEMENTATION_COLORS.update({"priv-bayes": (0.0, 0.5, 0.5), "aim": (0.5, 0.45, 0.0), "mst": (0.65, 0.0, 0.15)})
IMPLEMENTATION_MARKERS.update({"priv-bayes": "p", "aim": "h", "mst": "d"})


def set_theme() -> None:
    """Call once per page: the one seaborn theme used by every figure. Every text is at least
    :data:`MIN_FONT_PT` points; inline and saved figures share one dpi."""
    sns.set_theme(context="notebook", style="whitegrid", rc=_FONT_SIZES)
    plt.rcParams.update({"figure.dpi": FIGURE_DPI, "savefig.dpi": FIGURE_DPI, "savefig.bbox": "tight",
                         "legend.frameon": False})


def readable(fig, minimum: float = MIN_FONT_PT):
    """Raise every text of ``fig`` smaller than ``minimum`` points to ``minimum`` (a safety net
    for a size set elsewhere, e.g. a relative ``"x-small"``); returns ``fig``."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < minimum:
            text.set_fontsize(minimum)
    return fig


def save_figure(fig, name: str, directory: str | Path) -> dict[str, Path]:
    """Write ``fig`` as PNG and PDF under ``directory`` (atomically; no text below
    :data:`MIN_FONT_PT`, see :func:`readable`); return the paths."""
    import io

    readable(fig)
    directory = Path(directory)
    paths = {}
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext)
        paths[ext] = atomic_write_bytes(directory / f"{name}.{ext}", buf.getvalue())
    return paths


def caption(text: str, *, profile: str, runs: str) -> str:
    """Caption text that always states the profile and the number of runs behind a figure."""
    return f"{text} Profile `{profile}`; {runs}."


def axes_of(ax, figsize):
    """``(figure, axes)``: a new figure of ``figsize`` inches when ``ax`` is None, else ``ax``'s."""
    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def ordered_names(names) -> list[str]:
    """Implementation names in the paper's order (:data:`IMPLEMENTATION_ORDER`), others after, sorted."""
    known = [n for n in IMPLEMENTATION_ORDER if n in set(names)]
    return known + sorted(set(names) - set(known))
