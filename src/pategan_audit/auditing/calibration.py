"""Reference "generators" that calibrate the audit at its two extremes, and one that isolates
the bounds channel.

* :class:`ReleaseTrainingData` publishes its training rows (resampled with replacement to the
  requested size): no privacy at all. A sound audit must report ε_emp at the statistical
  ceiling of its sample size (implementation notes §audit.ceiling) on the worst-case dataset.
* :class:`IgnoreTrainingData` draws rows from a fixed public distribution and never looks at
  its input (beyond the column names): perfectly private (ε = 0). A sound audit must report
  ε_emp ≈ 0 — anything larger is the attack overfitting, or the game leaking through a side
  channel such as the output size (implementation notes §audit.channels).

* :class:`BoundsOnlyData` reads nothing but each column's minimum and maximum and draws rows
  uniformly between them: what an attack scores against it is what the **bounds channel** alone
  leaks (implementation notes §audit.channels; ``ganev2025elusive`` §6 and violations V10-V13: presets that read
  bounds from the data). On GroundHog's Cervical target, whose two columns hold unique maxima,
  it is the part of Figure 5b that needs no generative model at all.

All follow the generator API of ``pategan_audit.implementations`` (``fit(df, label=None)``,
``sample(n, seed=None)``); all randomness derives from ``seed``. Both are module-level
dataclasses so that they pickle to parallel workers and describe themselves in cache keys.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["ReleaseTrainingData", "IgnoreTrainingData", "BoundsOnlyData", "ReleaseFactory", "IgnoreFactory",
           "BoundsOnlyFactory"]


@dataclass
class ReleaseTrainingData:
    """Outputs bootstrap resamples of the training rows (``n`` = training size: the rows
    themselves, in random order)."""

    seed: int = 0
    _data: pd.DataFrame | None = field(default=None, repr=False)
    _calls: int = field(default=0, repr=False)

    def fit(self, df: pd.DataFrame, label: str | None = None) -> "ReleaseTrainingData":
        self._data = df.reset_index(drop=True).copy()
        return self

    def sample(self, n: int, seed: int | None = None) -> pd.DataFrame:
        if self._data is None:
            raise RuntimeError("call fit() before sample()")
        rng = np.random.default_rng([self.seed, self._calls] if seed is None else seed)
        self._calls += 1
        if n == len(self._data):
            idx = rng.permutation(n)
        else:
            idx = rng.integers(0, len(self._data), size=n)
        return self._data.iloc[idx].reset_index(drop=True)


@dataclass
class IgnoreTrainingData:
    """Outputs i.i.d. uniform draws from ``support`` (default {0, 1}) in every column,
    whatever it was trained on."""

    seed: int = 0
    support: tuple[float, ...] = (0.0, 1.0)
    _columns: list | None = field(default=None, repr=False)
    _calls: int = field(default=0, repr=False)

    def fit(self, df: pd.DataFrame, label: str | None = None) -> "IgnoreTrainingData":
        self._columns = list(df.columns)
        return self

    def sample(self, n: int, seed: int | None = None) -> pd.DataFrame:
        if self._columns is None:
            raise RuntimeError("call fit() before sample()")
        rng = np.random.default_rng([self.seed, self._calls] if seed is None else seed)
        self._calls += 1
        values = rng.choice(np.asarray(self.support, dtype=float), size=(n, len(self._columns)))
        return pd.DataFrame(values, columns=self._columns)


@dataclass
class BoundsOnlyData:
    """Outputs i.i.d. rows uniform between each column's training minimum and maximum (integers
    for integer or boolean columns, reals otherwise); nothing else of the data is read."""

    seed: int = 0
    _bounds: dict | None = field(default=None, repr=False)
    _integer: dict | None = field(default=None, repr=False)
    _calls: int = field(default=0, repr=False)

    def fit(self, df: pd.DataFrame, label: str | None = None) -> "BoundsOnlyData":
        self._bounds = {c: (float(df[c].min()), float(df[c].max())) for c in df.columns}
        self._integer = {c: bool(pd.api.types.is_integer_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]))
                         for c in df.columns}
        return self

    def sample(self, n: int, seed: int | None = None) -> pd.DataFrame:
        if self._bounds is None:
            raise RuntimeError("call fit() before sample()")
        rng = np.random.default_rng([self.seed, self._calls] if seed is None else seed)
        self._calls += 1
        out = {}
        for c, (lo, hi) in self._bounds.items():
            if self._integer[c]:
                out[c] = rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, size=n)
            else:
                out[c] = rng.uniform(lo, hi, size=n)
        return pd.DataFrame(out)


@dataclass(frozen=True)
class ReleaseFactory:
    """``make_generator(seed)`` for :class:`ReleaseTrainingData`."""

    def __call__(self, seed: int) -> ReleaseTrainingData:
        return ReleaseTrainingData(seed=seed)


@dataclass(frozen=True)
class IgnoreFactory:
    """``make_generator(seed)`` for :class:`IgnoreTrainingData`."""

    support: tuple[float, ...] = (0.0, 1.0)

    def __call__(self, seed: int) -> IgnoreTrainingData:
        return IgnoreTrainingData(seed=seed, support=self.support)


@dataclass(frozen=True)
class BoundsOnlyFactory:
    """``make_generator(seed)`` for :class:`BoundsOnlyData`."""

    def __call__(self, seed: int) -> BoundsOnlyData:
        return BoundsOnlyData(seed=seed)
