"""What every section notebook does around its computation: validate the papermill
parameters, set the plotting theme, and write each table and figure it shows under
``results/<section>/`` (atomically), plus a ``run.json`` recording the parameters used.

Usage in a notebook, right after the ``parameters`` cell::

    from pategan_audit.report import Section
    sec = Section("utility", profile=profile, eps=eps, seed=seed, results_dir=results_dir)
    sec.table(df, "table4")          # results/utility/table4.csv, returns df for display
    sec.figure(fig, "figure1")       # results/utility/figure1.png + .pdf
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from .runner import REPO_ROOT, atomic_write_text

__all__ = ["PROFILES", "Section", "coerce_parameters"]

PROFILES = ("smoke", "book", "large", "paper")


def coerce_parameters(*, profile: Any, eps: Any, seed: Any) -> tuple[str, float, int]:
    """Papermill passes ``-p`` values typed as written (``-p eps 1`` is an int): check and
    normalise them with the rules of :mod:`pategan_audit.params` (a seed of 1.5 is an error,
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
        self.dir.mkdir(parents=True, exist_ok=True)
        self.params = {"section": name, "profile": self.profile, "eps": self.eps, "seed": self.seed, **extra}
        self.outputs: list[str] = []
        set_theme()
        self._write_run()

    def _write_run(self) -> None:
        atomic_write_text(self.dir / "run.json", json.dumps({**self.params, "outputs": self.outputs}, indent=2, default=str))

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
