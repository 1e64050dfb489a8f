"""Confident-GNMax privacy analysis (PATE 2018) against independent computations.

Reference numbers: the Gaussian RDP values below were produced once by Google's ``dp-accounting``
0.6.0 (``dp_accounting.rdp.RdpAccountant`` composing ``GaussianDpEvent(noise_multiplier)``, in a
scratch virtualenv, not a project dependency); everything else is recomputed here by a different
route (plain-float formulas, closed forms, Monte Carlo, brute force over all histograms).
"""
import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from pategan_audit.accounting import gnmax
from pategan_audit.accounting.gnmax import (
    DEFAULT_ORDERS,
    epsilon_from_rdp,
    gaussian_rdp,
    gnmax_data_dependent_rdp,
    gnmax_log_q,
    gnmax_rdp,
    max_queries_within_budget,
    theorem6_rdp,
    threshold_rdp,
)
from pategan_audit.accounting.smooth_sensitivity import (
    gnmax_local_sensitivities,
    gnmax_log_q0,
    gnmax_smooth_sensitivity,
    gnss_rdp,
    optimal_gnss_sigma,
    release_gnmax_epsilon,
    smooth_sensitivity,
)

DPACC_ORDERS = [1.5, 2.0, 8.0, 32.5, 128.0]


# -- 1. data-independent RDP, pinned to dp-accounting 0.6.0 -------------------------------------
def test_gaussian_rdp_matches_dp_accounting():
    # dp_accounting 0.6.0: RdpAccountant(orders).compose(GaussianDpEvent(1.3))._rdp
    ref = [0.44378698224852065, 0.5917159763313609, 2.3668639053254434, 9.615384615384615, 37.869822485207095]
    np.testing.assert_allclose(gaussian_rdp(DPACC_ORDERS, sigma=1.3), ref, rtol=1e-9)
    # same event, sensitivity 2 and sigma 2.6 (only the ratio matters)
    np.testing.assert_allclose(gaussian_rdp(DPACC_ORDERS, sigma=2.6, sensitivity=2.0), ref, rtol=1e-9)


def test_gnmax_rdp_matches_dp_accounting():
    # dp_accounting 0.6.0: SelfComposedDpEvent(GaussianDpEvent(40/sqrt(2)), 1000), i.e. 1000 GNMax
    # answers with sigma = 40 and L2 sensitivity sqrt(2)
    ref = [0.9375000000000002, 1.2500000000000002, 5.000000000000001, 20.312500000000004, 80.00000000000001]
    np.testing.assert_allclose(1000 * gnmax_rdp(DPACC_ORDERS, sigma=40.0), ref, rtol=1e-9)
    np.testing.assert_allclose(1000 * gaussian_rdp(DPACC_ORDERS, sigma=40.0, sensitivity=math.sqrt(2)), ref, rtol=1e-9)


def test_threshold_rdp_matches_dp_accounting():
    # dp_accounting 0.6.0: SelfComposedDpEvent(GaussianDpEvent(150.0), 5000): 5000 threshold checks
    ref = [0.16666666666666669, 0.22222222222222224, 0.888888888888889, 3.611111111111111, 14.222222222222223]
    np.testing.assert_allclose(5000 * threshold_rdp(DPACC_ORDERS, sigma=150.0), ref, rtol=1e-9)


# -- 3. conversion and the queries-that-fit helper ------------------------------------------------
def _closed_form_eps(total_over_sigma2, delta):
    """min over real λ > 1 of c·λ + ln(1/δ)/(λ-1) = c + 2·sqrt(c·ln(1/δ)), at λ* = 1 + sqrt(ln(1/δ)/c)."""
    L = math.log(1 / delta)
    return total_over_sigma2 + 2 * math.sqrt(total_over_sigma2 * L), 1 + math.sqrt(L / total_over_sigma2)


def test_epsilon_from_rdp_matches_continuous_optimum():
    sigma, queries, delta = 40.0, 1000, 1e-5
    c = queries / sigma**2
    eps_star, lam_star = _closed_form_eps(c, delta)
    # independent numeric optimisation over real orders
    res = minimize_scalar(lambda lam: c * lam + math.log(1 / delta) / (lam - 1), bounds=(1.0001, 500), method="bounded",
                          options={"xatol": 1e-10})
    assert res.fun == pytest.approx(eps_star, rel=1e-9)
    fine = np.linspace(1.001, 60.0, 400_001)
    eps, lam = epsilon_from_rdp(queries * gnmax_rdp(fine, sigma=sigma), orders=fine, delta=delta)
    assert eps == pytest.approx(eps_star, abs=1e-8)
    assert lam == pytest.approx(lam_star, abs=2e-4)
    eps_default, _ = epsilon_from_rdp(queries * gnmax_rdp(DEFAULT_ORDERS, sigma=sigma), orders=DEFAULT_ORDERS, delta=delta)
    assert eps_star <= eps_default <= eps_star * 1.001


def test_epsilon_from_rdp_returns_first_minimiser_and_validates():
    # ε per order with ln(1/δ) = 1: 1 + 1, 0.5 + 0.5, 0.75 + 0.25 -> tie between λ = 3 and λ = 5
    eps, lam = epsilon_from_rdp([1.0, 0.5, 0.75], orders=[2.0, 3.0, 5.0], delta=math.exp(-1))
    assert (eps, lam) == (pytest.approx(1.0), 3.0)
    with pytest.raises(ValueError, match="one value per order"):
        epsilon_from_rdp([1.0], orders=[2.0, 3.0], delta=1e-5)
    with pytest.raises(ValueError, match="delta"):
        epsilon_from_rdp([1.0], orders=[2.0], delta=0.0)
    with pytest.raises(ValueError, match="orders"):
        epsilon_from_rdp([1.0], orders=[1.0], delta=1e-5)
    with pytest.raises(ValueError, match="NaN"):
        epsilon_from_rdp([np.nan], orders=[2.0], delta=1e-5)


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_max_queries_is_the_largest_that_fits(epsilon):
    sigma1, sigma2, delta = 150.0, 40.0, 1e-5
    cost = threshold_rdp(DEFAULT_ORDERS, sigma=sigma1) + gnmax_rdp(DEFAULT_ORDERS, sigma=sigma2)
    q = max_queries_within_budget(cost, orders=DEFAULT_ORDERS, epsilon=epsilon, delta=delta)
    assert q > 0
    assert epsilon_from_rdp(q * cost, orders=DEFAULT_ORDERS, delta=delta)[0] <= epsilon
    assert epsilon_from_rdp((q + 1) * cost, orders=DEFAULT_ORDERS, delta=delta)[0] > epsilon
    # continuous-order closed form: Q* = (sqrt(L + ε) - sqrt(L))² / c with c = per-query λ coefficient
    c = 1 / (2 * sigma1**2) + 1 / sigma2**2
    L = math.log(1 / delta)
    q_star = (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2 / c
    assert q <= q_star and q >= 0.98 * q_star - 1


def test_max_queries_edge_cases():
    cost = gnmax_rdp([2.0], sigma=40.0)
    # only order 2: ln(1/δ)/(2-1) = 11.5 > 1 -> not even zero queries fit
    assert max_queries_within_budget(cost, orders=[2.0], epsilon=1.0, delta=1e-5) == 0
    with pytest.raises(ValueError, match="zero at every order"):
        max_queries_within_budget([0.0], orders=[2.0], epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        max_queries_within_budget(cost, orders=[2.0], epsilon=-1.0, delta=1e-5)


# -- 2. q̃ (Prop. 7) and Theorem 6 ----------------------------------------------------------------
def _mc_noisy_argmax_miss(votes, sigma, draws, seed):
    rng = np.random.default_rng(seed)
    votes = np.asarray(votes, float)
    noisy = votes + sigma * rng.standard_normal((draws, votes.size))
    return float(np.mean(np.argmax(noisy, axis=1) != np.argmax(votes)))


def test_q_is_exact_for_two_classes_by_monte_carlo():
    votes, sigma, draws = [7, 3], 3.0, 1_000_000
    q = math.exp(gnmax_log_q(votes, sigma=sigma)[0])
    assert q == pytest.approx(norm.cdf(-4 / (math.sqrt(2) * sigma)), rel=1e-12)
    p_hat = _mc_noisy_argmax_miss(votes, sigma, draws, seed=1)
    std = math.sqrt(q * (1 - q) / draws)
    assert abs(p_hat - q) < 5 * std


def test_q_bounds_three_classes_by_monte_carlo():
    votes, sigma, draws = [6, 3, 1], 2.0, 1_000_000
    q = math.exp(gnmax_log_q(votes, sigma=sigma)[0])
    # Prop. 7 by hand: ½erfc(3/4) + ½erfc(5/4)
    assert q == pytest.approx(0.5 * math.erfc(3 / 4) + 0.5 * math.erfc(5 / 4), rel=1e-12)
    p_hat = _mc_noisy_argmax_miss(votes, sigma, draws, seed=2)
    std = math.sqrt(p_hat * (1 - p_hat) / draws)
    assert p_hat <= q + 5 * std  # an upper bound ...
    assert p_hat >= 0.8 * q  # ... and not a loose one here (union bound over 2 close events)


def test_q_is_capped_and_batched():
    lq = gnmax_log_q([[1, 1, 1, 1], [4, 0, 0, 0], [0, 0, 4, 0]], sigma=10.0)
    assert lq[0] == pytest.approx(math.log(0.75), rel=1e-15)  # union bound 1.5, capped at 1 - 1/m
    assert lq[1] == pytest.approx(lq[2], rel=1e-15)  # class labels do not matter
    assert gnmax_log_q(np.zeros((0, 3)), sigma=1.0).shape == (0,)


def _theorem6_plain(q, sigma, lam):
    """Thm 6 with Prop. 10's μ's, in plain floats (no log-space tricks), with its conditions."""
    mu2 = sigma * math.sqrt(math.log(1 / q))
    mu1 = mu2 + 1
    eps1, eps2 = mu1 / sigma**2, mu2 / sigma**2
    ok = mu2 > 1 and mu1 >= lam and q * math.exp(eps2) < 1
    ok = ok and q <= math.exp((mu2 - 1) * eps2) / (mu1 / (mu1 - 1) * mu2 / (mu2 - 1)) ** mu2
    if not ok:
        return None
    a = (1 - q) / (1 - (q * math.exp(eps2)) ** ((mu2 - 1) / mu2))
    b = math.exp(eps1) / q ** (1 / (mu1 - 1))
    return math.log((1 - q) * a ** (lam - 1) + q * b ** (lam - 1)) / (lam - 1)


@pytest.mark.parametrize("votes", [[250, 0], [240, 10], [200, 50], [190, 40, 20]])
@pytest.mark.parametrize("lam", [2.0, 10.0, 20.0, 55.5])
def test_theorem6_matches_plain_float_formula(votes, lam):
    sigma = 40.0
    q = math.exp(gnmax_log_q(votes, sigma=sigma)[0])
    expected = _theorem6_plain(q, sigma, lam)
    expected = lam / sigma**2 if expected is None else min(expected, lam / sigma**2)
    got = gnmax_data_dependent_rdp(votes, sigma=sigma, orders=[lam])[0, 0]
    assert got == pytest.approx(expected, rel=1e-9)


def test_theorem6_below_data_independent_and_vanishes_with_consensus():
    sigma, orders = 40.0, np.array([2.0, 5.0, 20.0, 50.0])
    ks = np.arange(50, 1001, 50)
    rdp = np.vstack([gnmax_data_dependent_rdp([k, 0], sigma=sigma, orders=orders)[0] for k in ks])
    assert np.all(rdp <= orders / sigma**2)
    assert np.all(np.diff(rdp, axis=0) <= 1e-15)  # more consensus, less privacy cost
    assert np.all(rdp[-1] < 1e-20)
    assert np.any(rdp[0] == orders / sigma**2)  # k = 50 is no consensus at sigma 40: fallback
    assert np.all(theorem6_rdp([-np.inf], sigma=sigma, orders=orders) == 0.0)


def test_theorem6_fallback_where_conditions_fail():
    # q̃ = 0.3: μ2 = σ·sqrt(ln(1/0.3)) = 1.10σ, and Lemma 9's condition fails at sigma = 1
    assert _theorem6_plain(0.3, 1.0, 2.0) is None
    assert theorem6_rdp([math.log(0.3)], sigma=1.0, orders=[2.0])[0, 0] == 2.0
    # μ1 < λ: σ = 2, q̃ = e^{-1}: μ1 = 3 < λ = 10
    assert theorem6_rdp([-1.0], sigma=2.0, orders=[10.0])[0, 0] == 10.0 / 4.0


@pytest.mark.parametrize("sigma", [2.0, 5.0, 40.0])
def test_theorem6_upper_bounds_exact_renyi_divergence_two_classes(sigma):
    """For m = 2, GNMax outputs the minority class with probability p(g) = Φ(-g/(√2σ)) exactly
    (g = vote gap); a neighbour has gap g ± 2. The bound must dominate D_λ(M(D) ‖ M(D'))."""
    orders = np.array([1.5, 2.0, 4.0, 10.0, 30.0])
    for g in range(0, 401, 2):
        k = 400
        votes = [(k + g) // 2, (k - g) // 2]
        bound = gnmax_data_dependent_rdp(votes, sigma=sigma, orders=orders)[0]
        lp = norm.logcdf(-g / (math.sqrt(2) * sigma))
        l1p = norm.logcdf(g / (math.sqrt(2) * sigma))
        for g2 in (g - 2, g + 2):
            lp2, l1p2 = norm.logcdf(-g2 / (math.sqrt(2) * sigma)), norm.logcdf(g2 / (math.sqrt(2) * sigma))
            exact = np.logaddexp(orders * lp + (1 - orders) * lp2, orders * l1p + (1 - orders) * l1p2) / (orders - 1)
            assert np.all(exact <= bound * (1 + 1e-9) + 1e-300), (sigma, g, g2)


# -- 4. smooth sensitivity ---------------------------------------------------------------------------
def _all_histograms(m, k):
    return np.array([h for h in itertools.product(range(k + 1), repeat=m) if sum(h) == k], float)


@pytest.mark.parametrize(
    "m, k, sigma, order",
    [(2, 50, 5.0, 10.0), (2, 30, 3.0, 2.0), (3, 12, 2.0, 3.0), (3, 20, 2.0, 6.0), (4, 10, 1.5, 2.5)],
)
def test_local_sensitivity_bounds_dominate_brute_force(m, k, sigma, order):
    """A(d) must bound max{LS(n'): n' within d vote changes}, with LS(n') = max over all
    neighbours (one vote moved) of |β(n') - β(n'')|, all computed by enumeration."""
    hist = _all_histograms(m, k)
    beta = gnmax_data_dependent_rdp(hist, sigma=sigma, orders=[order])[:, 0]
    dist = np.abs(hist[:, None, :] - hist[None, :, :]).sum(-1) / 2
    ls = np.array([np.max(np.abs(beta[i] - beta[dist[i] == 1])) for i in range(len(hist))])
    bound = gnmax_local_sensitivities(hist, sigma=sigma, order=order)
    assert bound.shape == (len(hist), k + 1)
    assert np.any(ls > 0)
    for d in range(k + 1):
        exact = np.array([ls[dist[i] <= d].max() for i in range(len(hist))])
        assert np.all(bound[:, d] >= exact - 1e-12), d
    assert np.all(np.diff(bound, axis=1) >= 0)  # nondecreasing in d
    # the released data-dependent RDP is the function analysed here
    rel = release_gnmax_epsilon(hist, sigma=sigma, order=order, delta=1e-5, beta=0.4 / order, sigma_s=1.0,
                                rng=np.random.default_rng(0))
    assert rel.data_dependent_rdp == pytest.approx(beta.sum(), rel=1e-12)


def test_local_sensitivity_two_classes_is_tight_at_distance_zero():
    # m = 2: the neighbours' q̃ are exactly bl(q̃), bu(q̃), so A(0) is the exact LS
    sigma, order = 5.0, 10.0
    votes = np.array([[44, 6], [45, 5], [43, 7]], float)
    beta = gnmax_data_dependent_rdp(votes, sigma=sigma, orders=[order])[:, 0]
    a0 = gnmax_local_sensitivities(votes[:1], sigma=sigma, order=order)[0, 0]
    assert a0 == pytest.approx(max(beta[2] - beta[0], beta[0] - beta[1]), rel=1e-9)


def test_local_sensitivity_zero_when_data_independent_everywhere():
    # k = 40, sigma = 40: even a unanimous vote has q̃ > q₀, so the RDP never depends on the votes
    assert gnmax_log_q([40, 0], sigma=40.0)[0] > gnmax_log_q0(sigma=40.0, order=20.0)
    assert np.all(gnmax_local_sensitivities([[40, 0], [25, 15]], sigma=40.0, order=20.0) == 0)


def test_log_q0_is_the_crossing_point():
    sigma, order = 40.0, 20.0
    lq0 = gnmax_log_q0(sigma=sigma, order=order)
    below = theorem6_rdp([lq0 - 1e-3], sigma=sigma, orders=[order])[0, 0]
    at = _theorem6_plain(math.exp(lq0), sigma, order)
    assert below < order / sigma**2
    assert at == pytest.approx(order / sigma**2, rel=1e-9)
    assert theorem6_rdp([lq0 + 1e-3], sigma=sigma, orders=[order])[0, 0] == order / sigma**2


def test_smooth_sensitivity_discounting():
    assert smooth_sensitivity([1.0, 3.0, 2.0], beta=0.5) == pytest.approx(3 * math.exp(-0.5), rel=1e-15)
    assert smooth_sensitivity([[1.0, 1.0], [0.5, 2.0]], beta=0.0) == 3.0  # summed over queries first
    votes = np.array([[250, 0], [240, 10], [200, 50], [150, 100]])
    ls = gnmax_local_sensitivities(votes, sigma=40.0, order=20.0)
    betas = [0.0, 0.001, 0.01, 0.0245, 0.1, 1.0, 50.0]
    ss = [gnmax_smooth_sensitivity(votes, sigma=40.0, order=20.0, beta=b) for b in betas]
    assert all(s >= ls[:, 0].sum() - 1e-15 for s in ss)  # SS ≥ the local sensitivity at D
    assert all(a >= b for a, b in zip(ss, ss[1:]))  # nonincreasing in β
    assert ss[0] == pytest.approx(ls.sum(axis=0).max(), rel=1e-12)
    assert ss[-1] == pytest.approx(ls[:, 0].sum(), rel=1e-12)
    with pytest.raises(ValueError, match="beta"):
        smooth_sensitivity([1.0], beta=-1.0)


def test_duplicate_histograms_are_summed_not_dropped():
    votes = np.array([[200, 50], [50, 200], [200, 50]])
    one = gnmax_local_sensitivities(votes[:1], sigma=40.0, order=20.0)[0]
    np.testing.assert_allclose(gnmax_local_sensitivities(votes, sigma=40.0, order=20.0), np.vstack([one] * 3), rtol=1e-15)
    ss = gnmax_smooth_sensitivity(votes, sigma=40.0, order=20.0, beta=0.01)
    assert ss == pytest.approx(smooth_sensitivity(3 * one, beta=0.01), rel=1e-12)


# -- GNSS release -------------------------------------------------------------------------------------
def test_gnss_rdp_by_hand_and_domain():
    lam, beta, s = 20.0, 0.49 / 20, 5.0
    by_hand = lam * math.exp(2 * beta) / s**2 + (beta * lam - 0.5 * math.log(1 - 2 * lam * beta)) / (lam - 1)
    assert gnss_rdp([lam], beta=beta, sigma_s=s)[0] == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(0.9689137281032896, rel=1e-12)
    assert gnss_rdp([3.0], beta=0.0, sigma_s=2.0)[0] == pytest.approx(3 / 4, rel=1e-15)  # β = 0: Gaussian, Δ = 1/√2
    with pytest.raises(ValueError, match=r"1/\(2\*beta\)"):
        gnss_rdp([30.0], beta=0.49 / 20, sigma_s=5.0)
    sig = optimal_gnss_sigma(order=lam, beta=beta, smooth_sensitivity=0.2)
    cost = lambda x: lam * math.exp(2 * beta) / x**2 + 2 * 0.2 * x  # noqa: E731
    assert cost(sig) <= min(cost(sig * 0.99), cost(sig * 1.01))


def test_release_is_deterministic_and_composes():
    votes = np.array([[250, 0], [240, 10], [200, 50], [150, 100], [126, 124]])
    kw = dict(sigma=40.0, order=20.0, delta=1e-5, beta=0.49 / 20, sigma_s=5.0)
    extra = 300 * threshold_rdp([20.0], sigma=150.0)[0]
    a = release_gnmax_epsilon(votes, rng=np.random.default_rng(7), extra_rdp=extra, **kw)
    b = release_gnmax_epsilon(votes, rng=np.random.default_rng(7), extra_rdp=extra, **kw)
    assert a == b
    z = np.random.default_rng(7).standard_normal()
    assert a.noise == pytest.approx(a.smooth_sensitivity * 5.0 * z, rel=1e-12)
    dep = gnmax_data_dependent_rdp(votes, sigma=40.0, orders=[20.0])[:, 0].sum()
    assert a.data_dependent_rdp == pytest.approx(dep, rel=1e-12)
    assert a.data_dependent_rdp < a.data_independent_rdp == pytest.approx(5 * 20 / 1600)
    tail = math.log(1e5) / 19
    assert a.released_rdp == pytest.approx(dep + a.noise, rel=1e-12)
    assert a.epsilon == pytest.approx(dep + a.noise + a.release_rdp + extra + tail, rel=1e-12)
    assert a.epsilon_exact == pytest.approx(dep + a.release_rdp + extra + tail, rel=1e-12)
    assert a.release_rdp == pytest.approx(gnss_rdp([20.0], beta=0.49 / 20, sigma_s=5.0)[0], rel=1e-15)
    assert a.smooth_sensitivity == pytest.approx(gnmax_smooth_sensitivity(votes, sigma=40.0, order=20.0, beta=0.49 / 20))
    c = release_gnmax_epsilon(votes, rng=np.random.default_rng(8), extra_rdp=extra, **kw)
    assert c.noise != a.noise and c.epsilon_exact == a.epsilon_exact


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(votes=[[3, 2], [4, 0]]), "same number of teachers"),
        (dict(votes=[[3, -1]]), "non-negative"),
        (dict(votes=[[2.5, 2.5]]), "whole"),
        (dict(votes=[[5]]), "at least 2 classes"),
        (dict(votes=np.zeros((0, 2))), "no query"),
        (dict(sigma=0.0), "sigma must be"),
        (dict(order=1.0), "order must be"),
        (dict(delta=1.5), "delta"),
        (dict(beta=0.5), r"1/\(2\*beta\)"),
        (dict(sigma_s=-1.0), "sigma_s"),
        (dict(rng=0), "Generator"),
        (dict(extra_rdp=-0.1), "extra_rdp"),
    ],
)
def test_release_validates_arguments(kwargs, match):
    args = dict(votes=[[4, 1]], sigma=2.0, order=5.0, delta=1e-5, beta=0.05, sigma_s=1.0, rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        release_gnmax_epsilon(args.pop("votes"), **args)


def test_exported_from_package():
    from pategan_audit import accounting

    assert accounting.gnmax is gnmax
    assert all(hasattr(gnmax, name) for name in gnmax.__all__)
