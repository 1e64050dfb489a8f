"""One look for every figure of the book.

``theme`` holds the seaborn theme, the fixed implementation order and colours, and
``save_figure``; the per-section modules (``utility``, ``traces``, ``auditing``) hold one
function per kind of figure. Every plotting function takes data (and an optional ``ax``) and
returns the figure; none uses the pyplot state machine beyond creating figures.
"""
from .theme import (
    COLUMN_WIDTH_IN,
    IMPLEMENTATION_COLORS,
    IMPLEMENTATION_MARKERS,
    IMPLEMENTATION_ORDER,
    MIN_FONT_PT,
    readable,
    save_figure,
    set_theme,
)

__all__ = ["COLUMN_WIDTH_IN", "IMPLEMENTATION_COLORS", "IMPLEMENTATION_MARKERS", "IMPLEMENTATION_ORDER", "MIN_FONT_PT",
           "readable", "save_figure", "set_theme"]
