"""synthcity's TabularEncoder (implementations spec §4.1; V12, O8)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pategan_audit.components.transforms import TabularEncoder

CERVICAL = Path(__file__).resolve().parents[2] / "data" / "cervical_cancer" / "authors_split" / "train_cervical_cancer.csv.gz"


@pytest.fixture(scope="module")
def cervical():
    return pd.read_csv(CERVICAL)


@pytest.fixture(scope="module")
def encoder(cervical):
    return TabularEncoder().fit(cervical)


def test_column_types_and_layout(cervical, encoder):
    kinds = {c.name: c.kind for c in encoder.layout}
    for col in cervical.columns:  # <= 10 distinct values -> discrete (spec §4.1)
        assert kinds[col] == ("discrete" if cervical[col].nunique() <= 10 else "continuous")
    assert sum(w for _, w in encoder.activation_layout) == encoder.width
    widths = [(c.width if c.kind == "discrete" else 1 + 5) for c in encoder.layout]
    assert encoder.width == sum(widths)
    disc = [c for c in encoder.layout if c.kind == "discrete"]
    assert encoder.cond_width == sum(c.width for c in disc)
    assert encoder.discrete_blocks == [c.onehot for c in disc]
    biopsy = next(c for c in encoder.layout if c.name == "Biopsy")
    assert biopsy.categories == (0, 1)


def test_encoding_formula(cervical, encoder):
    X = encoder.transform(cervical)
    col = next(c for c in encoder.layout if c.name == "Age")
    s, w = col.onehot
    comp = X[:, s : s + w].argmax(1)
    assert np.all(X[:, s : s + w].sum(1) == 1)
    v = (cervical["Age"].to_numpy() - encoder.means["Age"][comp]) / (4 * encoder.stds["Age"][comp])
    np.testing.assert_allclose(X[:, col.value_index], np.clip(v, -0.99, 0.99))
    assert np.abs(X[:, col.value_index]).max() <= 0.99


def test_round_trip_restores_values_and_dtypes(cervical, encoder):
    back = encoder.inverse_transform(encoder.transform(cervical))
    assert (back.dtypes == cervical.dtypes).all()
    # exact for discrete columns; continuous up to the +-0.99 encode clip (|x - mu| > 3.96 sigma)
    for c in encoder.layout:
        if c.kind == "discrete":
            assert back[c.name].equals(cervical[c.name])
    assert (np.abs(back["Age"] - cervical["Age"]) <= 1).mean() > 0.97


def test_v12_decode_stays_inside_training_range(cervical, encoder):
    """V12 'how to test': outputs stay within the training [min, max] and the clip is hit."""
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 3, size=(500, encoder.width))
    out = encoder.inverse_transform(noise, cast_dtypes=False)
    touched = 0
    for c in encoder.layout:
        if c.kind == "continuous":
            lo, hi = cervical[c.name].min(), cervical[c.name].max()
            assert out[c.name].between(lo, hi).all()
            touched += int((out[c.name] == lo).any() or (out[c.name] == hi).any())
        else:
            assert set(out[c.name]) <= set(cervical[c.name])
    assert touched > 0
    assert encoder.bounds["Age"] == (cervical["Age"].min(), cervical["Age"].max())


def test_o8_integer_continuous_columns_truncate():
    df = pd.DataFrame({"n": np.arange(40, dtype=np.int64)})
    enc = TabularEncoder().fit(df)
    col = enc.layout[0]
    assert col.kind == "continuous"
    mode = int(np.argmax(enc.stds["n"] > 0))  # any fitted component
    target = 20.9
    v = np.zeros((1, enc.width))
    v[0, col.value_index] = (target - enc.means["n"][mode]) / (4 * enc.stds["n"][mode])
    v[0, col.onehot[0] + mode] = 1.0
    if abs(v[0, col.value_index]) <= 1:
        assert enc.inverse_transform(v)["n"].iloc[0] == 20  # truncation, not rounding


def test_public_bounds_change_the_decode_clip(cervical):
    pub = {c: (float(cervical[c].min()), float(cervical[c].max()) + 5) for c in cervical.columns}
    pub["Age"] = (0.0, 30.0)
    enc = TabularEncoder(bounds="public", public_bounds=pub).fit(cervical)
    out = enc.inverse_transform(np.random.default_rng(1).normal(0, 3, (300, enc.width)), cast_dtypes=False)
    assert out["Age"].between(0, 30).all()
    assert enc.bounds["Age"] == (0.0, 30.0)


def test_shape_errors(encoder):
    with pytest.raises(ValueError, match="expected an array"):
        encoder.inverse_transform(np.zeros((2, encoder.width + 1)))
    with pytest.raises(ValueError, match="not columns"):
        TabularEncoder(discrete_columns=["nope"]).fit(pd.DataFrame({"a": [1.0, 2.0]}))
