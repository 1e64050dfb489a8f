"""Exact vote moments (slow reference) and the Gaussian label-noise scales of original/turing."""
import doctest

import numpy as np
import pytest
from scipy import integrate, stats

from pategan_audit.accounting import (
    MECHANISMS,
    data_independent_increment,
    exact_vote_moments,
    gaussian_label_noise_sigma,
    label_flip_probability,
    moment_increments,
)
from pategan_audit.accounting import gaussian as gaussian_module


# -- exact moments ------------------------------------------------------------------------------------
def test_example_e_exact_columns():
    """Implementations spec §8.2 Example E (k=5, (3,2), λ=1), printed to 3-4 digits."""
    two = exact_vote_moments(n1=[2], num_teachers=5, lam=1.0, num_moments=3, mechanism="two_noise")[0]
    one = exact_vote_moments(n1=[2], num_teachers=5, lam=1.0, num_moments=3, mechanism="single_noise")[0]
    np.testing.assert_allclose(two, [0.6959, 1.767, 3.194], atol=6e-4)
    np.testing.assert_allclose(one, [0.5497, 1.318, 2.137], atol=6e-4)
    # Alg. 1 charges 0.428 at l = 1, below both true moments: unsound outside Thm 3's domain
    alg1 = moment_increments("paper", n1=[2], num_teachers=5, lam=1.0, num_moments=1)[0, 0]
    assert alg1 < one[0] < two[0]


def _p_real_by_integration(n1, k, lam, mechanism):
    """P(r = 1 | n1) by numerical integration of the Laplace densities (independent check)."""
    lap = stats.laplace(scale=1.0 / lam)
    if mechanism == "single_noise":
        return lap.sf(k / 2 - n1)
    # P(n1 + Z1 > n0 + Z0) = ∫ f(z0) P(Z1 > (k - n1) - n1 + z0) dz0
    val, _ = integrate.quad(lambda z: lap.pdf(z) * lap.sf(k - 2 * n1 + z), -np.inf, np.inf, epsabs=1e-13)
    return val


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_exact_moments_against_integration(mechanism):
    k, lam, orders = 6, 0.7, np.arange(1, 5)
    p = np.array([_p_real_by_integration(n, k, lam, mechanism) for n in range(k + 1)])
    got = exact_vote_moments(n1=np.arange(k + 1), num_teachers=k, lam=lam, num_moments=4, mechanism=mechanism)
    for n in range(k + 1):
        best = -np.inf
        for m in (n - 1, n + 1):
            if 0 <= m <= k:
                e = p[n] * (p[n] / p[m]) ** orders + (1 - p[n]) * ((1 - p[n]) / (1 - p[m])) ** orders
                best = np.maximum(best, np.log(e))
        np.testing.assert_allclose(got[n], best, rtol=1e-7)


@pytest.mark.parametrize("lam", [1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10, 50])
def test_corrected_accountant_is_sound_for_two_noise_argmax(lam, k):
    """The corrected charge min(T, P, D) bounds the exact moment of PATE's M_γ, every vote, l ≤ 100."""
    n1 = np.arange(k + 1)
    exact = exact_vote_moments(n1=n1, num_teachers=k, lam=lam, num_moments=100, mechanism="two_noise")
    charged = moment_increments("corrected", n1=n1, num_teachers=k, lam=lam, num_moments=100)
    assert np.all(exact <= charged * (1 + 1e-9))


@pytest.mark.parametrize("lam", [1e-3, 0.1, 0.5, 1.0])
def test_single_noise_spot_check_of_the_spec(lam):
    """Spec §9.2 note: for k = 5, l ≤ 3 the single-noise vote stays below min(T, P, D)."""
    n1 = np.arange(6)
    exact = exact_vote_moments(n1=n1, num_teachers=5, lam=lam, num_moments=3, mechanism="single_noise")
    assert np.all(exact <= moment_increments("corrected", n1=n1, num_teachers=5, lam=lam, num_moments=3))


def test_single_noise_outside_the_spot_check_exceeds_lemma4_bound():
    """Finding beyond the spec's spot check: with one Laplace draw on n1 the flip probability of a
    unanimous vote is ½e^{-λk/2}, larger than Lemma 4's q = (2+λk)/(4e^{λk}), so Thm 3 with that q
    under-charges (k = 10, λ = 1, n1 = 0). min(T, P) alone stays an upper bound."""
    exact = exact_vote_moments(n1=[0], num_teachers=10, lam=1.0, num_moments=3, mechanism="single_noise")[0]
    charged = moment_increments("corrected", n1=[0], num_teachers=10, lam=1.0, num_moments=3)[0]
    assert exact[0] > charged[0]
    assert np.all(exact <= data_independent_increment("corrected", lam=1.0, num_moments=3))


def test_exact_bad_input():
    with pytest.raises(ValueError, match="unknown mechanism"):
        exact_vote_moments(n1=[0], num_teachers=5, lam=1.0, num_moments=3, mechanism="gaussian")


# -- Gaussian label noise (spec §2.3, §5.3, §8.2) ----------------------------------------------------
@pytest.mark.parametrize(
    "kind,delta,sigma,flip",
    [
        ("original", 5, 2.421236772, 0.4181978264),
        ("turing", 1e-5, 0.6680816973, 0.2271060054),
        ("textbook", 1e-5, 4.844805263, 0.4589008015),
    ],
)
def test_gaussian_scales(kind, delta, sigma, flip):
    got = gaussian_label_noise_sigma(kind, epsilon=1.0, delta=delta)
    assert got == pytest.approx(sigma, rel=1e-9)
    assert label_flip_probability(got) == pytest.approx(flip, rel=1e-9)


def test_original_uses_xor():
    """10 XOR 5 = 15 (spec §8.2): σ = sqrt(2 ln(1.25·15)), not sqrt(2 ln(1.25·10^5))."""
    assert gaussian_label_noise_sigma("original", epsilon=1.0, delta=5) == pytest.approx(np.sqrt(2 * np.log(18.75)))
    assert gaussian_label_noise_sigma("original", epsilon=2.0, delta=5) == pytest.approx(2.421236772 / 2, rel=1e-9)


def test_flip_probability_against_monte_carlo():
    rng = np.random.default_rng(0)
    draws = rng.normal(0.0, 2.421236772, size=400_000)
    assert np.mean(draws > 0.5) == pytest.approx(label_flip_probability(2.421236772), abs=3e-3)


@pytest.mark.parametrize(
    "kind,kwargs,match",
    [
        ("original", dict(delta=1e-5), "integer exponent"),
        ("original", dict(delta=10), "10 XOR delta = 0"),
        ("turing", dict(delta=-1.0), "float δ > 0"),
        ("textbook", dict(delta=2.0), r"\(0, 1\)"),
        ("textbook", dict(delta=1e-5, epsilon=0.0), "epsilon must be"),
        ("laplace", dict(delta=1e-5), "unknown kind"),
    ],
)
def test_gaussian_bad_input(kind, kwargs, match):
    args = dict(epsilon=1.0) | kwargs
    with pytest.raises(ValueError, match=match):
        gaussian_label_noise_sigma(kind, **args)
    with pytest.raises(ValueError, match="sigma must be"):
        label_flip_probability(0.0)


def test_gaussian_doctests():
    assert doctest.testmod(gaussian_module).failed == 0
