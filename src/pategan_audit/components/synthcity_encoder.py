"""synthcity's ``TabularEncoder`` (implementation notes §synthcity.data): CTGAN-style mode-specific
normalisation of continuous columns and one-hot discrete columns.

* A column with at most ``categorical_limit`` (10) distinct values is **discrete**: one-hot
  over the categories seen in the data (sorted).
* Any other column is **continuous**: a ``BayesianGaussianMixture(n_components=5,
  weight_concentration_prior=1e-3, random_state=0)`` is fitted on it; a value x is encoded as
  ``[v, onehot(c)]`` with c the most responsible component and
  ``v = clip((x - mu_c) / (4 sigma_c), -0.99, 0.99)``.
* Decoding: continuous ``c = argmax``, ``v`` clipped to [-1, 1], ``x = v 4 sigma_c + mu_c``,
  then clipped to the **training** [min, max] (V12); discrete: argmax -> category. The frame is
  cast to the training dtypes with a plain ``astype``, so an integer column encoded as
  continuous is **truncated** (O8).

All of this metadata (bounds, mixtures, category lists) is read from the data without noise
(V12). ``bounds="public"`` replaces the decode clip bounds by public ones and clips inputs to
them; the mixtures and category lists are still fitted on the data (deviation: a fully private
encoder is out of scope; the corrected preset does not use this encoder).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import BayesianGaussianMixture

from pategan_audit.components.scalers import resolve_bounds

__all__ = ["ColumnLayout", "TabularEncoder"]

STD_MULTIPLIER = 4  # synthcity BayesianGMMEncoder(std_multiplier=4)
ENCODE_CLIP = 0.99  # encode clips v to [-0.99, 0.99] ...
DECODE_CLIP = 1.0  # ... decode to [-1, 1]


@dataclass(frozen=True)
class ColumnLayout:
    """Where one column lives in the encoded matrix.

    kind "continuous": ``value_index`` holds v, ``onehot`` = (start, width) of the mode one-hot.
    kind "discrete": ``onehot`` = (start, width) of the category one-hot; ``categories`` lists
    the category values in one-hot order.
    """

    name: str
    kind: str
    start: int
    width: int
    onehot: tuple[int, int]
    value_index: int | None = None
    categories: tuple = ()


class TabularEncoder:
    """Fit on a training DataFrame, ``transform`` to an [n, width] float64 matrix,
    ``inverse_transform`` back to a DataFrame with the training columns and dtypes."""

    def __init__(
        self,
        *,
        n_components: int = 5,
        categorical_limit: int = 10,
        discrete_columns: Sequence[str] | None = None,
        bounds: str = "data",
        public_bounds: Mapping[str, Sequence[float]] | None = None,
        random_state: int = 0,
    ):
        if n_components < 1 or categorical_limit < 1:
            raise ValueError("n_components and categorical_limit must be >= 1")
        self.n_components = n_components
        self.categorical_limit = categorical_limit
        self.discrete_columns = None if discrete_columns is None else list(discrete_columns)
        self.bounds_mode = bounds
        self.public_bounds = public_bounds
        self.random_state = random_state
        self.layout: list[ColumnLayout] = []
        self.bounds: dict[str, tuple[float, float]] = {}
        self.columns: list[str] | None = None

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, df: pd.DataFrame) -> "TabularEncoder":
        if not isinstance(df, pd.DataFrame) or len(df) == 0:
            raise ValueError("TabularEncoder.fit takes a non-empty pandas DataFrame")
        self.columns = list(df.columns)
        self.dtypes = df.dtypes.copy()
        if self.discrete_columns is None:
            discrete = [c for c in df.columns if df[c].nunique() <= self.categorical_limit]
        else:
            unknown = sorted(set(self.discrete_columns) - set(df.columns))
            if unknown:
                raise ValueError(f"discrete_columns {unknown} are not columns of the table")
            discrete = self.discrete_columns
        continuous = [c for c in df.columns if c not in discrete]
        self.bounds = resolve_bounds(df, bounds=self.bounds_mode, public_bounds=self.public_bounds)
        self.means: dict[str, np.ndarray] = {}
        self.stds: dict[str, np.ndarray] = {}
        self._gmms: dict[str, BayesianGaussianMixture] = {}
        self.layout = []
        start = 0
        for c in df.columns:
            if c in continuous:
                x = self._clipped(df, c)
                gmm = BayesianGaussianMixture(
                    n_components=self.n_components, weight_concentration_prior=1e-3, random_state=self.random_state
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    gmm.fit(x[:, None])
                self._gmms[c] = gmm
                self.means[c] = gmm.means_.reshape(-1)
                self.stds[c] = np.sqrt(gmm.covariances_).reshape(-1)
                width = 1 + self.n_components
                self.layout.append(ColumnLayout(c, "continuous", start, width, (start + 1, self.n_components), value_index=start))
            else:
                cats = tuple(np.sort(pd.unique(df[c].to_numpy())))
                self.layout.append(ColumnLayout(c, "discrete", start, len(cats), (start, len(cats)), categories=cats))
                width = len(cats)
            start += width
        self.width = start
        return self

    def _clipped(self, df: pd.DataFrame, c: str) -> np.ndarray:
        x = df[c].to_numpy(dtype=np.float64)
        if self.bounds_mode == "public":
            x = np.clip(x, *self.bounds[c])
        return x

    # -- layout for the generator -------------------------------------------------------------
    @property
    def activation_layout(self) -> list[tuple[str, int]]:
        """[(activation, width)] in column order: ("identity", 1) for each continuous value,
        ("softmax", w) for each one-hot block (the generator applies Gumbel-softmax, τ = 0.2)."""
        out: list[tuple[str, int]] = []
        for col in self.layout:
            if col.kind == "continuous":
                out += [("identity", 1), ("softmax", col.onehot[1])]
            else:
                out.append(("softmax", col.width))
        return out

    @property
    def discrete_blocks(self) -> list[tuple[int, int]]:
        """(start, width) of every discrete column's one-hot: the CTGAN conditional vector's blocks."""
        return [col.onehot for col in self.layout if col.kind == "discrete"]

    @property
    def cond_width(self) -> int:
        """C = total one-hot width of the discrete columns (implementation notes §synthcity.architecture)."""
        return sum(w for _, w in self.discrete_blocks)

    # -- encode / decode ----------------------------------------------------------------------
    def transform(self, df: pd.DataFrame) -> np.ndarray:
        if self.columns is None:
            raise RuntimeError("call fit() first")
        out = np.zeros((len(df), self.width))
        rows = np.arange(len(df))
        for col in self.layout:
            if col.kind == "continuous":
                x = self._clipped(df, col.name)
                comp = self._gmms[col.name].predict_proba(x[:, None]).argmax(axis=1)
                v = (x - self.means[col.name][comp]) / (STD_MULTIPLIER * self.stds[col.name][comp])
                out[:, col.value_index] = np.clip(v, -ENCODE_CLIP, ENCODE_CLIP)
                out[rows, col.onehot[0] + comp] = 1.0
            else:
                values = df[col.name].to_numpy()
                cats = np.asarray(col.categories)
                pos = np.searchsorted(cats, values)
                known = (pos < len(cats)) & (cats[np.minimum(pos, len(cats) - 1)] == values)
                # unknown categories encode as all zeros (scikit-learn handle_unknown="ignore")
                out[rows[known], col.onehot[0] + pos[known]] = 1.0
        return out

    def fit_transform(self, df: pd.DataFrame) -> np.ndarray:
        return self.fit(df).transform(df)

    def inverse_transform(self, values: np.ndarray, *, cast_dtypes: bool = True) -> pd.DataFrame:
        """Decode an [n, width] matrix; ``cast_dtypes`` applies the training dtypes with a plain
        ``astype`` (float -> int truncates, O8)."""
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != getattr(self, "width", -1):
            raise ValueError(f"expected an array [n, {getattr(self, 'width', '?')}], got shape {v.shape}")
        data = {}
        for col in self.layout:
            s, w = col.onehot
            idx = v[:, s : s + w].argmax(axis=1)
            if col.kind == "continuous":
                val = np.clip(v[:, col.value_index], -DECODE_CLIP, DECODE_CLIP)
                x = val * STD_MULTIPLIER * self.stds[col.name][idx] + self.means[col.name][idx]
                data[col.name] = np.clip(x, *self.bounds[col.name])
            else:
                data[col.name] = np.asarray(col.categories)[idx]
        out = pd.DataFrame(data, columns=self.columns)
        return out.astype(self.dtypes.to_dict()) if cast_dtypes else out
