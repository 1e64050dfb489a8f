"""Tolerances calibrated on independent redraws (pategan_audit.pages.tolerances; issue #36, item 3)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pategan_audit import reference as R
from pategan_audit.pages import scorecard
from pategan_audit.pages import tolerances as T

TARGET = 0.85  #: the coverage every rule must reach on independent redraws (issue #36)


@pytest.fixture(scope="module")
def committed():
    return T.coverage_table()


@pytest.mark.parametrize("rule", T.RULES)
def test_coverage_on_committed_redraws(committed, rule):
    """Computed, not stored: narrowing a rule (a smaller FIT_LEVEL, a tolerance without τ) fails here."""
    row = committed[committed["rule"] == rule]
    if row.empty:
        pytest.skip(f"no committed redraw pairs for {rule}")
    assert float(row["coverage"].iloc[0]) >= TARGET, row.to_dict("records")


def test_committed_pairs_are_same_protocol(committed):
    pairs = T.redraw_pairs()
    exp = pairs[pairs["source"] != "redraws"]
    assert len(exp) >= 86  # the Credit and ISOLET redraws at the archive's 3 x 3 / 2 x 2 and 10,000 cap
    # the sweep redraws draw 9 tables against the archive's 4, the Epileptic ones another cap: not pairs
    assert not exp["source"].str.contains("eps|_10k|best_of_n|adaboost").any()
    assert (exp["difference"] == (exp["a"] - exp["b"]).abs()).all()


def _draw(rng, impl, seed, *, quality, spread_model, spread_table, models=3, tables=3, classifiers=4):
    """One draw of a synthetic cell: per-table scores = quality + model effect + table noise."""
    rows = []
    for m in range(models):
        a = rng.normal(0, spread_model)
        for t in range(tables):
            for c in range(classifiers):
                score = float(np.clip(quality + 0.02 * c + a + rng.normal(0, spread_table), 0.0, 1.0))
                rows.append({"dataset": "cervical_cancer", "implementation": impl, "epsilon": 1.0, "num_teachers": 5,
                             "variant": "default", "model": m, "table": t, "classifier": f"C{c}", "auroc": score,
                             "auprc": score, "master_seed": seed, "max_iter": 10000})
    return rows


def _statistic(rows) -> float:
    df = pd.DataFrame(rows)
    return float(df.groupby("classifier")["auroc"].max().mean())


def test_estimator_on_synthetic_draws_with_a_known_spread():
    """Independent pairs of draws of a known process: the fitted tolerance contains held-out pairs at about
    the fitted level, and its size matches the spread of the difference of two draws, by Monte Carlo."""
    rng = np.random.default_rng(7)
    spec = dict(spread_model=0.05, spread_table=0.03)
    rows = []
    for g in range(30):
        for seed in (1, 2):
            rows += _draw(rng, f"g{g}", seed, quality=0.6 + 0.005 * g, **spec)
    pairs = pd.DataFrame(T._redraw_pairs(pd.DataFrame(rows), {}))
    pairs["s"] = np.hypot(pairs["h_a"], pairs["h_b"])
    mean = pairs[pairs["rule"] == "mean auroc"]
    assert len(mean) == 30 and mean["group"].nunique() == 30
    held = T.cross_validated(mean)
    assert 0.8 <= held["within"].mean() <= 1.0
    k, tau = T.fit(mean)
    tol = T.pair_tolerance(mean["s"], k=k, tau=tau, metric="auroc", dataset="cervical_cancer")
    mc = np.random.default_rng(11)
    diffs = np.abs([_statistic(_draw(mc, "x", 0, quality=0.6, **spec)) - _statistic(_draw(mc, "x", 0, quality=0.6, **spec))
                    for _ in range(400)])
    truth = float(np.quantile(diffs, T.FIT_LEVEL))
    assert 0.6 * truth <= float(np.median(tol)) <= 1.8 * truth, (np.median(tol), truth)
    # the bootstrap alone (k = 1, τ = 0) is narrower than the truth: why it needs calibrating
    assert float(np.median(mean["s"])) < truth


def test_percentile_of_a_hand_made_case():
    draws = [0.4, 0.1, 0.3, 0.2]
    assert T.percentile_of(0.25, draws) == 50.0
    assert T.percentile_of(0.3, draws) == 62.5  # two below, one tie counted half: 2.5 / 4
    assert T.percentile_of(0.05, draws) == 0.0 and T.percentile_of(0.5, draws) == 100.0
    assert math.isnan(T.percentile_of(float("nan"), draws)) and math.isnan(T.percentile_of(0.2, []))


def test_draws_distribution_reads_the_master_seeds(tmp_path):
    rng = np.random.default_rng(3)
    rows = []
    for seed in (1, 2, 3):
        rows += _draw(rng, "smartnoise", seed, quality=0.7 + 0.05 * seed, spread_model=0.02, spread_table=0.02)
    redraws = tmp_path / "redraws"
    redraws.mkdir()
    pd.DataFrame(rows).to_csv(redraws / "table4_cervical.csv", index=False)
    where = dict(experiments=tmp_path / "none", redraws=redraws, archive_dir=tmp_path / "no_archive")
    d = T.draws_distribution("table4/cervical_cancer/smartnoise", **where)
    want = [_statistic([r for r in rows if r["master_seed"] == s]) for s in (1, 2, 3)]
    assert sorted(d.values) == pytest.approx(sorted(want))
    paper = R.table4()
    paper = float(paper[(paper["row"] == "cervical_cancer") & (paper["column"] == "smartnoise")]["value"].iloc[0])
    assert d.paper == pytest.approx(paper) and d.percentile == T.percentile_of(paper, want)
    assert T.draws_distribution("table4/cervical_cancer/borealis", **where) is None  # no draws of that cell
    with pytest.raises(ValueError, match="Table 4"):
        T.draws_distribution("table8/MLP/borealis", **where)


def test_the_prediction_interval_holds_one_more_draw_as_often_as_it_says():
    """mean ± t·s·sqrt(1 + 1/n) from n draws holds one more draw of the same normal statistic 90 % of
    the time (a Monte Carlo of 4,000 sets; the 1/n term matters: without it coverage falls to ~0.87)."""
    rng = np.random.default_rng(11)
    hits = []
    for _ in range(4000):
        x = rng.normal(0.8, 0.05, size=7)
        centre, half = T.prediction_interval(x[:6], level=0.9)
        hits.append(abs(x[6] - centre) <= half)
    assert 0.88 <= np.mean(hits) <= 0.92
    with pytest.raises(ValueError, match="two draws"):
        T.prediction_interval([0.8])


def test_rule_of_and_scorecard_tolerance_use_the_calibration():
    assert T.rule_of("table4", "credit", "borealis") == "mean auroc"
    assert T.rule_of("table9", "MLP", "borealis") == "classifier auprc"
    assert T.rule_of("table9", R.AVERAGE, "borealis") == "mean auprc"
    assert T.rule_of("figure7", "smartnoise", "auprc eps=5") == "mean auprc"
    assert T.rule_of("figure8", "smartnoise", "auroc eps=5") is None and T.rule_of("table1", R.DELTA_ROW, "x") is None
    cal = T.calibration()["mean auroc"]
    row = {"table": "table4", "row": "credit", "column": "borealis", "paper": 0.63, "ours": 0.70,
           "interval_lo": 0.66, "interval_hi": 0.74}
    limit, how = scorecard.tolerance(row)
    assert limit == pytest.approx(min(max(math.sqrt(2) * math.hypot(cal.k * 0.04, cal.tau), 0.01), 0.5))
    assert "redraws" in how
    # Setting A: calibrated where a dataset has split redraws (Credit), the stated 0.01 elsewhere
    split = T.calibration()["setting_a auroc"]
    assert split.datasets == ("credit",)
    credit = {"table": "setting_a", "row": "LDA", "column": "credit", "paper": 0.9721, "ours": 0.99}
    assert scorecard.tolerance(credit)[0] == pytest.approx(max(math.sqrt(2) * split.tau, 0.01))
    assert scorecard.tolerance({**credit, "column": "epileptic_seizure"})[0] == 0.01
