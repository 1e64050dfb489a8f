"""Per-query accountant formulas against the worked examples of implementations spec §8.2.

Every pinned number below is copied from the implementations spec (shared/spec/implementations.md) §8.2 ("computed by
an independent script (float64)"); the spec asks for relative tolerance 1e-9.
"""
import doctest
import warnings

import numpy as np
import pytest

from pategan_audit.accounting import (
    KINDS,
    MomentOrderAtEdgeWarning,
    compare_increments,
    data_independent_increment,
    epsilon_from_moments,
    moment_increments,
    moment_terms,
    summed_increments,
    theorem3_threshold,
    vote_q,
)
from pategan_audit.accounting import formulas

RTOL = 1e-9
RELEASED = ("paper", "updated", "synthcity", "borealis", "smartnoise")


def inc(kind, n1, lam, k=5, L=3):
    return moment_increments(kind, n1=[n1], num_teachers=k, lam=lam, num_moments=L)[0]


# -- Example A: k=5, (n0, n1) = (4, 1), λ = 1e-3 ------------------------------------------------
def test_example_a_q_and_threshold():
    assert vote_q(n1=[1], num_teachers=5, lam=1e-3)[0] == pytest.approx(0.4992500011, rel=RTOL)
    assert theorem3_threshold(lam=1e-3) == pytest.approx(0.4995000002, rel=RTOL)
    # the two spellings of the threshold, (e^{2λ}-1)/(e^{4λ}-1) and 1/(e^{2λ}+1), agree
    assert theorem3_threshold(lam=1e-3) == pytest.approx(np.expm1(2e-3) / np.expm1(4e-3), rel=1e-12)


def test_example_a_terms():
    terms = moment_terms(n1=[1], num_teachers=5, lam=1e-3, num_moments=3)
    np.testing.assert_allclose(terms["upper"][0], [4e-6, 1.2e-5, 2.4e-5], rtol=RTOL)
    np.testing.assert_allclose(terms["log_term"][0], [0.001998998003, 0.003997996006, 0.005996994011], rtol=RTOL)
    np.testing.assert_allclose(terms["unlogged_term"][0], [1.002000997, 1.004005999, 1.006015012], rtol=RTOL)
    np.testing.assert_allclose(terms["synthcity_log_term"][0], [0.619960009, 0.6219594689, 0.6239589288], rtol=RTOL)
    np.testing.assert_allclose(terms["pure"][0], [0.002, 0.004, 0.006], rtol=RTOL)


@pytest.mark.parametrize("kind", KINDS)
def test_example_a_every_kind_returns_upper(kind):
    np.testing.assert_allclose(inc(kind, 1, 1e-3), [4e-6, 1.2e-5, 2.4e-5], rtol=RTOL)


# -- Examples B, C: λ = 1, valid domain -----------------------------------------------------------
EXAMPLE_B = {  # k=5, (4,1), λ=1
    "updated": [0.7361699993, 1.828474408, 3.401667845],
    "paper": [0.7361699993, 1.828474408, 3.401667845],
    "corrected": [0.7361699993, 1.828474408, 3.401667845],
    "synthcity": [0.5862539551, 1.405246445, 2.649256299],
    "borealis": [2.087923433, 6.224383544, 24.0],
    "smartnoise": [2.087923433, 6.224383544, 24.0],
}
EXAMPLE_C = {  # k=5, (5,0), λ=1
    "updated": [0.1457346095, 0.5888051498, 1.793525828],
    "paper": [0.1457346095, 0.5888051498, 1.793525828],
    "corrected": [0.1457346095, 0.5888051498, 1.793525828],
    "synthcity": [0.09695801981, 0.3328097739, 1.099816337],
    "borealis": [1.15688912, 1.801834207, 6.01060752],
    "smartnoise": [1.15688912, 1.801834207, 6.01060752],
}


@pytest.mark.parametrize("kind", KINDS)
def test_example_b(kind):
    assert vote_q(n1=[1], num_teachers=5, lam=1.0)[0] == pytest.approx(0.06223383546, rel=RTOL)
    assert theorem3_threshold(lam=1.0) == pytest.approx(0.119202922, rel=RTOL)
    np.testing.assert_allclose(inc(kind, 1, 1.0), EXAMPLE_B[kind], rtol=RTOL)


@pytest.mark.parametrize("kind", KINDS)
def test_example_c(kind):
    assert vote_q(n1=[0], num_teachers=5, lam=1.0)[0] == pytest.approx(0.01179140725, rel=RTOL)
    np.testing.assert_allclose(inc(kind, 0, 1.0), EXAMPLE_C[kind], rtol=RTOL)


# -- Example D: condition fails at λ = 1e-3, everyone charges U_l -----------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_example_d(kind):
    q = vote_q(n1=[2], num_teachers=5, lam=1e-3)[0]
    assert q == pytest.approx(0.49975, rel=RTOL)
    assert q > theorem3_threshold(lam=1e-3)
    np.testing.assert_allclose(inc(kind, 2, 1e-3), [4e-6, 1.2e-5, 2.4e-5], rtol=RTOL)


# -- Example E: (3,2), λ = 1, negative base ------------------------------------------------------
EXAMPLE_E = {
    "updated": [0.4278426191, 2.735407739, 4.710111794],
    "paper": [0.4278426191, 2.735407739, 4.710111794],
    "synthcity": [0.0, 1.773878427, 3.706309631],
    "borealis": [1.533944648, 12.0, 24.0],
    "smartnoise": [1.533944648, 12.0, 24.0],
    "corrected": [2.0, 4.0, 6.0],
}


@pytest.mark.parametrize("kind", KINDS)
def test_example_e(kind):
    q = vote_q(n1=[2], num_teachers=5, lam=1.0)[0]
    assert q == pytest.approx(0.2759095809, rel=RTOL)
    assert q * np.e**2 == pytest.approx(2.0387, abs=5e-5)  # > 1: the base is negative
    np.testing.assert_allclose(inc(kind, 2, 1.0), EXAMPLE_E[kind], rtol=RTOL, atol=0)


def test_example_e_synthcity_clips_a_negative_log():
    raw = moment_terms(n1=[2], num_teachers=5, lam=1.0, num_moments=1)["synthcity_log_term"][0, 0]
    assert raw == pytest.approx(-1.40554537, rel=RTOL)


# -- Example F: NaN and negative α at λ = 0.5 ---------------------------------------------------
def test_example_f():
    for kind in ("paper", "updated", "synthcity"):
        out = inc(kind, 2, 0.5)
        assert np.isnan(out[0]) and np.isnan(out[2]), kind
        assert out[1] == pytest.approx(3.0, rel=RTOL)
    for kind in ("borealis", "smartnoise"):
        np.testing.assert_allclose(inc(kind, 2, 0.5), [-11.63061741, 3.0, -5256.703419], rtol=RTOL)
    np.testing.assert_allclose(inc("corrected", 2, 0.5), [1.0, 2.0, 3.0], rtol=RTOL)


# -- ε̂ from moments: 64 identical Example-A queries, δ = 1e-5 -----------------------------------
EPS_TABLE = [  # (kind, L, λ, ε̂, argmin l); synthcity with δ fixed at 1e-5 for comparison
    ("updated", 20, 1e-3, 0.5783342732, 20),
    ("synthcity", 100, 1e-3, 0.1280572546, 100),
    ("borealis", 100, 1e-3, 0.1280572546, 100),
    ("smartnoise", 100, 1e-3, 0.1280572546, 100),
    ("corrected", 100, 1e-3, 0.1280572546, 100),
    ("updated", 20, 1.0, 58.62780542, 1),
    ("synthcity", 100, 1.0, 49.03317859, 1),
    ("borealis", 100, 1.0, 145.1400252, 1),
    ("smartnoise", 100, 1.0, 145.1400252, 1),
    ("corrected", 100, 1.0, 58.62780542, 1),
]


@pytest.mark.parametrize("kind,L,lam,eps,order", EPS_TABLE)
def test_epsilon_table(kind, L, lam, eps, order):
    alpha = summed_increments(kind, n1=np.ones(64, dtype=int), num_teachers=5, lam=lam, num_moments=L)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, got_order = epsilon_from_moments(alpha, delta=1e-5)
    assert got == pytest.approx(eps, rel=RTOL)
    assert got_order == order
    edge = [w for w in caught if issubclass(w.category, MomentOrderAtEdgeWarning)]
    assert len(edge) == (1 if order == L else 0)  # l = 1 is the lowest order, never flagged


def test_epsilon_nan_and_floor():
    assert epsilon_from_moments(np.array([0.0, np.nan, 1.0]), delta=1e-5)[1] == -1
    assert np.isnan(epsilon_from_moments(np.array([0.0, np.nan, 1.0]), delta=1e-5)[0])
    # accountant floor before any query: ln(1/δ)/L (protocols spec B.5: 0.576 for L=20, 0.115 for L=100)
    assert epsilon_from_moments(np.zeros(20), delta=1e-5, warn=False)[0] == pytest.approx(0.576, abs=5e-4)
    assert epsilon_from_moments(np.zeros(100), delta=1e-5, warn=False)[0] == pytest.approx(0.1151, abs=5e-5)


# -- properties -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_zero_queries_give_zero_alpha(kind):
    out = summed_increments(kind, n1=np.array([], dtype=int), num_teachers=5, lam=0.3, num_moments=7)
    np.testing.assert_array_equal(out, np.zeros(7))


@pytest.mark.parametrize("lam", [1e-3, 0.01, 0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("k", [1, 2, 5, 10, 50])
def test_corrected_never_exceeds_data_independent(lam, k):
    out = moment_increments("corrected", n1=np.arange(k + 1), num_teachers=k, lam=lam, num_moments=100)
    bound = data_independent_increment("corrected", lam=lam, num_moments=100)
    assert np.all(np.isfinite(out)) and np.all(out > 0)
    assert np.all(out <= bound)
    orders = np.arange(1, 101)
    np.testing.assert_allclose(bound, np.minimum(2 * lam**2 * orders * (orders + 1), 2 * lam * orders))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lam", [0.05, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("k", [5, 10, 50])
def test_unanimous_votes_cost_less_in_valid_domain(kind, lam, k):
    n1 = np.arange(k + 1)
    valid = vote_q(n1=n1, num_teachers=k, lam=lam) < theorem3_threshold(lam=lam)
    out = moment_increments(kind, n1=n1, num_teachers=k, lam=lam, num_moments=100)
    unanimous = out[k]  # n1 = k (and n1 = 0, symmetric)
    np.testing.assert_array_equal(out[0], out[k])
    split = out[valid & (n1 != 0) & (n1 != k)]
    assert split.size > 0
    assert np.all(unanimous <= split)
    # where a split is charged below U_l somewhere (its data-dependent term is active; borealis and
    # smartnoise at λ ≤ 0.1 never are, V8/V9), unanimity is strictly cheaper at some order
    upper = data_independent_increment("paper", lam=lam, num_moments=100)
    active = np.any(split < upper, axis=1)
    assert np.all(np.any(unanimous < split[active], axis=1))
    if kind in ("paper", "updated", "corrected"):
        assert np.all(active)


@pytest.mark.parametrize("lam", [1e-4, 1e-3])
def test_all_kinds_coincide_at_small_lambda(lam):
    """Spec §0.4: for λ ≤ 1e-3 every kind charges U_l for every vote and l ≤ 100."""
    upper = data_independent_increment("paper", lam=lam, num_moments=100)
    for k in (2, 5, 10, 50, 100, 250, 1000):
        n1 = np.arange(k + 1)
        for kind in KINDS:
            out = moment_increments(kind, n1=n1, num_teachers=k, lam=lam, num_moments=100)
            np.testing.assert_allclose(out, np.broadcast_to(upper, out.shape), rtol=1e-12, err_msg=f"{kind} k={k}")


@pytest.mark.parametrize("lam", [0.1, 0.5, 1.0])
def test_paper_and_updated_agree(lam):
    """updated only evaluates q in log space."""
    a = moment_increments("paper", n1=np.arange(11), num_teachers=10, lam=lam, num_moments=50)
    b = moment_increments("updated", n1=np.arange(11), num_teachers=10, lam=lam, num_moments=50)
    np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)


def test_summed_is_sum_of_rows():
    rng = np.random.default_rng(0)
    n1 = rng.integers(0, 8, size=40)
    for kind in KINDS:
        rows = moment_increments(kind, n1=n1, num_teachers=7, lam=0.2, num_moments=30)
        np.testing.assert_allclose(summed_increments(kind, n1=n1, num_teachers=7, lam=0.2, num_moments=30), rows.sum(0))


def test_compare_increments_table():
    df = compare_increments(num_teachers=5, lam=1.0, num_moments=3)
    assert list(df.columns) == ["kind", "n1", "n0", "l", "q", "theorem3_valid", "increment"]
    assert len(df) == len(KINDS) * 6 * 3
    row = df[(df.kind == "synthcity") & (df.n1 == 1) & (df.l == 2)]
    assert row.increment.item() == pytest.approx(EXAMPLE_B["synthcity"][1], rel=RTOL)
    assert not df[(df.n1 == 2)].theorem3_valid.any()  # Example E
    assert df[(df.n1 == 1)].theorem3_valid.all()  # Example B


# -- bad input --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(kind="alg1"), "unknown accountant kind"),
        (dict(lam=0.0), "lam must be"),
        (dict(lam=float("nan")), "lam must be"),
        (dict(n1=[6]), r"\[0, num_teachers=5\]"),
        (dict(n1=[-1]), r"\[0, num_teachers=5\]"),
        (dict(n1=[1.5]), "whole numbers"),
        (dict(n1=[[1, 2]]), "1-D"),
        (dict(n1=["a"]), "integer vote counts"),
        (dict(num_moments=0), "num_moments must be a positive integer"),
        (dict(num_teachers=2.0), "num_teachers must be a positive integer"),
    ],
)
def test_bad_input(kwargs, match):
    args = dict(kind="updated", n1=[1], num_teachers=5, lam=1.0, num_moments=3) | kwargs
    kind = args.pop("kind")
    with pytest.raises(ValueError, match=match):
        moment_increments(kind, **args)


def test_bad_epsilon_input():
    with pytest.raises(ValueError, match="delta must lie in"):
        epsilon_from_moments(np.zeros(3), delta=0.0)
    with pytest.raises(ValueError, match="1-D"):
        epsilon_from_moments(np.zeros((2, 3)), delta=1e-5)


def test_module_doctests():
    assert doctest.testmod(formulas).failed == 0
