"""ε lower bounds from attack counts (protocols spec D.5, D.6, D.7, F.3)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pategan_audit.auditing.bounds import (
    AttackCounts,
    bayesian_eps_lower,
    bayesian_probability_private,
    clopper_pearson_eps_lower,
    clopper_pearson_interval,
    eps_from_rates,
    eps_lower,
    min_test_outputs,
    perfect_attack_ceiling,
)


def perfect(n: int) -> AttackCounts:
    return AttackCounts(FP=0, TN=n, FN=0, TP=n)


# --- counts -------------------------------------------------------------------------------

def test_counts_rates_and_validation():
    c = AttackCounts(FP=2, TN=8, FN=3, TP=7)
    assert (c.n_out, c.n_in, c.fpr, c.fnr) == (10, 10, 0.2, 0.3)
    with pytest.raises(ValueError, match="FP must be >= 0"):
        AttackCounts(FP=-1, TN=3, FN=0, TP=1)
    with pytest.raises(ValueError, match="integer"):
        AttackCounts(FP=0.5, TN=3, FN=0, TP=1)
    with pytest.raises(ValueError, match="both worlds"):
        AttackCounts(FP=0, TN=0, FN=1, TP=1)


def test_counts_from_predictions():
    c = AttackCounts.from_predictions(predicted_in=[1, 0, 0, 1, 1, 0], is_in=[0, 0, 0, 1, 1, 1])
    assert c == AttackCounts(FP=1, TN=2, FN=1, TP=2)


# --- Clopper-Pearson --------------------------------------------------------------------------

def test_clopper_pearson_interval_closed_forms():
    # x = 0: upper end solves (1 - p)^n = sig/2; x = n: lower end solves p^n = sig/2 (by hand)
    lo, hi = clopper_pearson_interval(errors=0, trials=400, significance=0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 400), rel=1e-12)
    assert hi == pytest.approx(0.009180, abs=1e-6)  # D.6
    lo, hi = clopper_pearson_interval(errors=20, trials=20, significance=0.1)
    assert hi == 1.0 and lo == pytest.approx(0.05 ** (1 / 20), rel=1e-12)


def test_clopper_pearson_interval_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    for x, n, sig in [(0, 16, 0.05), (3, 16, 0.05), (44, 400, 0.05), (199, 200, 0.01), (7, 7, 0.2)]:
        ours = clopper_pearson_interval(errors=x, trials=n, significance=sig)
        ref = proportion_confint(x, n, sig, "beta")
        assert ours == pytest.approx(ref, abs=1e-12)


def test_eps_from_rates_by_hand():
    assert eps_from_rates(fpr=0.1, fnr=0.2, delta=0.0) == pytest.approx(math.log(0.8 / 0.1))
    # reflection across FPR + FNR = 1: (0.9, 0.8) -> (0.2, 0.1)
    assert eps_from_rates(fpr=0.9, fnr=0.8, delta=0.0) == pytest.approx(math.log(0.8 / 0.1))
    assert eps_from_rates(fpr=0.5, fnr=0.5, delta=1e-5) == 0.0
    assert eps_from_rates(fpr=0.0, fnr=0.3, delta=1e-5) == math.inf
    # the paper's formula for rates < 1/2: max{log((1-a-d)/b), log((1-b-d)/a), 0}
    a, b, d = 0.05, 0.3, 1e-5
    assert eps_from_rates(fpr=a, fnr=b, delta=d) == pytest.approx(max(math.log((1 - a - d) / b), math.log((1 - b - d) / a), 0))


@pytest.mark.parametrize("alpha, expected", [(0.1, 4.6815), (0.05, 4.5085), (0.02, 4.3174)])
def test_clopper_pearson_ceiling_at_400(alpha, expected):
    # protocols spec D.6 (4.681517 also in the authors' records)
    assert perfect_attack_ceiling(n_per_world=400, alpha=alpha) == pytest.approx(expected, abs=5e-5)


@pytest.mark.parametrize("n, expected", [(10, 0.81), (12, 1.02), (16, 1.35), (20, 1.60), (40, 2.34),
                                         (100, 3.28), (200, 3.98), (400, 4.68), (1000, 5.60)])
def test_clopper_pearson_ceiling_table(n, expected):
    # protocols spec F.3, ceiling table (CP, alpha = 0.1)
    assert perfect_attack_ceiling(n_per_world=n) == pytest.approx(expected, abs=0.005)


@pytest.mark.parametrize("target, n_01, n_005", [(0.5, 8, 10), (1, 12, 14), (2, 30, 35), (3, 76, 91),
                                                  (4, 204, 242), (4.5, 334, 397)])
def test_min_test_outputs_table(target, n_01, n_005):
    # protocols spec F.3, minimum test outputs per world for a perfect attack
    assert min_test_outputs(target_epsilon=target) == n_01
    assert min_test_outputs(target_epsilon=target, alpha=0.05) == n_005


@pytest.mark.parametrize("counts, expected", [
    (AttackCounts(FP=0, TN=400, FN=356, TP=44), 2.1782),  # D.7: updated, Querybased
    (AttackCounts(FP=2, TN=398, FN=330, TP=70), 2.0474),  # D.7: turing, GroundHog
])
def test_clopper_pearson_reference_counts(counts, expected):
    assert clopper_pearson_eps_lower(counts) == pytest.approx(expected, abs=5e-5)


def test_clopper_pearson_matches_privacy_estimates_on_random_tables():
    from privacy_estimates import AttackResults, compute_eps_lo_hi

    rng = np.random.default_rng(0)
    tables = [(5, 5, 5, 5), (0, 16, 16, 0), (16, 0, 0, 16), (1, 15, 14, 2)]
    for _ in range(40):
        n_out, n_in = rng.integers(1, 60, size=2)
        tables.append((int(rng.integers(0, n_out + 1)), 0, int(rng.integers(0, n_in + 1)), 0))
        tables[-1] = (tables[-1][0], int(n_out - tables[-1][0]), tables[-1][2], int(n_in - tables[-1][2]))
    for fp, tn, fn, tp in tables:
        ref = compute_eps_lo_hi(AttackResults(FN=fn, FP=fp, TN=tn, TP=tp), delta=1e-5, alpha=0.1, method="beta")[0]
        ours = clopper_pearson_eps_lower(AttackCounts(FP=fp, TN=tn, FN=fn, TP=tp))
        assert ours == pytest.approx(ref, abs=1e-9), (fp, tn, fn, tp)


def test_straddling_rectangle_gives_zero():
    assert clopper_pearson_eps_lower(AttackCounts(FP=5, TN=5, FN=5, TP=5)) == 0.0


def test_opposite_attack_is_symmetric():
    # always-wrong guesses (FP = n, FN = n) reflect to a perfect attack
    assert clopper_pearson_eps_lower(AttackCounts(FP=40, TN=0, FN=40, TP=0)) == pytest.approx(
        perfect_attack_ceiling(n_per_world=40))


def test_bad_levels_raise():
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson_eps_lower(perfect(10), alpha=1.5)
    with pytest.raises(ValueError, match="delta"):
        bayesian_eps_lower(perfect(10), delta=1.0)
    with pytest.raises(ValueError, match="unknown bound method"):
        eps_lower(perfect(10), method="jeffreys")


# --- Bayesian (joint-beta) ----------------------------------------------------------------------

@pytest.mark.parametrize("n, expected", [(12, 2.71), (16, 3.02), (20, 3.25), (40, 3.97), (100, 4.90), (400, 6.29)])
def test_bayesian_ceiling_table(n, expected):
    # protocols spec F.3 (Bayesian ceilings) and F.4 (3.02 at n = 16); tolerance as in the spec
    assert perfect_attack_ceiling(n_per_world=n, method="bayesian") == pytest.approx(expected, abs=0.01)


# Reference values from privacy_estimates 0.1.0.post1 (2-D adaptive quadrature, xtol 0.01),
# produced by `.venv/bin/python tests/auditing/joint_beta_reference.py` (minutes per table):
JOINT_BETA_REFERENCE = {
    (0, 12, 0, 12): 2.7089151137212597,
    (0, 400, 356, 44): 3.118336927517057,   # D.7 updated / Querybased counts
    (2, 398, 330, 70): 2.5241374338170233,  # D.7 turing / GroundHog counts
    (3, 17, 5, 15): 0.8760820842313609,
    (10, 190, 60, 140): 2.154899160726401,
}


@pytest.mark.parametrize("table, expected", sorted(JOINT_BETA_REFERENCE.items()))
def test_bayesian_matches_privacy_estimates(table, expected):
    fp, tn, fn, tp = table
    assert bayesian_eps_lower(AttackCounts(FP=fp, TN=tn, FN=fn, TP=tp)) == pytest.approx(expected, abs=0.01)


def _probability_private_adaptive(counts: AttackCounts, eps: float, delta: float) -> float:
    """Slow, independent reference: adaptive quadrature in x (FNR) space with kink breakpoints."""
    f_fnr = stats.beta(0.5 + counts.FN, 0.5 + counts.TP)
    f_fpr = stats.beta(0.5 + counts.FP, 0.5 + counts.TN)

    def integrand(x):
        lo = max(0.0, 1 - delta - math.exp(eps) * x, math.exp(-eps) * (1 - delta - x))
        hi = min(1.0, 1 + (delta - x) * math.exp(-eps), delta + (1 - x) * math.exp(eps))
        return f_fnr.pdf(x) * max(0.0, f_fpr.cdf(hi) - f_fpr.cdf(lo))

    knot = (1 - delta) / (1 + math.exp(eps))
    pts = sorted({delta, knot, 1 - knot, 1 - delta})
    val, _ = integrate.quad(integrand, 0, 1, points=pts, limit=500, epsabs=1e-10, epsrel=1e-8)
    return val


@pytest.mark.parametrize("counts", [AttackCounts(FP=0, TN=16, FN=0, TP=16), AttackCounts(FP=3, TN=17, FN=5, TP=15),
                                    AttackCounts(FP=2, TN=398, FN=330, TP=70)])
@pytest.mark.parametrize("eps", [0.0, 0.7, 2.5])
def test_bayesian_probability_matches_adaptive_quadrature(counts, eps):
    fast = bayesian_probability_private(counts, epsilon=eps, delta=1e-5)
    slow = _probability_private_adaptive(counts, eps, 1e-5)
    assert fast == pytest.approx(slow, abs=2e-5)


def test_bayesian_probability_increases_with_epsilon():
    counts = AttackCounts(FP=3, TN=17, FN=5, TP=15)
    p = [bayesian_probability_private(counts, epsilon=e) for e in np.linspace(0, 5, 11)]
    assert np.all(np.diff(p) > 0) and 0 <= p[0] and p[-1] <= 1


def test_bayesian_at_least_clopper_pearson_for_perfect_attacks():
    # F.4: "Bayesian >= CP on the same counts"
    for n in (10, 16, 40, 400):
        assert perfect_attack_ceiling(n_per_world=n, method="bayesian") > perfect_attack_ceiling(n_per_world=n)


def test_bayesian_small_for_uninformative_counts_and_capped_at_max():
    # P(0) is the mass of a 2-delta strip, so even coin-flip counts give a small positive bound
    assert 0 < bayesian_eps_lower(AttackCounts(FP=10, TN=10, FN=10, TP=10)) < 0.1
    assert bayesian_eps_lower(perfect(400), max_epsilon=3.0) == 3.0
