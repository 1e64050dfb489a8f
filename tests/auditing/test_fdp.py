"""GDP / f-DP ε from a whole ROC curve, and the chance floor of the Bayesian bound (auditing/fdp.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from pategan_audit.auditing.bounds import AttackCounts, bayesian_eps_lower
from pategan_audit.auditing.fdp import (
    bayesian_null_floor,
    count_grid,
    gdp_audit,
    gdp_delta,
    gdp_epsilon,
    gdp_mu_ceiling,
    gdp_mu_from_counts,
    gdp_mu_lower_bound,
    gdp_tradeoff,
    mu_from_epsilon_delta,
)


# --- μ <-> (ε, δ) ---------------------------------------------------------------------------------

def _delta_by_quadrature(mu: float, eps: float) -> float:
    """Independent δ(ε): E_P[(1 − e^{ε − L})_+] with the privacy loss L of N(0,1) vs N(μ,1),
    L ~ N(μ²/2, μ²) under P (no closed form used), integrated numerically."""
    f = lambda ell: (1.0 - math.exp(eps - ell)) * stats.norm.pdf(ell, mu * mu / 2, mu)  # noqa: E731
    val, _ = integrate.quad(f, eps, mu * mu / 2 + 40 * mu, epsabs=0, epsrel=1e-11, limit=200)
    return val


@pytest.mark.parametrize("mu, delta", [(0.5, 1e-5), (1.0, 1e-5), (2.0, 1e-3), (3.0, 1e-6)])
def test_gdp_epsilon_solves_the_closed_form_and_matches_quadrature(mu, delta):
    eps = gdp_epsilon(mu, delta)
    closed = special.ndtr(-eps / mu + mu / 2) - math.exp(eps) * special.ndtr(-eps / mu - mu / 2)
    assert closed == pytest.approx(delta, rel=1e-9)
    assert _delta_by_quadrature(mu, eps) == pytest.approx(delta, rel=1e-6)


def test_gdp_delta_monte_carlo_and_hand_values():
    # ε = 0: δ is the total-variation distance 2Φ(μ/2) − 1 (worked by hand: μ = 1 → 0.3829249)
    assert gdp_delta(1.0, 0.0) == pytest.approx(2 * special.ndtr(0.5) - 1, rel=1e-12)
    assert gdp_delta(1.0, 0.0) == pytest.approx(0.38292492, abs=1e-8)
    # Monte-Carlo of the Gaussian mechanism's privacy loss (10^6 draws), δ(ε) at δ ≈ 0.01
    x = np.random.default_rng(0).standard_normal(10**6)
    loss = -1.5 * x + 1.5**2 / 2  # ln(φ(x)/φ(x − μ)) for x ~ N(0,1), μ = 1.5
    eps = gdp_epsilon(1.5, 0.01)
    assert np.mean(np.clip(1 - np.exp(eps - loss), 0, None)) == pytest.approx(0.01, rel=0.05)
    assert gdp_epsilon(0.0, 1e-5) == 0.0 and gdp_epsilon(0.01, 0.5) == 0.0


def test_mu_from_epsilon_delta_round_trip():
    for mu in (0.1, 0.8, 2.5):
        assert mu_from_epsilon_delta(gdp_epsilon(mu, 1e-5), 1e-5) == pytest.approx(mu, rel=1e-9)
    # larger ε at the same δ allows a larger μ
    assert mu_from_epsilon_delta(2.0, 1e-5) > mu_from_epsilon_delta(1.0, 1e-5)


def test_tradeoff_curve_of_gaussian_scores():
    # N(0,1) vs N(μ,1), threshold t: FPR = 1 − Φ(t), FNR = Φ(t − μ) = G_μ(FPR)
    t = np.linspace(-2, 3, 11)
    assert np.allclose(gdp_tradeoff(1.3, 1 - special.ndtr(t)), special.ndtr(t - 1.3), atol=1e-12)


# --- μ lower bound from scores ----------------------------------------------------------------------

@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_recovers_mu_of_gaussian_scores(mu):
    rng = np.random.default_rng(int(mu * 10))
    n = 50_000
    lo = gdp_mu_lower_bound(rng.standard_normal(n), rng.standard_normal(n) + mu, alpha=0.05)
    assert mu - 0.08 < lo <= mu


def test_direction_free_and_counts_interface_agree():
    rng = np.random.default_rng(1)
    so, si = rng.standard_normal(2000), rng.standard_normal(2000) + 1.0
    assert gdp_mu_lower_bound(so, si) == pytest.approx(gdp_mu_lower_bound(-so, -si), abs=1e-12)
    t = np.unique(np.r_[so, si])
    fp = (so[None, :] >= t[:, None]).sum(1)
    fn = (si[None, :] < t[:, None]).sum(1)
    assert gdp_mu_from_counts(fp=fp, fn=fn, n_out=2000, n_in=2000)["mu_lo"] == pytest.approx(gdp_mu_lower_bound(so, si))


def test_perfect_attack_hits_the_sample_size_ceiling():
    n, alpha = 400, 0.05
    lo = gdp_mu_lower_bound(np.zeros(n), np.ones(n), alpha=alpha)
    # by hand: zero errors, one-sided CP upper bound 1 − a^{1/n}, a = α / (4 |grid|)
    a = alpha / (4 * count_grid(n).size)
    assert lo == pytest.approx(-2 * special.ndtri(1 - a ** (1 / n)), rel=1e-12)
    assert lo == gdp_mu_ceiling(n, n, alpha=alpha)
    assert gdp_mu_ceiling(4 * n, 4 * n) > lo  # more outputs, higher ceiling
    rec = gdp_audit(np.zeros(n), np.ones(n), delta=1e-5)
    assert rec["mu_lo"] == rec["mu_ceiling"] and rec["epsilon_lo"] == pytest.approx(gdp_epsilon(lo, 1e-5))
    # a perfectly wrong attack is as informative (mirrored rule)
    assert gdp_mu_lower_bound(np.ones(n), np.zeros(n), alpha=alpha) == pytest.approx(lo)


def test_random_attack_gives_about_zero():
    rng = np.random.default_rng(2)
    assert gdp_mu_lower_bound(rng.random(3000), rng.random(3000)) <= 0.05
    # ties: a constant score carries nothing
    assert gdp_mu_lower_bound(np.full(100, 0.3), np.full(100, 0.3)) == 0.0


def test_simultaneous_bound_covers_over_threshold_selection():
    """Validity check (property): over 200 worlds with true μ = 1 the bound exceeds μ rarely (≤ α)."""
    rng = np.random.default_rng(3)
    exceed = [gdp_mu_lower_bound(rng.standard_normal(200), rng.standard_normal(200) + 1.0, alpha=0.1) > 1.0
              for _ in range(200)]
    assert np.mean(exceed) <= 0.1


def test_discrete_scores_and_validation():
    so = np.repeat([0.0, 0.5, 1.0], [300, 80, 20])
    si = np.repeat([0.0, 0.5, 1.0], [20, 80, 300])
    assert 0 < gdp_mu_lower_bound(so, si) < gdp_mu_ceiling(400, 400)
    with pytest.raises(ValueError, match="both worlds"):
        gdp_mu_lower_bound([], [1.0])
    with pytest.raises(ValueError, match="correction"):
        gdp_mu_lower_bound(so, si, correction="none")
    grid = count_grid(1000)
    assert grid[0] == 0 and grid[-1] == 1000 and np.all(np.diff(grid) > 0)


# --- the Bayesian bound under the null ---------------------------------------------------------------

def test_bayesian_null_floor_positive_and_decreasing():
    small = bayesian_null_floor(20, 20, n_sims=40, seed=0)
    large = bayesian_null_floor(200, 200, n_sims=40, seed=0)
    assert small["floor"] > large["floor"] > 0
    assert small["per_rate"][0.5]["fraction_positive"] > 0.5  # the bound is almost never 0 by chance
    assert small["constant_guess"] > 0
    # constant "all out" guess = constant "all in" guess (symmetry of region and posterior)
    assert bayesian_eps_lower(AttackCounts(FP=0, TN=20, FN=20, TP=0)) == pytest.approx(small["constant_guess"], abs=1e-3)
    with pytest.raises(ValueError):
        bayesian_null_floor(0, 10)
