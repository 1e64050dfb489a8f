"""Threshold selection and the random-forest attack (protocols spec D.4)."""
from __future__ import annotations

import numpy as np
import pytest

from pategan_audit.auditing.attacks import (
    counts_at_threshold,
    evaluate_scores,
    random_forest_attack,
    select_threshold,
    split_sizes,
)
from pategan_audit.auditing.bounds import AttackCounts, clopper_pearson_eps_lower, perfect_attack_ceiling


@pytest.mark.parametrize("n, expected", [(1000, (400, 200, 400)), (40, (16, 8, 16)), (30, (12, 6, 12)), (10, (4, 2, 4))])
def test_split_sizes_keep_2_1_2(n, expected):
    assert split_sizes(n) == expected


def test_split_sizes_rejects_tiny_games():
    with pytest.raises(ValueError, match="at least 5"):
        split_sizes(4)


def test_counts_at_threshold_uses_greater_equal():
    c = counts_at_threshold(scores_out=[0.1, 0.5, 0.5], scores_in=[0.5, 0.9], threshold=0.5)
    assert c == AttackCounts(FP=2, TN=1, FN=0, TP=2)


def test_select_threshold_enumerates_every_distinct_score():
    # 30 out scores in [0, 0.5), 30 in scores in [0.45, 1): a few overlap
    out = np.linspace(0.0, 0.49, 30)
    inn = np.linspace(0.45, 0.99, 30)
    t, counts, eps = select_threshold(scores_out=out, scores_in=inn)
    # brute force over the union of scores, rule "in iff score >= t"; ties -> smallest t
    best = max(
        (clopper_pearson_eps_lower(counts_at_threshold(scores_out=out, scores_in=inn, threshold=c)), -c)
        for c in np.unique(np.r_[out, inn])
    )
    assert eps == pytest.approx(best[0]) and t == -best[1]
    assert counts == counts_at_threshold(scores_out=out, scores_in=inn, threshold=t)
    assert eps > 0.5  # informative scores give a positive bound


def test_select_threshold_ties_go_to_smallest_threshold():
    # with 3 outputs per world no threshold can give a positive bound: all tie at 0
    t, counts, eps = select_threshold(scores_out=np.array([0.1, 0.2, 0.3]), scores_in=np.array([0.6, 0.7, 0.8]))
    assert eps == 0.0 and t == 0.1 and counts == AttackCounts(FP=3, TN=0, FN=0, TP=3)


def test_evaluate_scores_perfect_separation_reaches_ceiling():
    # forest-like scores: a few distinct probabilities, perfectly separated
    rng = np.random.default_rng(1)
    out = rng.choice([0.0, 0.05, 0.1], size=24)
    inn = rng.choice([0.9, 1.0], size=24)
    inn[:2] = [0.9, 1.0]  # the validation split sees both in-values
    res = evaluate_scores(scores_out=out, scores_in=inn, n_valid=8)
    assert res.auc == 1.0
    assert res.epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16))
    assert res.best.direction == "s" and res.threshold == 0.9


def test_validation_threshold_can_miss_test_outputs():
    # the paper's procedure at small n: the threshold is the smallest *validation* in-score,
    # so a test in-output below it becomes a false negative
    out = np.r_[np.zeros(8), np.zeros(16)]
    inn = np.r_[np.full(8, 0.8), np.full(15, 0.9), 0.7]
    res = evaluate_scores(scores_out=out, scores_in=inn, n_valid=8)
    s_dir, inverse_dir = res.directions
    assert s_dir.direction == "s" and s_dir.test == AttackCounts(FP=0, TN=16, FN=1, TP=15)
    # the 1 - s rule is always wrong on the test set, which E(a, b) reflects to a perfect attack
    assert inverse_dir.test == AttackCounts(FP=16, TN=0, FN=16, TP=0)
    assert res.epsilon == inverse_dir.test_epsilon > s_dir.test_epsilon


def test_evaluate_scores_uses_the_opposite_direction_when_it_is_better():
    rng = np.random.default_rng(2)
    out = rng.choice([0.9, 1.0], size=24)   # out outputs look *more* "in" to the model
    inn = rng.choice([0.0, 0.1], size=24)
    out[:2], inn[:2] = [0.9, 1.0], [0.0, 0.1]
    res = evaluate_scores(scores_out=out, scores_in=inn, n_valid=8)
    assert res.auc == 0.0  # reported as is, over validation + test
    assert res.best.direction == "1-s"
    assert res.epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16))
    rec = res.as_record()
    assert rec["test_TP"] == 16 and rec["test_FP"] == 0 and rec["epsilon_emp[s]"] < rec["epsilon_emp[1-s]"]


def test_evaluate_scores_validates_split():
    with pytest.raises(ValueError, match="n_valid"):
        evaluate_scores(scores_out=np.zeros(4), scores_in=np.zeros(4), n_valid=4)


def _blobs(shift: float, n: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)), rng.normal(size=(n, 5)) + shift


def test_random_forest_attack_separable_and_null():
    fo, fi = _blobs(10.0, 40, 0)
    res = random_forest_attack(features_out=fo, features_in=fi, n_train=16, n_valid=8, methods=("clopper_pearson", "bayesian"))
    assert res["clopper_pearson"].epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16))
    assert res["bayesian"].epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16, method="bayesian"))
    fo, fi = _blobs(0.0, 40, 1)
    null = random_forest_attack(features_out=fo, features_in=fi, n_train=16, n_valid=8)["clopper_pearson"]
    assert null.epsilon < 0.6 and abs(null.auc - 0.5) < 0.25


def test_random_forest_attack_is_deterministic_given_seed():
    fo, fi = _blobs(0.5, 40, 3)
    a = random_forest_attack(features_out=fo, features_in=fi, n_train=16, n_valid=8, seed=5)["clopper_pearson"]
    b = random_forest_attack(features_out=fo, features_in=fi, n_train=16, n_valid=8, seed=5)["clopper_pearson"]
    assert a == b


def test_random_forest_attack_handles_nan_features_and_checks_shapes():
    fo, fi = _blobs(10.0, 40, 4)
    fo[:, 0] = np.nan
    res = random_forest_attack(features_out=fo, features_in=fi, n_train=16, n_valid=8)["clopper_pearson"]
    assert res.epsilon == pytest.approx(perfect_attack_ceiling(n_per_world=16))
    with pytest.raises(ValueError, match="equal widths"):
        random_forest_attack(features_out=fo, features_in=fi[:, :3], n_train=8, n_valid=4)
    with pytest.raises(ValueError, match="leave test outputs"):
        random_forest_attack(features_out=fo, features_in=fi, n_train=30, n_valid=10)


def test_forest_attack_records_the_gdp_bound_of_the_whole_roc():
    """Every record carries μ_lo from the held-out outputs' ROC (auditing.fdp): at the ceiling
    for separable worlds, near 0 for identical ones, and the same for every bound method."""
    rng = np.random.default_rng(0)
    fo = rng.normal(size=(100, 3))
    apart = random_forest_attack(features_out=fo, features_in=fo + 10.0, n_train=40, n_valid=20,
                                 methods=("clopper_pearson", "bayesian"))
    recs = [r.as_record() for r in apart.values()]
    assert recs[0]["gdp_mu_lo"] == recs[1]["gdp_mu_lo"] == pytest.approx(recs[0]["gdp_mu_ceiling"])
    same = random_forest_attack(features_out=fo, features_in=rng.normal(size=(100, 3)), n_train=40, n_valid=20)
    rec = same["clopper_pearson"].as_record()
    assert 0.0 <= rec["gdp_mu_lo"] < 0.5 * rec["gdp_mu_ceiling"]
    off = random_forest_attack(features_out=fo, features_in=fo + 10.0, n_train=40, n_valid=20, gdp=False)
    assert "gdp_mu_lo" not in off["clopper_pearson"].as_record()
