"""MomentsAccountant: state over a run, stopping loops, and the corrected stopping rule."""
import doctest

import numpy as np
import pytest

from pategan_audit.accounting import KINDS, MomentOrderAtEdgeWarning, MomentsAccountant, summed_increments
from pategan_audit.accounting import accountant as accountant_module

RTOL = 1e-9


def make(kind="updated", lam=1e-3, L=20, delta=1e-5, k=10, **kw):
    return MomentsAccountant(kind, lam=lam, num_moments=L, delta=delta, num_teachers=k, warn_at_edge=False, **kw)


def iterations_until_budget(acc, *, queries_per_iteration, target_epsilon):
    """The released loops: train an iteration, update ε̂, stop once ε̂ ≥ ε (the iteration that
    overshoots is counted, spec §0.4). smartnoise checks at the top of the loop instead, which
    trains the same number of iterations (spec §7.3). Votes are a tie-free split; at λ ≤ 1e-3 the
    accountant is vote-independent (spec §0.4), so any split gives the same count."""
    votes = np.full(queries_per_iteration, acc.num_teachers // 2)
    first, iterations = None, 0
    while acc.epsilon < target_epsilon:
        acc.charge(votes)
        iterations += 1
        first = acc.epsilon if first is None else first
    return first, iterations


# Implementations spec §8.2, "Vote-independent stopping tests": (ε̂ after 1 iteration, iterations
# run at ε = 1, iterations run at ε = 8).
STOPPING = [
    pytest.param("updated", 1e-3, 20, 1e-5, 64, 0.578334, 158, 8130, id="updated"),
    pytest.param("borealis", 1e-4, 100, 1e-5, 5 * 64, 0.115776, 3252, 162593, id="borealis"),
    pytest.param("smartnoise", 1e-3, 100, 1e-5, 5 * 64, 0.179769, 33, 1626, id="smartnoise"),
    pytest.param("smartnoise", 1e-3, 100, 686**-1.5, 5 * 64, 0.162603, 38, 1850, id="smartnoise-N686"),
]


@pytest.mark.parametrize("kind,lam,L,delta,queries,first,iters1,iters8", STOPPING)
def test_vote_independent_stopping(kind, lam, L, delta, queries, first, iters1, iters8):
    acc = make(kind, lam, L, delta)
    got_first, got1 = iterations_until_budget(acc, queries_per_iteration=queries, target_epsilon=1.0)
    assert got_first == pytest.approx(first, abs=5e-7)  # spec prints 6 decimals
    assert got1 == iters1
    _, got8 = iterations_until_budget(make(kind, lam, L, delta), queries_per_iteration=queries, target_epsilon=8.0)
    assert got8 == iters8


def test_smartnoise_top_of_loop_check_trains_the_same_number_of_iterations():
    """smartnoise (spec §7.3): iteration += 1; eps = ε̂; if eps > ε: break; then train."""
    acc = make("smartnoise", 1e-3, 100, 1e-5)
    iteration, trained, eps = 0, 0, 0.0
    while eps < 1.0:
        iteration += 1
        eps = acc.epsilon
        if eps > 1.0:
            break
        acc.charge(np.full(320, 5))
        trained += 1
    assert trained == 33 and iteration == 34


def test_zero_queries_and_floor():
    acc = make()
    acc.charge(np.array([], dtype=int))
    np.testing.assert_array_equal(acc.alpha, np.zeros(20))
    assert acc.num_queries == 0
    assert acc.epsilon == pytest.approx(np.log(1e5) / 20, rel=1e-12)


def test_matches_summed_increments():
    rng = np.random.default_rng(1)
    for kind in KINDS:
        acc = make(kind, lam=0.3, L=40, k=9)
        batches = [rng.integers(0, 10, size=64) for _ in range(5)]
        for b in batches:
            acc.charge(b)
        ref = sum(summed_increments(kind, n1=b, num_teachers=9, lam=0.3, num_moments=40) for b in batches)
        np.testing.assert_allclose(acc.alpha, ref, rtol=1e-12, equal_nan=True)
        assert acc.num_queries == 320


def test_nan_ends_the_loop_and_negative_alpha():
    """Example F (k=5, (3,2), λ=0.5): updated α(1) = NaN, so ε̂ = NaN and `NaN < ε` is False;
    borealis α(1) becomes negative."""
    upd = make("updated", lam=0.5, L=3, k=5)
    upd.charge([2])
    assert np.isnan(upd.epsilon) and upd.best_order == -1
    assert not (upd.epsilon < 1.0)
    bor = make("borealis", lam=0.5, L=3, k=5)
    bor.charge([2])
    assert bor.alpha[0] == pytest.approx(-11.63061741, rel=RTOL)


def test_edge_warning_from_epsilon():
    acc = MomentsAccountant("smartnoise", lam=1e-3, num_moments=100, delta=1e-5, num_teachers=5)
    with pytest.warns(MomentOrderAtEdgeWarning, match="l = L = 100"):
        acc.epsilon
    assert acc.best_order == 100


@pytest.mark.parametrize("kind", KINDS)
def test_epsilon_if_dominates_any_votes(kind):
    rng = np.random.default_rng(2)
    for lam in (0.05, 0.3, 1.0):
        acc = make(kind, lam=lam, L=50, k=7)
        for _ in range(3):
            predicted = acc.epsilon_if(64)
            acc.charge(rng.integers(0, 8, size=64))
            if not np.isnan(acc.epsilon):
                assert acc.epsilon <= predicted + 1e-12
    assert make(kind).epsilon_if(0) == make(kind).epsilon


def test_corrected_stopping_rule_never_overshoots():
    """Spec §9.1 item 6: run an iteration only if the worst-case ε̂ stays within the budget."""
    rng = np.random.default_rng(3)
    for lam, target in [(0.01, 8.0), (0.003, 2.0), (1e-3, 1.0)]:
        acc = make("corrected", lam=lam, L=100, k=10)
        iterations = 0
        while acc.epsilon_if(5 * 64) <= target:
            for _ in range(5):
                acc.charge(rng.binomial(10, 0.9, size=64))
            iterations += 1
        assert iterations > 0
        assert acc.epsilon <= target
        # the released rule would have run at least one more iteration
        assert acc.epsilon < target


def test_corrected_rule_stops_one_iteration_before_the_released_overshoot():
    """updated's setting (λ = 1e-3, L = 20, 64 queries, ε = 1): the released loop runs 158
    iterations and ends above ε; the corrected rule runs 157 and ends at or below ε."""
    released = make("updated")
    _, n_released = iterations_until_budget(released, queries_per_iteration=64, target_epsilon=1.0)
    corrected = make("corrected")
    n_corrected = 0
    while corrected.epsilon_if(64) <= 1.0:
        corrected.charge(np.full(64, 5))
        n_corrected += 1
    assert (n_released, n_corrected) == (158, 157)
    assert released.epsilon > 1.0 >= corrected.epsilon


def test_copy_is_independent():
    acc = make()
    acc.charge([5] * 3)
    twin = acc.copy()
    twin.charge([5] * 3)
    assert twin.num_queries == 6 and acc.num_queries == 3
    assert np.all(twin.alpha > acc.alpha)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(delta=0.0), "delta must lie in"),
        (dict(delta=1.0), "delta must lie in"),
        (dict(kind="alg1"), "unknown accountant kind"),
        (dict(lam=-1.0), "lam must be"),
        (dict(k=0), "num_teachers must be"),
    ],
)
def test_bad_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(**kwargs)


def test_bad_queries():
    acc = make(k=5)
    with pytest.raises(ValueError, match=r"\[0, num_teachers=5\]"):
        acc.charge([6])
    with pytest.raises(ValueError, match="non-negative integer"):
        acc.epsilon_if(-1)


def test_module_doctests():
    assert doctest.testmod(accountant_module).failed == 0
