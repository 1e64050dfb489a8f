"""Mechanism-level audit of Confident-GNMax (pategan_audit.auditing.mechanism_gnmax)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pategan_audit.auditing import mechanism_gnmax as M
from pategan_audit.implementations.gnmax import confident_gnmax

KW = dict(threshold=0.6, sigma_threshold=2.0, sigma_vote=2.0)


@pytest.mark.parametrize("n1", [0, 3, 5, 6, 10])
def test_exact_probabilities_are_a_distribution_and_match_a_direct_simulation(n1):
    logp = M.confident_gnmax_log_probs(10, n1, **KW)
    assert math.isclose(np.exp(logp).sum(), 1.0, rel_tol=1e-12)
    # an independent simulation written out here (not the preset's aggregator)
    g = np.random.default_rng(n1)
    z = g.normal(size=(400_000, 3)) * 2.0
    counts = np.array([10 - n1, n1], float)
    answered = counts.max() + z[:, 0] >= 6.0
    real = counts[1] + z[:, 2] > counts[0] + z[:, 1]
    freq = np.array([(~answered).mean(), (answered & ~real).mean(), (answered & real).mean()])
    np.testing.assert_allclose(freq, np.exp(logp), atol=4e-3)


def test_counts_follow_the_preset_aggregator():
    gen = torch.Generator().manual_seed(0)
    counts = M.count_outcomes(10, 5, queries=1000, generator=gen, batch_size=300, **KW)
    gen = torch.Generator().manual_seed(0)
    labels, answered = [], []
    for m in (300, 300, 300, 100):
        lab, ans, _ = confident_gnmax(torch.full((m,), 5.0), num_teachers=10, generator=gen, **KW)
        labels.append(lab), answered.append(ans)
    lab, ans = torch.cat(labels), torch.cat(answered)
    assert counts.tolist() == [int((~ans).sum()), int((ans & (lab == 0)).sum()), int((ans & (lab == 1)).sum())]


def test_audit_bounds_the_exact_loss_and_agrees_with_the_analysis():
    row = M.audit_confident_gnmax(10, queries=200_000, seed=1, **KW)
    assert row["n1"] == 5  # ⌈0.6 · 10⌉ − 1: one vote moves the count across the threshold
    assert row["matches_analysis"] and row["sound"]
    assert 0 < row["eps_lo"] <= row["eps_exact"]  # a valid lower bound of the per-query loss
    assert row["eps_hat"] == pytest.approx(row["eps_exact"], abs=0.05)
    assert row["exact RDP at 2 (pair)"] <= row["charged RDP at 2"]
    assert 0 < row["exact / charged (worst pair, max over orders)"] <= 1


def test_a_mismatched_implementation_is_caught(monkeypatch):
    """If the aggregator drew other noise than the analysis assumes, the audit says so."""
    real = M.confident_gnmax
    monkeypatch.setattr(M, "confident_gnmax", lambda n1, **kw: real(n1, **{**kw, "sigma_vote": kw["sigma_vote"] * 2}))
    row = M.audit_confident_gnmax(10, queries=200_000, seed=1, **KW)
    assert not row["matches_analysis"] and not row["sound"]


def test_an_under_charging_accountant_is_caught(monkeypatch):
    monkeypatch.setattr(M, "per_query_rdp", lambda s1, s2, orders: 0.3 * np.asarray(orders) / s2**2)
    row = M.audit_confident_gnmax(10, queries=50_000, seed=1, **KW)
    assert row["matches_analysis"] and not row["sound"]


def test_bad_input():
    with pytest.raises(ValueError, match="k must be an integer"):
        M.audit_confident_gnmax(1, **KW)
    with pytest.raises(ValueError, match="n1 must lie"):
        M.audit_confident_gnmax(10, n1=10, **KW)
    with pytest.raises(ValueError, match="queries must be"):
        M.audit_confident_gnmax(10, queries=0, **KW)
