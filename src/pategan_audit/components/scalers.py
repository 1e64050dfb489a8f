"""Min-max scalers, bounds resolution and dtype restoration.

* :class:`MinMaxScaler`: scikit-learn's ``MinMaxScaler`` semantics (range [0, 1] or [-1, 1],
  optional clipping), used by the audit's wrappers of updated and borealis (implementation notes §updated.data, §borealis.data harness deltas).
* :class:`OriginalScaler`: original's own per-column scaler (implementation notes §original.data):
  ``m = min(X)``, ``R = max(X - m)``, ``X' = (X - m) / (R + 1e-8)``, inverse ``v (R + 1e-8) + m``.
* :func:`resolve_bounds`: where the bounds come from. ``"data"`` reads min/max from the training
  table (the Metadata violations V10-V13, and what every implementation does as benchmarked,
  implementation notes §data.split); ``"public"`` takes them from the user and clips inputs to them (the fix,
  implementation notes §corrected.bounds).
* :func:`restore_dtypes`: the one dtype restorer: the benchmark's post-processing (implementation notes §data.postprocessing: int64 columns are rounded then cast, every other column is cast directly, so
  float -> int16 truncates) or the audit's (``policy="audit"``: every integer column rounded).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["BOUNDS_MODES", "RESTORE_POLICIES", "resolve_bounds", "MinMaxScaler", "OriginalScaler", "restore_dtypes"]

BOUNDS_MODES = ("data", "public")
ORIGINAL_EPS = 1e-8  # original/PATE_GAN.py adds 1e-8 to the range (implementation notes §original.data)


def _check_frame(df: pd.DataFrame, what: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{what} takes a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise ValueError(f"{what}: the table is empty")


def resolve_bounds(
    df: pd.DataFrame,
    *,
    bounds: str = "data",
    public_bounds: Mapping[str, Sequence[float]] | None = None,
    columns: Sequence[str] | None = None,
) -> dict[str, tuple[float, float]]:
    """Per-column ``(lo, hi)`` for ``columns`` (default: all columns of ``df``).

    ``bounds="data"`` reads the training min and max (non-private metadata, V10-V13);
    ``bounds="public"`` returns ``public_bounds`` and requires an entry for every column.
    """
    columns = list(df.columns if columns is None else columns)
    if bounds not in BOUNDS_MODES:
        raise ValueError(f"bounds must be one of {BOUNDS_MODES}, got {bounds!r}")
    if bounds == "data":
        if public_bounds is not None:
            raise ValueError("public_bounds is only used with bounds='public'; drop it or set bounds='public'")
        return {c: (float(df[c].min()), float(df[c].max())) for c in columns}
    if public_bounds is None:
        raise ValueError("bounds='public' needs public_bounds={column: (lo, hi)} for every column")
    missing = [c for c in columns if c not in public_bounds]
    if missing:
        raise ValueError(f"public_bounds lacks columns {missing[:5]}{'...' if len(missing) > 5 else ''}; give (lo, hi) for each")
    out = {}
    for c in columns:
        lo, hi = (float(v) for v in public_bounds[c])
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
            raise ValueError(f"public_bounds[{c!r}] = {public_bounds[c]!r} must be finite with lo <= hi")
        out[c] = (lo, hi)
    return out


def _clip_frame(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(values, lo), hi)


class MinMaxScaler:
    """Per-column affine map of ``[lo, hi]`` onto ``feature_range`` (scikit-learn semantics:
    a constant column has scale 1, so it maps to ``feature_range[0]``).

    clip: clip transformed values to ``feature_range`` (scikit-learn ``clip=True``, the audit's
        setting for updated and borealis).
    bounds / public_bounds: see :func:`resolve_bounds`; with ``"public"`` inputs are clipped to
        the public bounds before scaling.
    """

    def __init__(
        self,
        *,
        feature_range: tuple[float, float] = (0.0, 1.0),
        clip: bool = True,
        bounds: str = "data",
        public_bounds: Mapping[str, Sequence[float]] | None = None,
    ):
        a, b = feature_range
        if not a < b:
            raise ValueError(f"feature_range must be (low, high) with low < high, got {feature_range}")
        self.feature_range = (float(a), float(b))
        self.clip = clip
        self.bounds_mode = bounds
        self.public_bounds = public_bounds
        self.columns: list[str] | None = None
        self.bounds: dict[str, tuple[float, float]] = {}

    def fit(self, df: pd.DataFrame) -> "MinMaxScaler":
        _check_frame(df, "MinMaxScaler.fit")
        self.columns = list(df.columns)
        self.bounds = resolve_bounds(df, bounds=self.bounds_mode, public_bounds=self.public_bounds)
        lo = np.array([self.bounds[c][0] for c in self.columns])
        hi = np.array([self.bounds[c][1] for c in self.columns])
        rng = hi - lo
        rng[rng == 0] = 1.0
        a, b = self.feature_range
        self.data_min_, self.data_max_ = lo, hi
        self.scale_ = (b - a) / rng
        self.min_ = a - lo * self.scale_
        return self

    def _values(self, df: pd.DataFrame) -> np.ndarray:
        if self.columns is None:
            raise RuntimeError("call fit() first")
        missing = [c for c in self.columns if c not in df.columns]
        if missing:
            raise ValueError(f"columns {missing[:5]} are missing from the table to transform")
        return df[self.columns].to_numpy(dtype=np.float64)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """[n, d] float64 array in ``feature_range`` (when clipping or within the bounds)."""
        x = self._values(df)
        if self.bounds_mode == "public":
            x = _clip_frame(x, self.data_min_, self.data_max_)
        v = x * self.scale_ + self.min_
        if self.clip:
            v = np.clip(v, *self.feature_range)
        return v

    def fit_transform(self, df: pd.DataFrame) -> np.ndarray:
        return self.fit(df).transform(df)

    def inverse_transform(self, values: np.ndarray, *, clip: bool = False) -> pd.DataFrame:
        """Back to the original scale; ``clip=True`` first clips to ``feature_range`` (borealis
        harness: output clipped to [0, 1] before the inverse, implementation notes §borealis.generation)."""
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != len(self.columns or []):
            raise ValueError(f"expected an array [n, {len(self.columns or [])}], got shape {v.shape}")
        if clip:
            v = np.clip(v, *self.feature_range)
        return pd.DataFrame((v - self.min_) / self.scale_, columns=self.columns)


class OriginalScaler:
    """original's scaler (PATE_GAN.py, implementation notes §original.data): ``m = min``, ``R = max(X - m)``,
    ``X' = (X - m)/(R + 1e-8)`` in [0, 1); inverse ``v (R + 1e-8) + m``. No clipping and no
    integer handling on the way back (the harness rounds later, :func:`restore_dtypes`).

    ``bounds="data"`` is the released behaviour (V10); ``"public"`` uses ``m = lo``,
    ``R = hi - lo`` and clips inputs to ``[lo, hi]``.
    """

    def __init__(self, *, bounds: str = "data", public_bounds: Mapping[str, Sequence[float]] | None = None):
        self.bounds_mode = bounds
        self.public_bounds = public_bounds
        self.columns: list[str] | None = None
        self.bounds: dict[str, tuple[float, float]] = {}

    def fit(self, df: pd.DataFrame) -> "OriginalScaler":
        _check_frame(df, "OriginalScaler.fit")
        self.columns = list(df.columns)
        self.bounds = resolve_bounds(df, bounds=self.bounds_mode, public_bounds=self.public_bounds)
        self.min_ = np.array([self.bounds[c][0] for c in self.columns])
        self.range_ = np.array([self.bounds[c][1] for c in self.columns]) - self.min_
        return self

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        if self.columns is None:
            raise RuntimeError("call fit() first")
        x = df[self.columns].to_numpy(dtype=np.float64)
        if self.bounds_mode == "public":
            x = _clip_frame(x, self.min_, self.min_ + self.range_)
        return (x - self.min_) / (self.range_ + ORIGINAL_EPS)

    def fit_transform(self, df: pd.DataFrame) -> np.ndarray:
        return self.fit(df).transform(df)

    def inverse_transform(self, values: np.ndarray) -> pd.DataFrame:
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != len(self.columns or []):
            raise ValueError(f"expected an array [n, {len(self.columns or [])}], got shape {v.shape}")
        return pd.DataFrame(v * (self.range_ + ORIGINAL_EPS) + self.min_, columns=self.columns)


#: Dtype-restoration policies of :func:`restore_dtypes`.
RESTORE_POLICIES = ("benchmark", "audit")


def restore_dtypes(df: pd.DataFrame, dtypes: Mapping[str, object] | pd.Series, *, policy: str = "benchmark") -> pd.DataFrame:
    """Cast a synthetic table back to the training dtypes: the one dtype restorer.

    The authors post-process synthetic tables in two ways, kept apart as ``policy``:

    * ``"benchmark"`` (the utility benchmark, ``ganev2025elusive`` §5; implementation notes §data.postprocessing):
      columns whose target dtype is int64 (the platform default integer) are rounded to the
      nearest integer (numpy's half-to-even) and then cast; every other column is cast
      directly, so a float -> int16 cast truncates toward zero (Credit's label, implementation notes §data.cleaning). A
      non-finite value in a column cast to an integer raises.
    * ``"audit"`` (the distinguishing game, ``ganev2025elusive`` §6.2; the authors'
      ``fix_dtypes``, implementation notes §audit.querybased "rows cast to integers (rounded)"): every integer and bool column is
      rounded, then cast; a column holding non-finite values stays float (rounded) rather than
      failing the whole audit.
    """
    if policy not in RESTORE_POLICIES:
        raise ValueError(f"unknown dtype-restoration policy {policy!r}; use one of {RESTORE_POLICIES}")
    dtypes = dict(dtypes.items()) if isinstance(dtypes, pd.Series) else dict(dtypes)
    missing = [c for c in dtypes if c not in df.columns]
    if missing:
        raise ValueError(f"restore_dtypes: columns {missing[:5]} are not in the table")
    out = df.copy()
    for col, dtype in dtypes.items():
        target = pd.api.types.pandas_dtype(dtype)
        values = out[col]
        if policy == "audit":
            if pd.api.types.is_integer_dtype(target) or pd.api.types.is_bool_dtype(target):
                rounded = np.rint(values.to_numpy(dtype=float))
                out[col] = rounded.astype(target) if np.isfinite(rounded).all() else rounded
            else:
                out[col] = values.astype(target)
            continue
        if pd.api.types.is_integer_dtype(target) and pd.api.types.is_float_dtype(values):
            if not np.isfinite(values.to_numpy(dtype=np.float64)).all():
                raise ValueError(f"column {col!r} has NaN/inf values and cannot be cast to {target}; check the generator output")
            if target == np.dtype("int64"):
                values = values.round()
        out[col] = values.astype(target)
    return out
