"""smartnoise's TableTransformer style "gan" and approx_bounds (implementations spec §7.1)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit.components.transforms import GanTableTransformer, approx_bounds, histogram_bin_edges
from pategan_audit.components.smartnoise_transformer import _bin_index


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.uniform(-3, 7, 200), "b": rng.integers(0, 50, 200), "label": rng.integers(0, 2, 200)})


def test_gan_transformer_round_trip(table):
    tt = GanTableTransformer(categorical_columns=["label"]).fit(table)
    assert tt.width == 2 + 2
    v = tt.transform(table)
    assert v[:, :2].min() == -1 and v[:, :2].max() == 1
    np.testing.assert_array_equal(v[:, 2:].sum(1), 1)
    back = tt.inverse_transform(v)
    np.testing.assert_allclose(back[["a", "b"]].to_numpy(), table[["a", "b"]].to_numpy(float), atol=1e-9)
    assert back["label"].tolist() == table["label"].tolist()
    assert back["b"].dtype == np.float64  # no integer handling (spec §7.1)


def test_inverse_clips_to_bounds(table):
    tt = GanTableTransformer(categorical_columns=["label"]).fit(table)
    out = tt.inverse_transform(np.array([[3.0, -5.0, 0.2, 0.9]]))
    assert out["a"].iloc[0] == table["a"].max() and out["b"].iloc[0] == table["b"].min()
    assert out["label"].iloc[0] == 1


def test_public_bounds_clip_inputs(table):
    tt = GanTableTransformer(categorical_columns=["label"], bounds="public", public_bounds={"a": (0, 4), "b": (0, 100)}).fit(table)
    v = tt.transform(table)
    np.testing.assert_allclose(v[:, 0], 2 * np.clip(table["a"], 0, 4) / 4 - 1)
    np.testing.assert_allclose(v[:, 1], 2 * table["b"] / 100 - 1)


def test_bin_edges_contain_their_values():
    rng = np.random.default_rng(3)
    vals = np.concatenate([rng.normal(0, 1, 500), rng.normal(0, 1e4, 500), [-1.0, 0.0, 1.0, 2.0, -2.0, -0.5, -2.5, -4.0]])
    idx = _bin_index(vals)
    lo, hi = histogram_bin_edges(idx)
    assert np.all((lo <= vals) & (vals < hi))
    assert _bin_index(np.array([0.5]))[0] == 64 and _bin_index(np.array([-0.5]))[0] == 63
    assert histogram_bin_edges(65) == (1.0, 2.0) and histogram_bin_edges(62) == (-2.0, -1.0)


def test_approx_bounds_finds_power_of_two_envelope():
    vals = np.random.default_rng(1).uniform(3.0, 100.0, 5000)
    lo, hi = approx_bounds(vals, epsilon=1.0, rng=np.random.default_rng(0))
    # with 5000 values and Lap(1) noise the bins [2,4) ... [64,128) all exceed the threshold
    assert lo == 2.0 and hi == 128.0
    again = approx_bounds(vals, epsilon=1.0, rng=np.random.default_rng(0))
    assert again == (lo, hi)  # same seed, same bounds


def test_approx_bounds_none_when_nothing_exceeds():
    # a single value and tiny epsilon: no noisy count passes the threshold in most draws
    results = [approx_bounds([5.0], epsilon=1e-3, rng=np.random.default_rng(s)) for s in range(5)]
    assert (None, None) in results


def test_dp_mode_spends_budget(table):
    tt = GanTableTransformer(categorical_columns=["label"], bounds="dp", preprocessor_eps=2.0, rng=np.random.default_rng(0)).fit(table)
    assert tt.spent_epsilon == 2.0
    lo, hi = tt.bounds["b"]
    # 200 values on 0..49 with Lap(1) per bin (eps_col = 2/2): only the well-filled bins [8, 16),
    # [16, 32), [32, 64) clear the failure-probability threshold (~22.6), so the tails are cut
    assert lo in (4.0, 8.0) and hi == 64.0
    with pytest.raises(ValueError, match="preprocessor_eps"):
        GanTableTransformer(bounds="dp")
    with pytest.raises(ValueError, match="rng"):
        GanTableTransformer(bounds="dp", preprocessor_eps=1.0)


def test_public_bounds_fix_the_categorical_domain():
    """With public bounds the label's categories come from the metadata, not the data, so a
    world without the target (all-zero label) still has the category 1 (audit channel control)."""
    import pandas as pd

    from pategan_audit.components.smartnoise_transformer import GanTableTransformer

    out_world = pd.DataFrame({"A": [0, 0, 0, 0], "C": [0, 0, 0, 0]})
    pub = {"A": (0, 1), "C": (0, 1)}
    t = GanTableTransformer(categorical_columns=["C"], bounds="public", public_bounds=pub).fit(out_world)
    assert list(t.categories["C"]) == [0, 1] and t.width == 3
    t_data = GanTableTransformer(categorical_columns=["C"], bounds="data").fit(out_world)
    assert list(t_data.categories["C"]) == [0]
