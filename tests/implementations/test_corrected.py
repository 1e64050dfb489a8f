"""corrected preset (implementations spec §9): every fix of §9.1, checked item by item."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit.accounting import data_independent_increment, summed_increments
from pategan_audit.implementations import create
from pategan_audit.implementations.corrected import dp_bounds

from .conftest import toy_bounds


def fit(df, **kw):
    kw.setdefault("seed", 0)  # the preset's default is fresh OS entropy; tests are reproducible
    kw.setdefault("num_teachers", 3)
    kw.setdefault("max_iter", 3)
    kw.setdefault("public_bounds", toy_bounds(df))
    if kw.get("bounds") == "dp":
        kw.pop("public_bounds")
    return create("corrected", **kw).fit(df, label="y")


@pytest.mark.parametrize("epsilon", [0.3, 0.5])
def test_never_overshoots(toy, epsilon):
    """Safe stopping (item 6): the final ε̂ never exceeds ε, and the next iteration would have."""
    m = fit(toy, epsilon=epsilon, max_iter=None, record=False)
    assert m.trace.eps_hat[-1] <= epsilon
    assert m.accountant.epsilon_if(m._queries_per_iteration()) > epsilon
    assert 2 <= m.trace.iterations < 20


def test_budget_too_small_for_one_iteration_raises(toy):
    with pytest.raises(ValueError, match="single iteration"):
        fit(toy, epsilon=0.05)


def test_partitions_disjoint_and_fixed(toy):
    """Item 2: one fixed random partition into k disjoint blocks covering every row; each teacher
    reads only its own block; nothing else reads real rows."""
    m = fit(toy, max_iter=6)
    blocks = [set(b.tolist()) for b in m.blocks_]
    assert set().union(*blocks) == set(range(len(toy))) and sum(map(len, blocks)) == len(toy)
    for rows, block in zip(m.trace.teacher_rows, blocks):
        assert rows <= block
    assert [len(s) for s in m.first_seen_subsets()] == [len(b) for b in blocks]


def test_two_noise_argmax_labels(toy):
    m = fit(toy)
    votes, noise, labels = (np.concatenate(getattr(m.trace, a)) for a in ("votes", "noise", "labels"))
    assert noise.shape == (len(votes), 2)
    np.testing.assert_array_equal(labels, (votes + noise[:, 1] > 3 - votes + noise[:, 0]).astype(int))
    assert np.abs(noise).mean() == pytest.approx(1 / m.config.lam, rel=0.1)  # Lap(1/γ): E|Z| = 1/γ


def test_data_independent_charging(toy):
    m = fit(toy, lam=0.05, epsilon=1e6)
    per_query = data_independent_increment("corrected", lam=0.05, num_moments=100)
    np.testing.assert_allclose(m.trace.alpha[-1], m.accountant.num_queries * per_query, rtol=1e-12)
    dd = fit(toy, lam=0.05, epsilon=1e6, charging="data_dependent")
    votes = np.concatenate(dd.trace.votes)
    expected = summed_increments("corrected", n1=votes, num_teachers=3, lam=0.05, num_moments=100)
    np.testing.assert_allclose(dd.trace.alpha[-1], expected, rtol=1e-9)
    assert np.all(dd.trace.alpha[-1] <= len(votes) * per_query * (1 + 1e-12))


def test_public_or_dp_bounds_required(toy):
    with pytest.raises(ValueError, match="public_bounds"):
        create("corrected", max_iter=1).fit(toy, label="y")
    m = fit(toy, bounds="dp", epsilon=20.0, bounds_epsilon=10.0)
    assert m.trace.extra["bounds_epsilon"] == 10.0 and m.trace.extra["epsilon_budget"] == pytest.approx(10.0)
    assert m.trace.bounds["flag"] == (0.0, 1.0) and m.trace.bounds["y"] == (0.0, 1.0)


def test_dp_bounds_power_of_two_bins():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"flag": rng.integers(0, 2, 5000), "count": rng.integers(3, 40, 5000), "u": rng.uniform(0.1, 0.9, 5000)})
    b = dp_bounds(df, epsilon=30.0, rng=np.random.default_rng(1))
    assert b["flag"] == (0.0, 1.0)
    assert b["count"] == (2.0, 63.0)  # 3 in [2, 4), 39 in [32, 64): largest integer below 64
    assert b["u"] == (0.0, 1.0)


def test_output_rounded_and_clipped(toy):
    bounds = toy_bounds(toy)
    bounds["x1"] = (-1.0, 1.0)  # tighter than the data: inputs are clipped, outputs stay inside
    s = fit(toy, public_bounds=bounds).sample(500, seed=0)
    assert list(s.dtypes) == list(toy.dtypes)
    for c, (lo, hi) in bounds.items():
        assert s[c].between(lo, hi).all()
    assert s["x1"].between(-1, 1).all()


def test_stochastic_rounding_keeps_the_mean_and_round_keeps_corrected_as_it_was(toy):
    """integer_decode="stochastic" rounds up with probability the fractional part (E = the raw value;
    a label the generator puts below 0.5 everywhere still decodes to both classes in proportion);
    "round" (corrected's default) does not touch the sample's stream, so its tables are unchanged."""
    import torch

    model = fit(toy)
    raw = model._generate(4000, torch.Generator().manual_seed(5)).detach().to(torch.float64).numpy()
    col = model.columns_.index("y")
    raw[:, col] = 0.3  # the label's scaled output: 0.3 of the way from 0 to 1, for every row
    model._rounding_rng = None  # corrected's default never reads the sample's stream: its tables are as before
    assert set(model._decode(raw)["y"]) == {0}  # nearest integer: a single class
    stochastic = fit(toy, integer_decode="stochastic")
    stochastic._rounding_rng = np.random.default_rng(0)
    y = stochastic._decode(raw)["y"]
    assert set(y) == {0, 1} and y.mean() == pytest.approx(0.3, abs=0.03)
    a, b = fit(toy, integer_decode="stochastic"), fit(toy, integer_decode="stochastic")
    pd.testing.assert_frame_equal(a.sample(300, seed=3), b.sample(300, seed=3))  # reproducible with the seed
    with pytest.raises(ValueError, match="integer_decode"):
        fit(toy, integer_decode="floor")


def test_noise_stream_follows_the_seed(toy):
    a = fit(toy, seed=4, max_iter=1).trace.noise[0]
    b = fit(toy, seed=4, max_iter=1).trace.noise[0]
    c = fit(toy, seed=5, max_iter=1).trace.noise[0]
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_delta_above_one_over_n_warns(toy):
    with pytest.warns(UserWarning, match="1/N"):
        fit(toy, delta=0.01, max_iter=1)


def test_default_teacher_count():
    assert create("corrected").Config().bounds == "public"
    from .conftest import make_toy

    df = make_toy(2500)
    m = create("corrected", max_iter=1, public_bounds=toy_bounds(df)).fit(df, label="y")
    assert m.num_teachers_ == 2  # max(2, N // 1000)


def test_dp_noise_is_fresh_os_entropy_unless_a_seed_is_given(toy):
    """The corrected preset's default seed is None: every fit draws its streams (vote noise
    included) from fresh OS entropy, so the noise is never predictable from a constant; an
    explicit seed makes a run reproducible (experiments), the other presets keep seed 0."""
    kw = dict(public_bounds=toy_bounds(toy), num_teachers=2, max_iter=2)
    assert create("corrected", **kw).config.seed is None
    a, b = create("corrected", **kw).fit(toy), create("corrected", **kw).fit(toy)
    assert not np.array_equal(a.trace.noise[0], b.trace.noise[0])
    c, d = create("corrected", seed=5, **kw).fit(toy), create("corrected", seed=5, **kw).fit(toy)
    np.testing.assert_array_equal(c.trace.noise[0], d.trace.noise[0])
    assert create("smartnoise").config.seed == 0 and create("original").config.seed == 0
    with pytest.raises(ValueError, match="seed must be"):
        create("corrected", seed=1.5, **kw)
