"""What every section notebook does around its computation: validate the papermill
parameters, set the plotting theme, and write each table and figure it shows under
``results/<section>/`` (atomically), plus a ``run.json`` recording the parameters used.

Usage in a notebook, right after the ``parameters`` cell::

    from pategan_audit.pages.report import Section
    sec = Section("utility", profile=profile, eps=eps, seed=seed, results_dir=results_dir)
    sec.table(df, "table4")          # results/utility/table4.csv, returns df for display
    sec.figure(fig, "figure1")       # results/utility/figure1.png + .pdf

One folder holds one run: a new ``Section`` first moves whatever an earlier run left in
``results/<section>/`` to ``results/.previous/<section>/`` (one rename; the backup before it is
dropped) and records that in ``run.json``, so that a run stopped mid-way leaves its own outputs
only, never a mix of two runs under one ``run.json``. Outputs are then written straight into the
folder as the notebook computes them (a figure written early is there at the end).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from ..runner import REPO_ROOT, atomic_write_text

__all__ = ["PROFILES", "Section", "coerce_parameters"]

PROFILES = ("smoke", "book", "large", "paper")
#: where a section's previous run goes when a new run starts: ``<results>/.previous/<section>/``
PREVIOUS = ".previous"


def coerce_parameters(*, profile: Any, eps: Any, seed: Any) -> tuple[str, float, int]:
    """Papermill passes ``-p`` values typed as written (``-p eps 1`` is an int): check and
    normalise them with the rules of :mod:`pategan_audit.pages.params` (a seed of 1.5 is an error,
    not 1), with errors that say how to fix the call."""
    from .params import RULES, _choice

    profile = _choice("profile", profile, PROFILES)
    return profile, RULES["eps"]("eps", eps, None), RULES["seed"]("seed", seed, None)


class Section:
    """Output sink of one section notebook (see module docstring)."""

    def __init__(self, name: str, *, profile: Any, eps: Any, seed: Any, results_dir: str | Path = "results", **extra: Any):
        from .plotting import set_theme

        self.name = name
        self.profile, self.eps, self.seed = coerce_parameters(profile=profile, eps=eps, seed=seed)
        root = Path(results_dir)
        self.dir = (root if root.is_absolute() else REPO_ROOT / root) / name
        self.params = {"section": name, "profile": self.profile, "eps": self.eps, "seed": self.seed, **extra}
        self.replaced = _set_aside(self.dir, self.dir.parent / PREVIOUS / name, self.params)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.outputs: list[str] = []
        set_theme()
        self._write_run()

    def _write_run(self) -> None:
        run = {**self.params, "outputs": self.outputs, **({"replaced": self.replaced} if self.replaced else {})}
        atomic_write_text(self.dir / "run.json", json.dumps(run, indent=2, default=str))

    def table(self, df: pd.DataFrame, name: str, *, index: bool = True) -> pd.DataFrame:
        atomic_write_text(self.dir / f"{name}.csv", df.to_csv(index=index))
        self.outputs.append(f"{name}.csv")
        self._write_run()
        return df

    def figure(self, fig, name: str):
        from .plotting import save_figure

        save_figure(fig, name, self.dir)
        self.outputs += [f"{name}.png", f"{name}.pdf"]
        self._write_run()
        return fig

    def scorecard(self, rows: pd.DataFrame | list[dict]) -> pd.DataFrame:
        """Record our values of numbers the paper prints, for the book's scorecard page.

        Columns: ``table``, ``row``, ``column`` — the keys of :mod:`pategan_audit.reference`
        (e.g. ``("table4", "cervical_cancer", "smartnoise")``) — and ``ours``; optional ``runs``
        (what stands behind the value), ``ceiling`` (largest value the profile can certify,
        for audit bounds) and ``interval_lo``/``interval_hi`` (our measured 90 % range, from which
        the scorecard takes the cell's tolerance). Appends to ``<results>/<section>/scorecard.csv`` within one run.
        """
        df = pd.DataFrame(rows)
        missing = {"table", "row", "column", "ours"} - set(df.columns)
        if missing:
            raise ValueError(f"scorecard rows lack columns {sorted(missing)}")
        df = df.assign(section=self.name, profile=self.profile)
        for col in ("runs", "ceiling", "interval_lo", "interval_hi"):
            if col not in df.columns:
                df[col] = None
        df = df[["section", "table", "row", "column", "ours", "profile", "runs", "ceiling", "interval_lo", "interval_hi"]]
        self._scorecard = pd.concat([getattr(self, "_scorecard", None), df], ignore_index=True) if hasattr(self, "_scorecard") else df
        self.table(self._scorecard, "scorecard", index=False)
        return df

    def caption(self, text: str, runs: str) -> str:
        """Caption stating the profile and the number of runs behind a result."""
        return f"{text} (profile `{self.profile}`; {runs}.)"


def _set_aside(folder: Path, backup: Path, params: dict) -> dict | None:
    """Move an earlier run's outputs out of ``folder`` to ``backup`` (replacing an older backup)
    with one rename, so that ``folder`` starts empty; returns what was moved (None when there was
    nothing). Says so on stderr when that run had other parameters than ``params``."""
    if not folder.is_dir() or not any(folder.iterdir()):
        return None
    files = sorted(p.name for p in folder.iterdir())
    try:
        before = json.loads((folder / "run.json").read_text())
    except (OSError, ValueError):
        before = {}
    before = {k: v for k, v in before.items() if k not in ("outputs", "replaced")} if isinstance(before, dict) else {}
    if backup.exists():
        shutil.rmtree(backup)
    backup.parent.mkdir(parents=True, exist_ok=True)
    os.replace(folder, backup)
    moved = {"files": len(files), "moved_to": _shown(backup), "run": before}
    if before != params:
        was = ", ".join(f"{k} {before[k]}" for k in ("profile", "eps", "seed") if k in before) or "no run.json"
        print(f"{_shown(folder)}: the previous run's {len(files)} files ({was}) moved to {_shown(backup)}; this "
              "folder holds this run's outputs only", file=sys.stderr)
    return moved


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT.resolve()))
    except ValueError:
        return str(path)
