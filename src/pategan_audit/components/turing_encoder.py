"""turing's (reprosyn) data encoding (implementation notes §turing.data).

Column types follow the audit harness's ``create_metadata``: a pandas ``category`` column (or
one listed in ``categorical_columns``) is CATEGORICAL, an integer (or bool) column INTEGER,
any other numeric column FLOAT.

* numeric encode: ``(x - min) / (max + 1e-8)``. Note the division by **max**, not by the
  range (O7): values lie in [0, 1] only when min = 0.
* FLOAT decode: ``v (max + 1e-8) + min`` (no clipping: with v in (0, 1) this can exceed max).
* INTEGER decode: the same, then ``integer_decode="truncate"`` (released ``astype(int)``,
  truncation toward zero, bug B4: min 0, max 10, value 7 decodes to 6) or ``"round"`` (the
  audit's fix).
* CATEGORICAL: one-hot over the category list; decode by argmax.
* ``extra_columns``: trailing columns the encoding never fills (0 here). The audit harness sizes
  the model as ``nfeatures = #columns + 1`` ("hardcoded to our datasets": a two-category label
  one-hot) while its ``create_metadata`` encodes an integer label in one column, so one column
  of its ``np.empty`` feature matrix is never written; the generator still outputs it and the
  critic sees it. Decoding ignores them.

Bounds: ``bounds="data"`` computes min/max from the training table (the harness; a Metadata
leak the paper does not count, implementation notes §turing.data); ``"public"`` takes them from
``public_bounds`` (reprosyn's released interface: user metadata) and clips inputs to them. For
categorical columns in public mode the domain is the integer range ``lo..hi`` of
``public_bounds[col]`` (all label columns here are integer-coded).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from pategan_audit.components.scalers import resolve_bounds

__all__ = ["TuringColumn", "TuringEncoder", "ZERO_TOL"]

ZERO_TOL = 1e-8  # reprosyn pate_gan.py ZERO_TOL
INTEGER_DECODES = ("truncate", "round")


@dataclass(frozen=True)
class TuringColumn:
    """One column's metadata: kind in {"float", "integer", "categorical"}; ``min``/``max`` for
    numeric columns, ``categories`` for categorical ones; (start, width) in the encoding."""

    name: str
    kind: str
    start: int
    width: int
    min: float = 0.0
    max: float = 0.0
    categories: tuple = ()


class TuringEncoder:
    def __init__(
        self,
        *,
        categorical_columns: Sequence[str] = (),
        integer_decode: str = "truncate",
        bounds: str = "data",
        public_bounds: Mapping[str, Sequence[float]] | None = None,
        extra_columns: int = 0,
    ):
        if integer_decode not in INTEGER_DECODES:
            raise ValueError(f"integer_decode must be one of {INTEGER_DECODES}, got {integer_decode!r}")
        if isinstance(extra_columns, bool) or not isinstance(extra_columns, (int, np.integer)) or extra_columns < 0:
            raise ValueError(f"extra_columns must be an integer >= 0, got {extra_columns!r}")
        self.categorical_columns = list(categorical_columns)
        self.integer_decode = integer_decode
        self.extra_columns = int(extra_columns)
        self.bounds_mode = bounds
        self.public_bounds = public_bounds
        self.meta: list[TuringColumn] = []
        self.bounds: dict[str, tuple[float, float]] = {}
        self.columns: list[str] | None = None

    def fit(self, df: pd.DataFrame) -> "TuringEncoder":
        if not isinstance(df, pd.DataFrame) or len(df) == 0:
            raise ValueError("TuringEncoder.fit takes a non-empty pandas DataFrame")
        unknown = sorted(set(self.categorical_columns) - set(df.columns))
        if unknown:
            raise ValueError(f"categorical_columns {unknown} are not columns of the table")
        self.columns = list(df.columns)
        self.dtypes = df.dtypes.copy()
        categorical = [c for c in df.columns if c in self.categorical_columns or isinstance(df[c].dtype, pd.CategoricalDtype)]
        # categorical columns need public bounds (their integer domain) only in public mode
        needs = list(df.columns) if self.bounds_mode == "public" else [c for c in df.columns if c not in categorical]
        self.bounds = resolve_bounds(df, bounds=self.bounds_mode, public_bounds=self.public_bounds, columns=needs)
        self.meta, start = [], 0
        for c in df.columns:
            dtype = df[c].dtype
            if c in categorical:
                if self.bounds_mode == "public":
                    lo, hi = self.bounds[c]
                    cats = tuple(np.arange(int(np.ceil(lo)), int(np.floor(hi)) + 1))
                elif isinstance(dtype, pd.CategoricalDtype):
                    cats = tuple(dtype.categories)
                else:
                    cats = tuple(np.sort(pd.unique(df[c].to_numpy())))
                self.meta.append(TuringColumn(c, "categorical", start, len(cats), categories=cats))
                start += len(cats)
            else:
                kind = "integer" if (pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) else "float"
                lo, hi = self.bounds[c]
                self.meta.append(TuringColumn(c, kind, start, 1, min=lo, max=hi))
                start += 1
        self.width = start + self.extra_columns  # the harness' unfilled trailing columns, always 0
        return self

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """[n, width] float64: numeric ``(x - min)/(max + 1e-8)``, categorical one-hot."""
        if self.columns is None:
            raise RuntimeError("call fit() first")
        out = np.zeros((len(df), self.width))
        rows = np.arange(len(df))
        for col in self.meta:
            if col.kind == "categorical":
                values = np.asarray(df[col.name].to_numpy())
                cats = np.asarray(col.categories)
                hit = values[:, None] == cats[None, :]
                out[:, col.start : col.start + col.width] = hit.astype(np.float64)
            else:
                x = df[col.name].to_numpy(dtype=np.float64)
                if self.bounds_mode == "public":
                    x = np.clip(x, col.min, col.max)
                out[rows, col.start] = (x - col.min) / (col.max + ZERO_TOL)
        return out

    def fit_transform(self, df: pd.DataFrame) -> np.ndarray:
        return self.fit(df).transform(df)

    def inverse_transform(self, values: np.ndarray) -> pd.DataFrame:
        """Decode: FLOAT ``v (max + 1e-8) + min``; INTEGER the same then truncate/round to int64;
        categorical argmax -> category (values and dtype as in training)."""
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != getattr(self, "width", -1):
            raise ValueError(f"expected an array [n, {getattr(self, 'width', '?')}], got shape {v.shape}")
        data = {}
        for col in self.meta:
            if col.kind == "categorical":
                idx = v[:, col.start : col.start + col.width].argmax(axis=1)
                data[col.name] = pd.Series(np.asarray(col.categories)[idx]).astype(self.dtypes[col.name])
                continue
            x = v[:, col.start] * (col.max + ZERO_TOL) + col.min
            if col.kind == "integer":
                x = np.trunc(x) if self.integer_decode == "truncate" else np.round(x)
                data[col.name] = x.astype(np.int64)
            else:
                data[col.name] = x
        return pd.DataFrame(data, columns=self.columns)
