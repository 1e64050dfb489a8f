"""smartnoise's data handling (implementation notes §smartnoise.data): the snsynth ``TableTransformer``
with style ``"gan"`` and snsql's DP bounds estimator ``approx_bounds``.

* continuous column: ``MinMaxTransformer(negative=True)``: clip to [lower, upper], then map to
  [-1, 1]; inverse ``(v + 1)/2 (upper - lower) + lower``, clipped to [lower, upper].
* categorical column: ``LabelTransformer`` (sorted categories -> 0..c-1) then one-hot; inverse
  argmax -> category.
* bounds: ``"public"`` (user-supplied lower/upper, the released interface), ``"data"`` (the
  training min/max treated as public: the audit harness, implementation notes §data.split), or ``"dp"``
  (``preprocessor_eps > 0``: :func:`approx_bounds` per continuous column with
  ``epsilon_col = preprocessor_eps / #continuous columns``; :attr:`GanTableTransformer.spent_epsilon`
  is what the caller must subtract from its training budget).

Deviation: a constant column (lower == upper) maps to -1 and back to lower, where snsynth
would divide by zero.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from pategan_audit.components.scalers import resolve_bounds

__all__ = ["approx_bounds", "histogram_bin_edges", "GanTableTransformer"]

N_BINS = 64  # snsql approx_bounds: 64 bins per sign, 128 in total


def histogram_bin_edges(index: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """Edges [lo, hi) of approx_bounds' signed power-of-two bins (128 bins, index 0..127):
    64 -> [0, 1); 64 + j -> [2^(j-1), 2^j) for j >= 1; 63 -> [-1, 0);
    63 - j -> [-2^j, -2^(j-1)) for j >= 1."""
    i = np.asarray(index)
    lo = np.where(i >= N_BINS, np.where(i == N_BINS, 0.0, 2.0 ** (i - N_BINS - 1.0)), 0.0)
    hi = np.where(i >= N_BINS, 2.0 ** (i - N_BINS + 0.0), 0.0)
    neg = i < N_BINS
    j = (N_BINS - 1 - i).astype(float)
    lo = np.where(neg, -(2.0**j), lo)
    hi = np.where(neg, np.where(j == 0, -0.0, -(2.0 ** (j - 1))), hi)
    return lo, hi


def _bin_index(values: np.ndarray) -> np.ndarray:
    """Bin of each value (-1 where the value falls outside the histogram and is dropped).

    Deviation: snsql bins a value v < -1 by ``trunc(log2(-v + 1))``, which disagrees with its
    own edges (e.g. v = -2.5 lands in [-2, -1) and trips snsql's internal assert); here a value
    always lands in the bin whose edges contain it: v in [-2^j, -2^(j-1)) -> bin 63 - j.
    """
    v = np.asarray(values, dtype=np.float64)
    idx = np.full(v.shape, -1, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        pos_big = v >= 1.0
        idx[pos_big] = np.floor(np.log2(v[pos_big])).astype(np.int64) + N_BINS + 1
        idx[(v >= 0) & (v < 1.0)] = N_BINS
        idx[(v < 0) & (v >= -1.0)] = N_BINS - 1
        neg_big = v < -1.0
        idx[neg_big] = N_BINS - 1 - np.ceil(np.log2(-v[neg_big])).astype(np.int64)
    # as snsql, values beyond the outermost bins are dropped (on the negative side bin 0 too)
    idx[(idx >= 2 * N_BINS) | ((idx <= 0) & (v < -1.0))] = -1
    return idx


def approx_bounds(values, *, epsilon: float, rng: np.random.Generator) -> tuple[float | None, float | None]:
    """epsilon-DP estimate of (min, max), after snsql ``approx_bounds`` (Desfontaines' thesis).

    1. Histogram the values into 128 signed power-of-two bins (:func:`histogram_bin_edges`).
    2. Add ``Lap(1/epsilon)`` to every bin count (a value changes one count by 1).
    3. Threshold ``K = -ln(2 - 2 p^(1/(n_bins - 1))) / epsilon`` with ``p = 1 - failure_prob``,
       starting at failure_prob = 1e-8 and multiplying it by 10 (up to 1/(2 n_bins)) until at
       least one noisy count exceeds K.
    4. Return the lower edge of the lowest and the upper edge of the highest such bin, or
       ``(None, None)`` if no bin ever exceeds K.
    """
    if not (epsilon > 0 and np.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon}")
    idx = _bin_index(np.asarray(values, dtype=np.float64).ravel())
    n_bins = 2 * N_BINS
    hist = np.bincount(idx[idx >= 0], minlength=n_bins).astype(np.float64)
    hist = hist + rng.laplace(0.0, 1.0 / epsilon, size=n_bins)
    failure_prob, highest = 1e-8, 1.0 / (2 * n_bins)
    exceeds = np.array([], dtype=np.int64)
    while exceeds.size == 0 and failure_prob <= highest:
        p = 1.0 - failure_prob
        K = -np.log(2.0 - 2.0 * p ** (1.0 / (n_bins - 1))) / epsilon
        exceeds = np.flatnonzero(hist > K)
        failure_prob *= 10
    if exceeds.size == 0:
        return None, None
    lo, _ = histogram_bin_edges(exceeds.min())
    _, hi = histogram_bin_edges(exceeds.max())
    return float(lo), float(hi)


class GanTableTransformer:
    """snsynth ``TableTransformer`` style "gan" (see the module docstring)."""

    def __init__(
        self,
        *,
        categorical_columns: Sequence[str] = (),
        bounds: str = "data",
        public_bounds: Mapping[str, Sequence[float]] | None = None,
        preprocessor_eps: float = 0.0,
        rng: np.random.Generator | None = None,
    ):
        if bounds not in ("data", "public", "dp"):
            raise ValueError(f"bounds must be 'data', 'public' or 'dp', got {bounds!r}")
        if bounds == "dp" and not preprocessor_eps > 0:
            raise ValueError("bounds='dp' spends preprocessor_eps on approx_bounds; pass preprocessor_eps > 0 (e.g. 0.1)")
        if bounds == "dp" and rng is None:
            raise ValueError("bounds='dp' draws Laplace noise; pass rng=np.random.default_rng(seed)")
        self.categorical_columns = list(categorical_columns)
        self.bounds_mode = bounds
        self.public_bounds = public_bounds
        self.preprocessor_eps = float(preprocessor_eps)
        self.rng = rng
        self.spent_epsilon = 0.0
        self.bounds: dict[str, tuple[float, float]] = {}
        self.columns: list[str] | None = None

    def fit(self, df: pd.DataFrame) -> "GanTableTransformer":
        if not isinstance(df, pd.DataFrame) or len(df) == 0:
            raise ValueError("GanTableTransformer.fit takes a non-empty pandas DataFrame")
        unknown = sorted(set(self.categorical_columns) - set(df.columns))
        if unknown:
            raise ValueError(f"categorical_columns {unknown} are not columns of the table")
        self.columns = list(df.columns)
        self.dtypes = df.dtypes.copy()
        continuous = [c for c in df.columns if c not in self.categorical_columns]
        if self.bounds_mode == "dp":
            eps_col = self.preprocessor_eps / max(len(continuous), 1)
            for c in continuous:
                lo, hi = approx_bounds(df[c].to_numpy(), epsilon=eps_col, rng=self.rng)
                if lo is None:
                    raise ValueError(f"approx_bounds found no bin above its threshold for column {c!r}; raise preprocessor_eps")
                self.bounds[c] = (lo, hi)
            self.spent_epsilon = self.preprocessor_eps if continuous else 0.0
        else:
            self.bounds = resolve_bounds(df, bounds=self.bounds_mode, public_bounds=self.public_bounds, columns=continuous)
        self.categories: dict[str, np.ndarray] = {}
        self.blocks: list[tuple[str, int, int]] = []  # (column, start, width)
        start = 0
        for c in df.columns:
            if c in self.categorical_columns:
                self.categories[c] = self._categories(df, c)
                width = len(self.categories[c])
            else:
                width = 1
            self.blocks.append((c, start, width))
            start += width
        self.width = start
        return self

    def _categories(self, df: pd.DataFrame, column: str) -> np.ndarray:
        """Category list of a categorical column: read from the data (snsynth's LabelTransformer),
        or, with ``bounds="public"`` and ``public_bounds[column] = (lo, hi)`` given, the integer
        range lo..hi — public metadata, so the presence of a record cannot change the domain."""
        if self.bounds_mode == "public" and self.public_bounds and column in self.public_bounds:
            lo, hi = self.public_bounds[column]
            if float(lo) != int(lo) or float(hi) != int(hi) or hi < lo:
                raise ValueError(f"public_bounds[{column!r}] = {(lo, hi)}: a categorical domain needs integer lo <= hi")
            domain = np.arange(int(lo), int(hi) + 1)
            seen = pd.unique(df[column].to_numpy())
            outside = sorted(set(seen.tolist()) - set(domain.tolist()))
            if outside:
                raise ValueError(f"column {column!r} has values {outside[:5]} outside its public domain {int(lo)}..{int(hi)}")
            return domain.astype(df[column].dtype) if pd.api.types.is_integer_dtype(df[column]) else domain
        return np.sort(pd.unique(df[column].to_numpy()))

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """[n, width] float64: continuous in [-1, 1], categorical one-hot."""
        if self.columns is None:
            raise RuntimeError("call fit() first")
        out = np.zeros((len(df), self.width))
        for c, s, w in self.blocks:
            if c in self.categories:
                out[:, s : s + w] = (df[c].to_numpy()[:, None] == self.categories[c][None, :]).astype(np.float64)
            else:
                lo, hi = self.bounds[c]
                x = np.clip(df[c].to_numpy(dtype=np.float64), lo, hi)
                out[:, s] = 2.0 * (x - lo) / ((hi - lo) or 1.0) - 1.0
        return out

    def fit_transform(self, df: pd.DataFrame) -> np.ndarray:
        return self.fit(df).transform(df)

    def inverse_transform(self, values: np.ndarray) -> pd.DataFrame:
        """Continuous: ``(v + 1)/2 (upper - lower) + lower`` clipped to the bounds (floats, no
        integer handling); categorical: argmax -> category."""
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != getattr(self, "width", -1):
            raise ValueError(f"expected an array [n, {getattr(self, 'width', '?')}], got shape {v.shape}")
        data = {}
        for c, s, w in self.blocks:
            if c in self.categories:
                data[c] = self.categories[c][v[:, s : s + w].argmax(axis=1)]
            else:
                lo, hi = self.bounds[c]
                data[c] = np.clip((v[:, s] + 1.0) / 2.0 * (hi - lo) + lo, lo, hi)
        return pd.DataFrame(data, columns=self.columns)
