"""turing's encoder (implementations spec §5.1; B4, O7)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit.components.transforms import TuringEncoder


def test_b4_spec_example_truncation():
    """Spec §5.1: min 0, max 10, value 7 encodes and decodes to 6.999..., truncated to 6."""
    df = pd.DataFrame({"x": [0, 7, 10], "y": [0, 1, 1]})
    enc = TuringEncoder(categorical_columns=["y"], integer_decode="truncate").fit(df)
    v = enc.transform(df)
    assert enc.inverse_transform(v)["x"].tolist() == [0, 6, 10]
    fixed = TuringEncoder(categorical_columns=["y"], integer_decode="round").fit(df)
    assert fixed.inverse_transform(v)["x"].tolist() == [0, 7, 10]


def test_b4_decode_is_floor_for_positive_values():
    """B4 'how to test': decode(v) = floor(v (max + 1e-8) + min) for positive values."""
    df = pd.DataFrame({"x": [3, 40]})
    enc = TuringEncoder(integer_decode="truncate").fit(df)
    v = np.random.default_rng(0).uniform(0, 1, (200, 1))
    expect = np.floor(v[:, 0] * (40 + 1e-8) + 3)
    np.testing.assert_array_equal(enc.inverse_transform(v)["x"].to_numpy(), expect)
    neg = TuringEncoder(integer_decode="truncate").fit(pd.DataFrame({"x": [-9, -1]}))
    assert neg.inverse_transform(np.array([[0.5]]))["x"].iloc[0] == -9  # -9.5 truncates toward zero


def test_o7_divides_by_max_not_range():
    df = pd.DataFrame({"x": [5.0, 10.0], "z": [-4.0, 2.0]})
    enc = TuringEncoder().fit(df)
    v = enc.transform(df)
    np.testing.assert_allclose(v[:, 0], [0.0, 5 / (10 + 1e-8)])
    np.testing.assert_allclose(v[:, 1], [0.0, 6 / (2 + 1e-8)])  # > 1 when min < 0
    np.testing.assert_allclose(enc.inverse_transform(v).to_numpy(), df.to_numpy(), atol=1e-9)
    # FLOAT decode is not clipped: v = 1 gives max + min
    assert enc.inverse_transform(np.array([[1.0, 0.0]]))["x"].iloc[0] == pytest.approx(15.0)


def test_categorical_round_trip_and_layout():
    df = pd.DataFrame({"a": [1.5, 2.5, 3.5, 0.5], "label": [0, 1, 1, 0]})
    enc = TuringEncoder(categorical_columns=["label"], integer_decode="round").fit(df)
    assert enc.width == 3  # harness: nfeatures = #columns + 1 (binary label one-hot)
    v = enc.transform(df)
    np.testing.assert_array_equal(v[:, 1:], [[1, 0], [0, 1], [0, 1], [1, 0]])
    back = enc.inverse_transform(v)
    pd.testing.assert_frame_equal(back, df)
    cat = df.assign(label=df["label"].astype("category"))
    enc2 = TuringEncoder().fit(cat)  # pandas category dtype is categorical without being listed
    assert enc2.width == 3 and enc2.inverse_transform(enc2.transform(cat))["label"].dtype == "category"


def test_public_bounds():
    df = pd.DataFrame({"x": [2, 5, 30], "label": [0, 1, 0]})
    pub = {"x": (0, 20), "label": (0, 1)}
    enc = TuringEncoder(categorical_columns=["label"], bounds="public", public_bounds=pub, integer_decode="round").fit(df)
    assert enc.bounds["x"] == (0.0, 20.0)
    v = enc.transform(df)
    np.testing.assert_allclose(v[:, 0], np.array([2, 5, 20]) / (20 + 1e-8))  # 30 clipped to 20
    assert enc.inverse_transform(v)["x"].tolist() == [2, 5, 20]
    with pytest.raises(ValueError, match="lacks columns"):
        TuringEncoder(bounds="public", public_bounds={"x": (0, 1)}).fit(df)
    with pytest.raises(ValueError, match="integer_decode"):
        TuringEncoder(integer_decode="floor")
