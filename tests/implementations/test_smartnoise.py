"""smartnoise preset (implementations spec §7; V9, the top-of-loop check, k and δ defaults)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pategan_audit.implementations import create

from .conftest import make_toy


def fit(df, **kw):
    kw.setdefault("num_teachers", 2)
    kw.setdefault("max_iter", 2)
    return create("smartnoise", **kw).fit(df, label="y")


def test_raises_when_epsilon_is_below_the_accountant_floor(toy):
    """ε is checked before the first iteration: ε < ln(1/δ)/L = ln(1e5)/100 = 0.1151 raises (spec §7.3)."""
    floor = math.log(1e5) / 100
    with pytest.raises(ValueError, match="refuses to train"):
        fit(toy, epsilon=0.99 * floor)
    assert fit(toy, epsilon=1.01 * floor, max_iter=None).trace.iterations == 1  # one iteration, then stop


def test_vote_independent_stopping_runs_33_iterations(toy):
    """spec §8.2: λ = 1e-3, 5 x 64 queries, δ = 1e-5: ε̂ = 0.179769 after one iteration and 33
    iterations at ε = 1 (checked at the top of each iteration)."""
    m = fit(toy, max_iter=None, record=False)
    assert m.trace.eps_hat[0] == pytest.approx(0.179769, abs=5e-7)
    assert m.trace.iterations == 33
    assert m.trace.eps_hat[-2] <= 1.0 < m.trace.eps_hat[-1]
    assert m.accountant.kind == "smartnoise"


def test_delta_none_is_n_to_the_minus_three_halves(toy):
    m = fit(toy, delta=None, max_iter=1)
    assert m.trace.extra["delta"] == pytest.approx(len(toy) ** -1.5)


def test_default_teacher_count_is_n_over_1000():
    with pytest.raises(ValueError, match="N // 1000 = 0"):
        create("smartnoise", max_iter=1).fit(make_toy(300), label="y")
    m = create("smartnoise", max_iter=1).fit(make_toy(2100), label="y")
    assert m.num_teachers_ == 2


def test_array_split_partition_and_encoded_width(toy):
    m = fit(toy, num_teachers=3)
    assert [len(b) for b in m.blocks_] == [100, 100, 100]
    for t, rows in enumerate(m.trace.teacher_rows):
        assert min(rows) >= 100 * t and max(rows) < 100 * (t + 1)
    assert m.X_.shape[1] == 4 + 2  # four features in [-1, 1] + the label one-hot
    assert m.X_[:, :4].min() >= -1 and m.X_[:, :4].max() <= 1
    D = 6
    assert [layer.weight.shape[1:] for layer in m.teachers.net.layers] == [(D, 2 * D // 3), (2 * D // 3, D // 3), (D // 3, 1)]


def test_dp_bounds_are_paid_from_epsilon(toy):
    m = fit(toy, bounds="dp", preprocessor_eps=4.0, epsilon=5.0)  # 1 per column: 300 rows need that much
    assert m.trace.extra["bounds_epsilon"] == pytest.approx(4.0)
    assert m.trace.extra["epsilon_budget"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="preprocessor_eps"):
        create("smartnoise", bounds="dp")


def test_output_columns_and_label(toy):
    s = fit(toy).sample(100, seed=0)
    assert list(s.columns) == list(toy.columns) and set(s["y"].unique()) <= {0, 1}
    assert list(s.dtypes) == list(toy.dtypes)
    released = fit(toy, harness=False).sample(100, seed=0)
    assert released["count"].dtype == np.float64  # no integer handling as released
