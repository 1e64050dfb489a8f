"""MinMaxScaler, original's scaler, bounds resolution and dtype restoration
(implementations spec §2.1, §3.1, §6.1; protocols spec A.1)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import MinMaxScaler as SkMinMaxScaler

from pategan_audit.components.transforms import MinMaxScaler, OriginalScaler, resolve_bounds, restore_dtypes


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "age": rng.integers(13, 84, 50),
            "years": rng.gamma(2.0, 3.0, 50),
            "const": np.full(50, 4.0),
            "label": rng.integers(0, 2, 50),
        }
    )


@pytest.mark.parametrize("feature_range", [(0.0, 1.0), (-1.0, 1.0)])
def test_minmax_matches_sklearn_and_round_trips(table, feature_range):
    ours = MinMaxScaler(feature_range=feature_range, clip=True).fit(table)
    ref = SkMinMaxScaler(feature_range=feature_range, clip=True).fit(table.to_numpy(float))
    np.testing.assert_allclose(ours.transform(table), ref.transform(table.to_numpy(float)))
    shifted = table.to_numpy(float) * 1.5 + 2  # out of range: clipped like scikit-learn
    np.testing.assert_allclose(ours.transform(pd.DataFrame(shifted, columns=table.columns)), ref.transform(shifted))
    back = ours.inverse_transform(ours.transform(table))
    np.testing.assert_allclose(back.to_numpy(), table.to_numpy(float), atol=1e-12)
    assert ours.bounds["age"] == (table["age"].min(), table["age"].max())  # V11/V13: data bounds


def test_minmax_inverse_clip(table):
    sc = MinMaxScaler().fit(table)
    out = sc.inverse_transform(np.full((3, 4), 1.7), clip=True)
    np.testing.assert_allclose(out["age"], table["age"].max())
    assert (sc.inverse_transform(np.full((3, 4), 1.7))["age"] > table["age"].max()).all()


def test_minmax_public_bounds_clip_inputs(table):
    pub = {"age": (0, 100), "years": (0, 10), "const": (0, 8), "label": (0, 1)}
    sc = MinMaxScaler(bounds="public", public_bounds=pub, clip=False).fit(table)
    assert sc.bounds == {k: (float(a), float(b)) for k, (a, b) in pub.items()}
    v = sc.transform(table)
    np.testing.assert_allclose(v[:, 0], table["age"] / 100)
    assert v[:, 1].max() <= 1.0 and np.isclose(v[table["years"].to_numpy() > 10, 1], 1.0).all()


def test_original_scaler_parameters_are_data_min_and_range(table):
    """V10 'how to test': scaler params equal the column min and max (spec §10)."""
    sc = OriginalScaler().fit(table)
    np.testing.assert_array_equal(sc.min_, table.min().to_numpy(float))
    np.testing.assert_array_equal(sc.range_, (table.max() - table.min()).to_numpy(float))
    v = sc.transform(table)
    assert v.min() >= 0 and v.max() < 1  # (X - m)/(R + 1e-8) lies in [0, 1)
    np.testing.assert_allclose(v[:, 1], (table["years"] - table["years"].min()) / (np.ptp(table["years"]) + 1e-8))
    np.testing.assert_allclose(sc.inverse_transform(v).to_numpy(), table.to_numpy(float), atol=1e-9)
    assert np.all(v[:, 2] == 0)  # constant column: R = 0, divided by 1e-8 only


def test_original_scaler_public(table):
    pub = {c: (-10.0, 200.0) for c in table.columns}
    sc = OriginalScaler(bounds="public", public_bounds=pub).fit(table)
    assert sc.bounds["age"] == (-10.0, 200.0)
    big = table.copy()
    big["age"] = 1000
    np.testing.assert_allclose(sc.transform(big)[:, 0], 210 / (210 + 1e-8))


def test_resolve_bounds_errors(table):
    with pytest.raises(ValueError, match="lacks columns"):
        resolve_bounds(table, bounds="public", public_bounds={"age": (0, 1)})
    with pytest.raises(ValueError, match="needs public_bounds"):
        resolve_bounds(table, bounds="public")
    with pytest.raises(ValueError, match="must be one of"):
        resolve_bounds(table, bounds="dp")
    with pytest.raises(ValueError, match="lo <= hi"):
        resolve_bounds(table[["age"]], bounds="public", public_bounds={"age": (5, 1)})
    with pytest.raises(ValueError, match="only used with"):
        resolve_bounds(table, bounds="data", public_bounds={"age": (0, 1)})


def test_restore_dtypes_rounds_int64_and_truncates_others():
    """Protocols A.1: int64 columns rounded then cast, others cast directly (Credit's int16
    label truncates: 0.7 -> 0)."""
    synth = pd.DataFrame({"a": [0.4, 0.6, 2.5, -1.7], "b": [0.7, 1.9, -0.7, 0.2], "c": [1, 2, 3, 4]})
    out = restore_dtypes(synth, {"a": np.int64, "b": np.int16, "c": np.float16})
    assert list(out["a"]) == [0, 1, 2, -2] and out["a"].dtype == np.int64
    assert list(out["b"]) == [0, 1, 0, 0] and out["b"].dtype == np.int16
    assert out["c"].dtype == np.float16
    with pytest.raises(ValueError, match="NaN"):
        restore_dtypes(pd.DataFrame({"a": [np.nan]}), {"a": np.int64})
    with pytest.raises(ValueError, match="not in the table"):
        restore_dtypes(synth, {"zz": np.int64})
    frame_dtypes = pd.DataFrame({"a": [1], "b": [1.0]}).dtypes  # a pandas Series works too
    assert restore_dtypes(pd.DataFrame({"a": [1.6], "b": [2.0]}), frame_dtypes)["a"].iloc[0] == 2
