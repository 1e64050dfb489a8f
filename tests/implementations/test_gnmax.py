"""gnmax (implementations/gnmax.py): Confident-GNMax votes, the Rényi-DP accountant charging
every query, the budget rule that fixes the iteration count in advance, and the replay buffer."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pategan_audit.accounting.gnmax import DEFAULT_ORDERS, epsilon_from_rdp
from pategan_audit.implementations import create
from pategan_audit.accounting.gnmax import max_queries_within_budget
from pategan_audit.implementations.gnmax import confident_gnmax, noise_for_budget, per_query_rdp

from .conftest import make_toy, toy_bounds


def _fit(toy, **kw):
    kw.setdefault("planned_queries", 64)
    kw.setdefault("query_batch", 8)
    kw.setdefault("generator_steps", 16)
    kw.setdefault("seed", 0)
    return create("gnmax", public_bounds=toy_bounds(toy), **kw).fit(toy, label="y")


def test_per_query_cost_is_threshold_plus_gnmax():
    """PATE 2018: threshold check λ/(2σ₁²) (sensitivity 1) plus GNMax λ/σ₂² (Prop. 8)."""
    rdp = per_query_rdp(3.0, 5.0)
    np.testing.assert_allclose(rdp, DEFAULT_ORDERS / (2 * 9.0) + DEFAULT_ORDERS / 25.0, rtol=1e-12)


@pytest.mark.parametrize("queries", [16, 2048])
def test_noise_for_budget_spends_exactly_the_budget(queries):
    s = noise_for_budget(queries, epsilon=1.0, delta=1e-5)
    eps = epsilon_from_rdp(queries * per_query_rdp(s, s), orders=DEFAULT_ORDERS, delta=1e-5)[0]
    assert eps == pytest.approx(1.0, abs=1e-9)
    assert epsilon_from_rdp((queries + 1) * per_query_rdp(s, s), orders=DEFAULT_ORDERS, delta=1e-5)[0] > 1.0
    # the zCDP reading: ρ = 1.5 Q / σ² and ε ≈ ρ + 2√(ρ ln(1/δ)) — within the discreteness of the order grid
    rho = 1.5 * queries / s**2
    assert rho + 2 * np.sqrt(rho * np.log(1e5)) == pytest.approx(1.0, rel=0.02)


def test_confident_gnmax_answers_consensus_and_abstains_on_ties():
    g = torch.Generator().manual_seed(0)
    n1 = torch.tensor([10, 0, 5, 5])
    labels, answered, noise = confident_gnmax(n1, num_teachers=10, threshold=0.8, sigma_threshold=1e-6,
                                              sigma_vote=1e-6, generator=g)
    assert answered.tolist() == [True, True, False, False]
    assert labels[:2].tolist() == [1, 0]
    assert noise.shape == (4, 3)


def test_confident_gnmax_draws_do_not_depend_on_the_votes():
    outs = []
    for n1 in (torch.tensor([0, 0, 0]), torch.tensor([7, 3, 10])):
        g = torch.Generator().manual_seed(5)
        confident_gnmax(n1, num_teachers=10, threshold=0.6, sigma_threshold=2.0, sigma_vote=2.0, generator=g)
        outs.append(torch.rand(1, generator=g))
    assert torch.equal(outs[0], outs[1])


def test_every_query_is_charged_and_the_budget_is_met_before_it_runs_out():
    toy = make_toy(200)
    m = _fit(toy, record=True)
    assert m.trace.iterations == 64 // 8  # the budget rule: planned_queries / query_batch
    assert m.accountant.num_queries == 64
    expected = epsilon_from_rdp(64 * per_query_rdp(m.sigma_threshold_, m.sigma_vote_), orders=DEFAULT_ORDERS,
                                delta=1e-5)[0]
    assert m.trace.eps_hat[-1] == pytest.approx(expected, rel=1e-12) and m.trace.eps_hat[-1] <= 1.0 + 1e-12
    assert all(c.all() for c in m.trace.extra["charged"])  # answered or not


def test_unanswered_queries_never_reach_the_student():
    toy = make_toy(200)
    m = _fit(toy, record=True, threshold=0.95)
    labels = np.concatenate(m.trace.labels)
    answered = int((labels >= 0).sum())
    assert answered == sum(m.trace.extra["answered"]) < len(labels)  # -1 marks an unanswered query
    assert sum(len(r) for r in m._replay_rows) == answered


def test_teachers_follow_the_public_rule_and_seed_reproduces():
    toy = make_toy(200)
    a, b = _fit(toy), _fit(toy)
    assert a.num_teachers_ == 200  # k = N: the budget cannot pay for target_queries at σ = k/4 on 200 rows
    assert a.steps_per_iteration_ == 2  # 16 generator steps over 8 iterations
    np.testing.assert_array_equal(a.sample(20, seed=1).to_numpy(), b.sample(20, seed=1).to_numpy())


def test_fixed_noise_and_bad_settings():
    toy = make_toy(120)
    m = _fit(toy, sigma_threshold=50.0, sigma_vote=40.0, planned_queries=10**6)
    assert (m.sigma_threshold_, m.sigma_vote_) == (50.0, 40.0)
    with pytest.raises(ValueError, match="data-independently"):
        create("gnmax", charging="data_dependent")
    with pytest.raises(ValueError, match="threshold"):
        create("gnmax", threshold=1.5)
    with pytest.raises(ValueError, match="query_batch"):
        create("gnmax", query_batch=0)


def test_default_rule_sets_noise_from_the_teacher_count_and_queries_from_the_budget():
    """σ₁ = σ₂ = k/4 and as many queries as (ε, δ) pays for at that σ, asked 16 at a time."""
    toy = make_toy(400)
    m = create("gnmax", public_bounds=toy_bounds(toy), seed=0, generator_steps=8).fit(toy, label="y")
    k = m.num_teachers_
    assert k == 400 and m.sigma_vote_ == m.sigma_threshold_ == 0.25 * k
    q = max_queries_within_budget(per_query_rdp(100.0, 100.0), orders=DEFAULT_ORDERS, epsilon=1.0, delta=1e-5)
    assert m.trace.iterations == m.planned_iterations_ == q // 16
    assert m.trace.eps_hat[-1] <= 1.0 and m.trace.eps_hat[-1] > 0.9  # the budget is nearly spent


def test_too_few_teachers_for_one_iteration_is_a_clear_error():
    toy = make_toy(40)
    with pytest.raises(ValueError, match="cannot pay for one iteration"):
        create("gnmax", public_bounds=toy_bounds(toy), seed=0).fit(toy, label="y")


def test_charge_covers_the_exact_renyi_divergence_of_every_neighbouring_vote_pair():
    """The mechanism-level check of the accountant (no training): Confident-GNMax on two classes
    releases ⊥, 0 or 1 with Gaussian-CDF probabilities; for every vote count n1 and its neighbour
    n1 ± 1 (one teacher changes its vote) the exact Rényi divergence of these three-outcome
    distributions, both ways, stays below the per-query RDP the preset charges, at every order."""
    from scipy.special import log_ndtr

    from pategan_audit.implementations.gnmax import exact_query_rdp

    k, s1, s2 = 20, 3.0, 4.0
    orders = DEFAULT_ORDERS[DEFAULT_ORDERS <= 200]
    worst = exact_query_rdp(k, threshold=0.6, sigma_threshold=s1, sigma_vote=s2, orders=orders)
    charged = per_query_rdp(s1, s2, orders)
    assert (worst <= charged + 1e-12).all()
    assert worst.max() > 0.05 * charged.max()  # the check is not vacuous: the bound is within 20x
    # independent spot check at order 2, n1 = 12 vs 13, by direct summation
    def probs(n1):
        top, z = max(20 - n1, n1), (2 * n1 - 20) / (np.sqrt(2) * s2)
        ans = np.exp(log_ndtr((top - 12) / s1))
        return np.array([1 - ans, ans * np.exp(log_ndtr(z)), ans * np.exp(log_ndtr(-z))])
    p, q = probs(12), probs(13)
    assert np.log(np.sum(p**2 / q)) <= worst[np.searchsorted(orders, 2.0)] + 1e-12


def test_teacher_count_rule_stops_at_what_the_target_queries_need():
    """Large N: the smallest k with σ = k/4 paying for target_queries; small N: k = N."""
    sigma = noise_for_budget(4096, epsilon=1.0, delta=1e-5)
    big = create("gnmax", seed=0)._default_num_teachers(100_000)
    assert big == int(np.ceil(sigma / 0.25)) < 100_000
    assert create("gnmax", seed=0)._default_num_teachers(500) == 500


def test_public_plan_matches_what_a_fit_does():
    toy = make_toy(400)
    plan = __import__("pategan_audit.implementations.gnmax", fromlist=["public_plan"]).public_plan(400, generator_steps=8)
    m = create("gnmax", public_bounds=toy_bounds(toy), seed=0, generator_steps=8).fit(toy, label="y")
    assert (plan["teachers"], plan["iterations"], plan["sigma"]) == (m.num_teachers_, m.trace.iterations, m.sigma_vote_)
    assert plan["epsilon spent"] == pytest.approx(m.trace.eps_hat[-1], rel=1e-9)
