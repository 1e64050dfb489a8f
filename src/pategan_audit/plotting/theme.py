"""Theme, fixed colours/markers per implementation, and figure saving.

The order is the paper's legend order (protocols spec, notation): original, updated,
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

from ..runner import atomic_write_bytes  # noqa: E402

__all__ = ["IMPLEMENTATION_ORDER", "IMPLEMENTATION_COLORS", "IMPLEMENTATION_MARKERS", "set_theme", "save_figure", "caption"]

IMPLEMENTATION_ORDER = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected")
_palette = sns.color_palette("colorblind", 6)
IMPLEMENTATION_COLORS = {name: _palette[i] for i, name in enumerate(IMPLEMENTATION_ORDER[:6])}
IMPLEMENTATION_COLORS["corrected"] = (0.0, 0.0, 0.0)
IMPLEMENTATION_MARKERS = dict(zip(IMPLEMENTATION_ORDER, ("o", "s", "^", "D", "v", "P", "*")))


def set_theme() -> None:
    """Call once per page: the one seaborn theme used by every figure."""
    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.95)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "savefig.bbox": "tight", "legend.frameon": False})


def save_figure(fig, name: str, directory: str | Path) -> dict[str, Path]:
    """Write ``fig`` as PNG and PDF under ``directory`` (atomically); return the paths."""
    import io

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
