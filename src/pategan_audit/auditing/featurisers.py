"""Featurisers: turn one synthetic table into a fixed-length feature vector for the attack.

Paper §6.2 uses two black-box attacks (implementation notes §audit.querybased, §audit.groundhog):

* **Querybased** (worst-case dataset): :class:`QueryFeaturiser` counts the synthetic rows equal
  to each of the 8 points of {0,1}³ (authors' ``featurize_df_queries``).
* **GroundHog** (Cervical): :class:`NaiveFeaturiser` = F_naive of Stadler et al. (USENIX Sec.
  2022): per column [min, max, mean, median, spread] → 5·d features (29 · 5 = 145 on Cervical).
  Deviation note: the paper says standard deviation, the authors' code uses the (n−1)
  variance (implementation notes §audit.groundhog); ``spread="variance"`` (default, as the authors' code) or ``"std"`` (as the paper).

:class:`HistogramFeaturiser` and :class:`CorrelationFeaturiser` are the optional extras
the authors' code also computes (not reported by the paper). :class:`RowCountFeaturiser` (ours,
not the paper's) reads only the number of synthetic rows: the attacker of the game's size
channel, for calibration. Featurisers are frozen dataclasses: they
pickle to parallel workers and describe themselves in cache keys.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["QueryFeaturiser", "NaiveFeaturiser", "RowCountFeaturiser", "HistogramFeaturiser", "CorrelationFeaturiser", "WORST_CASE_POINTS"]

#: The 8 points of {0,1}³ in ``itertools.product`` order (000, 001, ..., 111), as the authors' code.
WORST_CASE_POINTS: tuple[tuple[int, ...], ...] = tuple(itertools.product((0, 1), repeat=3))


def _frame(df) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"featurisers take a pandas DataFrame (one synthetic table), got {type(df).__name__}")
    return df


@dataclass(frozen=True)
class QueryFeaturiser:
    """Counts of synthetic rows exactly equal to each query point (Querybased attack, implementation notes §audit.querybased).

    ``points``: tuples of length = number of columns; default the 8 points of {0,1}³. Rows that
    match no point (e.g. a value 2, or NaN) are counted nowhere.
    """

    points: tuple[tuple[float, ...], ...] = WORST_CASE_POINTS

    @property
    def names(self) -> list[str]:
        return ["count_" + "".join(str(int(v)) if float(v).is_integer() else str(v) for v in p) for p in self.points]

    def __call__(self, df: pd.DataFrame) -> np.ndarray:
        df = _frame(df)
        width = len(self.points[0])
        if df.shape[1] != width:
            raise ValueError(f"query points have {width} coordinates but the table has {df.shape[1]} columns {list(df.columns)}")
        values = df.to_numpy(dtype=float)
        pts = np.asarray(self.points, dtype=float)  # (n_points, d)
        if len(values) == 0:
            return np.zeros(len(pts))
        equal = (values[:, None, :] == pts[None, :, :]).all(axis=2)  # (rows, points)
        return equal.sum(axis=0).astype(float)


@dataclass(frozen=True)
class RowCountFeaturiser:
    """The number of synthetic rows, and nothing else: the size-reading attacker (ours).

    In the paper's Querybased game the synthetic table has as many rows as the training data
    (implementation notes §audit.querybased: 4 rows out, 5 in), so this one feature tells the
    worlds apart for every generator, whatever it does with its data; with the same size in both
    worlds it carries no signal. It calibrates what the size channel alone can reach.
    """

    names = ("n_rows",)

    def __call__(self, df: pd.DataFrame) -> np.ndarray:
        return np.array([float(len(_frame(df)))])


@dataclass(frozen=True)
class NaiveFeaturiser:
    """F_naive: per column [min, max, mean, median, spread] (GroundHog attack, implementation notes §audit.groundhog).

    ``spread``: "variance" (ddof = 1, the authors' ``Series.var()``) or "std" (ddof = 1, the
    paper's wording). Both are monotone in each other, which does not matter to a forest.
    """

    spread: str = "variance"

    def __post_init__(self) -> None:
        if self.spread not in ("variance", "std"):
            raise ValueError(f"spread must be 'variance' (as the authors' code) or 'std' (as the paper), got {self.spread!r}")

    def names(self, columns) -> list[str]:
        return [f"{c}_{s}" for c in columns for s in ("min", "max", "mean", "median", self.spread)]

    def __call__(self, df: pd.DataFrame) -> np.ndarray:
        df = _frame(df)
        x = df.to_numpy(dtype=float)
        if len(x) == 0:
            raise ValueError("cannot featurise an empty synthetic table; sample at least one row")
        with np.errstate(invalid="ignore", divide="ignore"):
            spread = np.var(x, axis=0, ddof=1) if len(x) > 1 else np.full(x.shape[1], np.nan)
            if self.spread == "std":
                spread = np.sqrt(spread)
            stats = np.stack([x.min(axis=0), x.max(axis=0), x.mean(axis=0), np.median(x, axis=0), spread], axis=1)
        return stats.reshape(-1)


@dataclass(frozen=True)
class HistogramFeaturiser:
    """Relative frequencies per column over a fixed domain (authors' ``featurize_df_histogram``).

    ``domain``: {column: ("bins", lo, hi)} for columns with more than ``n_bins`` values (equal-width
    bins on [lo, hi], right-closed, values outside counted nowhere) or {column: ("categories",
    v1, v2, ...)}; build it from the *reference* table with :meth:`from_reference`.
    """

    domain: dict = field(default_factory=dict)
    n_bins: int = 5

    @classmethod
    def from_reference(cls, df: pd.DataFrame, *, n_bins: int = 5) -> "HistogramFeaturiser":
        domain = {}
        for col in df.columns:
            values = df[col]
            if values.nunique() > n_bins:
                domain[col] = ("bins", float(values.min()), float(values.max()))
            else:
                domain[col] = ("categories", *[float(v) for v in values.value_counts().index])
        return cls(domain=domain, n_bins=n_bins)

    def __call__(self, df: pd.DataFrame) -> np.ndarray:
        df = _frame(df)
        missing = [c for c in self.domain if c not in df.columns]
        if missing:
            raise ValueError(f"columns {missing} of the histogram domain are not in the table")
        parts = []
        n = max(len(df), 1)
        for col, spec in self.domain.items():
            x = df[col].to_numpy(dtype=float)
            if spec[0] == "bins":
                edges = np.linspace(spec[1], spec[2], self.n_bins + 1)
                idx = np.searchsorted(edges, x, side="left") - 1  # right-closed bins (lo, hi]
                idx[x == edges[0]] = 0  # pandas includes the lowest edge in the first bin
                ok = (idx >= 0) & (idx < self.n_bins)
                parts.append(np.bincount(idx[ok], minlength=self.n_bins) / n)
            else:
                cats = np.asarray(spec[1:], dtype=float)
                parts.append((x[:, None] == cats[None, :]).sum(axis=0) / n)
        return np.concatenate(parts).astype(float)


@dataclass(frozen=True)
class CorrelationFeaturiser:
    """Upper triangle (above the diagonal) of the Pearson correlation matrix (authors'
    ``featurize_df_corr``); constant columns give NaN, as in pandas."""

    def __call__(self, df: pd.DataFrame) -> np.ndarray:
        df = _frame(df)
        corr = df.astype(float).corr().to_numpy()
        return corr[np.triu_indices_from(corr, k=1)]
