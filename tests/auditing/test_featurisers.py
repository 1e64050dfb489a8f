"""Featurisers of the two attacks (protocols spec D.2, D.3)."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from pategan_audit.auditing.featurisers import (
    WORST_CASE_POINTS,
    CorrelationFeaturiser,
    HistogramFeaturiser,
    NaiveFeaturiser,
    QueryFeaturiser,
    RowCountFeaturiser,
)


def test_query_points_are_the_cube_in_product_order():
    assert len(WORST_CASE_POINTS) == 8
    assert WORST_CASE_POINTS[0] == (0, 0, 0) and WORST_CASE_POINTS[-1] == (1, 1, 1)
    assert QueryFeaturiser().names[5] == "count_101"


def test_query_counts_by_hand():
    df = pd.DataFrame([(0, 0, 0), (0, 0, 0), (1, 1, 1), (1, 0, 1), (2, 0, 0)], columns=list("ABC"))
    f = QueryFeaturiser()(df)
    expected = np.zeros(8)
    expected[0], expected[5], expected[7] = 2, 1, 1  # (2, 0, 0) matches no point
    np.testing.assert_array_equal(f, expected)


def test_query_rejects_wrong_width_and_non_frames():
    with pytest.raises(ValueError, match="3 coordinates"):
        QueryFeaturiser()(pd.DataFrame({"A": [0], "B": [0]}))
    with pytest.raises(TypeError, match="DataFrame"):
        QueryFeaturiser()(np.zeros((2, 3)))


def test_naive_by_hand():
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 10.0], "y": [0, 0, 1, 1]})
    f = NaiveFeaturiser()(df)
    # x: min 1, max 10, mean 4, median 2.5, variance (ddof 1) = (9 + 4 + 1 + 36) / 3
    np.testing.assert_allclose(f[:5], [1, 10, 4, 2.5, 50 / 3])
    np.testing.assert_allclose(f[5:], [0, 1, 0.5, 0.5, 1 / 3])
    g = NaiveFeaturiser(spread="std")(df)
    np.testing.assert_allclose(g[4], np.sqrt(50 / 3))
    # same as the pandas calls of the authors' featurize_df_naive
    np.testing.assert_allclose(f[:5], [df.x.min(), df.x.max(), df.x.mean(), df.x.median(), df.x.var()])


def test_naive_has_145_features_on_cervical():
    from pategan_audit import datasets

    train = datasets.load("cervical_cancer").train
    f = NaiveFeaturiser()(train)
    assert f.shape == (145,)  # D.3: 29 columns x 5
    assert len(NaiveFeaturiser().names(train.columns)) == 145


def test_naive_validation():
    with pytest.raises(ValueError, match="spread"):
        NaiveFeaturiser(spread="mad")
    with pytest.raises(ValueError, match="empty"):
        NaiveFeaturiser()(pd.DataFrame({"x": []}))


def test_histogram_matches_pandas_value_counts():
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"x": rng.normal(size=200), "c": rng.integers(0, 3, size=200)})
    feat = HistogramFeaturiser.from_reference(ref, n_bins=5)
    synth = pd.DataFrame({"x": rng.normal(size=50), "c": rng.integers(0, 4, size=50)})
    f = feat(synth)
    lo, hi = ref.x.min(), ref.x.max()
    bins = np.linspace(lo, hi, 6)
    expected_x = synth.x.value_counts(normalize=False, bins=bins, sort=False).to_numpy() / len(synth)
    np.testing.assert_allclose(f[:5], expected_x)
    cats = list(ref.c.value_counts().index)
    np.testing.assert_allclose(f[5:], [(synth.c == c).mean() for c in cats])


def test_correlation_upper_triangle():
    df = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 4, 6, 8.5], "c": [4.0, 3, 2, 1]})
    f = CorrelationFeaturiser()(df)
    c = df.corr().to_numpy()
    np.testing.assert_allclose(f, [c[0, 1], c[0, 2], c[1, 2]])


def test_featurisers_pickle():
    for f in (QueryFeaturiser(), NaiveFeaturiser("std"), CorrelationFeaturiser(), RowCountFeaturiser()):
        assert pickle.loads(pickle.dumps(f)) == f


def test_row_count_reads_the_size_only():
    f = RowCountFeaturiser()
    four = pd.DataFrame(np.zeros((4, 3)))
    assert f(four).tolist() == [4.0] and f(four.iloc[:0]).tolist() == [0.0]
    assert f(pd.DataFrame(np.ones((4, 3)))).tolist() == f(four).tolist()  # values do not matter
    with pytest.raises(TypeError, match="pandas DataFrame"):
        f(np.zeros((4, 3)))
