"""Shared fixtures of the preset tests: a small mixed-type table (fast) and the Cervical split."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

CERVICAL = Path(__file__).resolve().parents[2] / "data" / "cervical_cancer" / "authors_split" / "train_cervical_cancer.csv.gz"


def make_toy(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """n rows: two floats, an integer count, a 0/1 flag and a binary label ``y`` (last column)."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(0.0, 1.0, n)
    return pd.DataFrame({
        "x1": x1,
        "x2": rng.uniform(2.0, 9.0, n),
        "count": rng.integers(3, 40, n).astype(np.int64),
        "flag": rng.integers(0, 2, n).astype(np.int64),
        "y": (x1 + rng.normal(0, 0.5, n) > 0.8).astype(np.int64),
    })


@pytest.fixture(scope="session")
def toy() -> pd.DataFrame:
    return make_toy()


@pytest.fixture(scope="session")
def cervical() -> pd.DataFrame:
    return pd.read_csv(CERVICAL)


def toy_bounds(df: pd.DataFrame) -> dict:
    return {c: (float(df[c].min()), float(df[c].max())) for c in df.columns}
