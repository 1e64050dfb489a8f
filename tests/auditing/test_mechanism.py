"""Mechanism-level audit of the presets' vote aggregators (auditing/mechanism.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pategan_audit.accounting.exact import exact_vote_moments
from pategan_audit.accounting.gaussian import label_flip_probability
from pategan_audit.auditing.mechanism import aggregator_spec, audit_aggregator, audit_all, log_output_probs


def test_specs_read_from_the_presets():
    up = aggregator_spec("updated")
    assert (up.mechanism, up.scale, up.lam, up.accountant, up.num_moments) == ("single_noise", 1e-3, 1e-3, "updated", 20)
    sc = aggregator_spec("synthcity", lam=1.0)
    assert (sc.scale, sc.offset, sc.accountant) == (1.0, 1e-8, "synthcity")
    assert aggregator_spec("borealis").scale == pytest.approx(1e4)  # Lap(1/λ), λ = 1e-4
    assert aggregator_spec("corrected").mechanism == "two_noise_argmax"
    assert aggregator_spec("turing").mechanism == "gaussian_indicator"


def test_output_probabilities_against_independent_formulas():
    k = 5
    # single noise: scipy's Laplace survival at the threshold distance
    sn = aggregator_spec("smartnoise", lam=0.7)
    lp1, lp0 = log_output_probs(sn, k=k, n1=np.arange(k + 1))
    sf = stats.laplace(scale=1 / 0.7).sf(k / 2 - np.arange(k + 1))
    assert np.allclose(np.exp(lp1), sf, rtol=1e-12) and np.allclose(np.exp(lp0), 1 - sf, rtol=1e-12)
    # two noise: P(Z1 − Z0 > n0 − n1) by numerical convolution of two Laplace densities
    co = aggregator_spec("corrected", lam=0.7)
    lp1, _ = log_output_probs(co, k=k, n1=np.arange(k + 1))
    lap = stats.laplace(scale=1 / 0.7)
    for n1 in range(k + 1):
        conv, _ = integrate.quad(lambda z: lap.pdf(z) * lap.sf(z + (k - 2 * n1)), -60, 60, points=[0, 2 * n1 - k], limit=200)
        assert math.exp(lp1[n1]) == pytest.approx(conv, rel=1e-8)


def test_exact_moments_match_spec_example_e():
    # implementations spec §8.2 Example E (k = 5, n1 = 2, λ = 1, independent script, 4 digits)
    single = audit_aggregator("smartnoise", k=5, n1=2, lam=1.0, queries=1000)
    assert single["true_moment_l1"] == pytest.approx(0.5497, abs=1e-4)
    two = audit_aggregator("corrected", k=5, n1=2, lam=1.0, queries=1000)
    assert two["true_moment_l1"] == pytest.approx(0.6959, abs=1e-4)
    # and against accounting/exact.py (α at n1 = 3 is the max over 3→2 and 3→4; 3→2 is the larger here)
    ref = exact_vote_moments(n1=[3], num_teachers=5, lam=1.0, num_moments=1, mechanism="single_noise")[0, 0]
    assert single["true_moment_l1"] == pytest.approx(ref, rel=1e-9)


def test_laplace_estimate_matches_exact_within_ci():
    rec = audit_aggregator("synthcity", k=5, n1=2, lam=1.0, queries=10**6, seed=0)
    exact = math.log(2 * math.exp(0.5) - 1)  # ln(P(r=0|2)/P(r=0|3)) with Lap(1), threshold 2.5, by hand
    assert rec["eps_exact"] == pytest.approx(exact, rel=1e-7)
    assert rec["eps_lo"] <= rec["eps_exact"] <= rec["eps_hi"]
    assert abs(rec["eps_hat"] - exact) < 0.01 and rec["eps_hi"] - rec["eps_lo"] < 0.03
    assert rec["eps_exact_worst_pair"] == pytest.approx(1.0)  # 1/b for pairs on one side of the threshold


def test_updated_at_benchmarked_lambda_under_charges():
    rec = audit_aggregator("updated", k=5, queries=10**5)
    assert rec["lam"] == 1e-3 and rec["scale"] == 1e-3  # V15: Lap(λ) while the accountant assumes Lap(1/λ)
    assert rec["verdict"] == "under-charges" and rec["certified"]
    assert rec["eps_exact"] == pytest.approx(500 + math.log(2), rel=1e-9)  # ln(2e^{500} − 1)
    assert rec["eps_lo"] > 10 > rec["eps_accountant_pure"] == pytest.approx(2e-3)
    assert rec["factor_pure"] > 1e5
    assert rec["delta_true_at_eps_hat"] > 0.99 and rec["delta_lo_at_eps_hat"] > 0.99


@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_corrected_two_noise_argmax_is_sound(lam):
    rec = audit_aggregator("corrected", k=5, lam=lam, queries=10**4)
    assert rec["verdict"] == "sound" and not rec["certified"]
    assert rec["moment_factor"] <= 1 and rec["moment_factor_all_votes"] <= 1
    assert rec["eps_exact_worst_pair"] <= 2 * lam + 1e-12  # PATE's M_γ is 2γ-DP


def test_accountant_bugs_show_at_lambda_one():
    # spec §8.3: at λ = 1 synthcity (V7) and Alg. 1 under-charge; borealis/smartnoise (V8/V9) over-charge
    syn = audit_aggregator("synthcity", k=5, lam=1.0, queries=1000)
    assert syn["verdict"] == "under-charges" and syn["charged_l1"] == 0.0
    up = audit_aggregator("updated", k=5, lam=1.0, queries=1000)
    assert up["verdict"] == "under-charges" and up["charged_l1"] == pytest.approx(0.4278426191, rel=1e-9)
    bor = audit_aggregator("borealis", k=5, lam=1.0, queries=1000)
    assert bor["verdict"] == "sound" and bor["charged_l1"] == pytest.approx(1.533944648, rel=1e-9)


def test_gaussian_indicator_presets():
    orig = audit_aggregator("original", k=5, queries=10**5)
    tur = audit_aggregator("turing", k=5, queries=10**5)
    # flip probabilities of spec §8.2 "Gaussian-scale tests"
    assert orig["p1_exact"] == pytest.approx(label_flip_probability(orig["scale"])) == pytest.approx(0.4181978264, rel=1e-9)
    assert tur["p1_exact"] == pytest.approx(0.2271060054, rel=1e-9)
    assert orig["verdict"] == "sound"
    assert tur["verdict"] == "under-charges" and tur["certified"]  # V18: σ too small for (1, 1e-5)


def test_determinism_and_validation():
    a = audit_aggregator("borealis", k=4, n1=1, lam=0.5, queries=20_000, seed=7)
    b = audit_aggregator("borealis", k=4, n1=1, lam=0.5, queries=20_000, seed=7, batch_size=20_000)
    c = audit_aggregator("borealis", k=4, n1=1, lam=0.5, queries=20_000, seed=8)
    assert a == b and a["p1"] != c["p1"]
    with pytest.raises(ValueError, match="n1"):
        audit_aggregator("borealis", k=4, n1=4, queries=10)


def test_audit_all_has_one_row_per_preset():
    df = audit_all(queries=2000)
    assert list(df["preset"]) == ["original", "updated", "synthcity", "turing", "borealis", "smartnoise", "corrected"]
    verdicts = dict(zip(df["preset"], df["verdict"]))
    assert verdicts["updated"] == "under-charges" and verdicts["corrected"] == "sound"
    assert {"eps_lo", "eps_exact", "eps_accountant_pure", "moment_factor", "verdict"} <= set(df.columns)


def test_summary_table_has_one_row_per_preset_and_the_verdict():
    from pategan_audit.auditing.mechanism import SUMMARY_COLUMNS, audit_all, summary_table

    table = summary_table(audit_all(queries=10**4, presets=("updated", "corrected")))
    assert list(table.index) == ["updated", "corrected"]
    assert list(table.columns) == list(SUMMARY_COLUMNS.values())[1:]
    assert table.loc["updated", "verdict"] == "under-charges" and table.loc["corrected", "verdict"] == "sound"
