"""The reproduction scorecard (pategan_audit.scorecard): verdict rules and the archived rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit import reference as R
from pategan_audit import scorecard
from pategan_audit.archive import write_archive


def _verdict(table, paper, ours, ceiling=None):
    return scorecard._verdict(pd.Series({"table": table, "paper": paper, "ours": ours, "ceiling": ceiling}))


@pytest.mark.parametrize("table, paper, ours, ceiling, expected", [
    ("table4", 0.90, 0.93, None, "reproduced"),       # within 0.05
    ("table4", 0.90, 0.80, None, "differs"),
    ("table4", 0.90, np.nan, None, "not yet run"),
    ("figure5", 4.68, 1.35, 1.35, "reproduced up to ceiling"),   # perfect attack at a low ceiling
    ("figure5", 4.68, 0.40, 1.35, "differs"),                    # far below what the profile could show
    ("figure5", 4.68, 0.0, 0.0, "profile too small to certify"),  # smoke: nothing above 0 is possible
    ("figure5", 2.18, 2.30, 4.68, "reproduced"),
])
def test_verdict_rules(table, paper, ours, ceiling, expected):
    assert _verdict(table, paper, ours, ceiling) == expected


def _utility_records():
    """Two tables of one cell on Cervical for 'updated' (+ Setting A with all 12 classifiers)."""
    from pategan_audit.classifiers import CLASSIFIERS

    rows = []
    for table, base in ((0, 0.6), (1, 0.8)):
        for i, c in enumerate(CLASSIFIERS):
            rows.append({"cell": "c1", "dataset": "cervical_cancer", "implementation": "updated", "epsilon": 1.0,
                         "num_teachers": 2, "variant": "default", "model": 0, "table": table, "classifier": c,
                         "auroc": base + 0.01 * i, "auprc": base / 2, "status": "ok"})
    for c in (*CLASSIFIERS, "majority"):
        rows.append({"cell": "a1", "dataset": "cervical_cancer", "implementation": "real", "epsilon": np.nan,
                     "num_teachers": np.nan, "variant": "default", "model": -1, "table": -1, "classifier": c,
                     "auroc": 0.5 if c == "majority" else 0.9, "auprc": 0.1 if c == "majority" else 0.6, "status": "ok"})
    return pd.DataFrame(rows)


def test_collect_archived_takes_best_of_n_and_setting_a(tmp_path):
    write_archive("utility_large", _utility_records(), {"profile": "large", "runs": "1 x 2"}, directory=tmp_path)
    got = scorecard.collect_archived(tmp_path).set_index(["table", "row", "column"])
    # best of the two tables per classifier = the second table, mean over 12 classifiers
    assert got.loc[("table4", "cervical_cancer", "updated"), "ours"] == pytest.approx(0.8 + 0.01 * 5.5)
    assert got.loc[("table4_auprc", "cervical_cancer", "updated"), "ours"] == pytest.approx(0.4)
    assert got.loc[("table7", "cervical_cancer", "auroc"), "ours"] == pytest.approx(0.9)  # majority excluded
    assert (got["profile"] == "large").all()
    card = scorecard.build(got.reset_index())
    assert card.loc[card["ours"].notna(), "paper"].notna().all()  # every archived value meets a paper number


def _audit_record(impl, method, channel, fp, fn, attack="querybased", n=400):
    from pategan_audit.auditing.bounds import AttackCounts, eps_lower

    eps = eps_lower(AttackCounts(FP=fp, TN=n - fp, FN=fn, TP=n - fn), method=method, alpha=0.1, delta=1e-5)
    return {"attack": attack, "implementation": impl, "channel": channel, "variant": "as benchmarked",
            "method": method, "epsilon_emp": eps, "auc": 0.9, "alpha": 0.1, "delta": 1e-5, "profile": "large",
            "n_per_world": 1000, "test_FP": fp, "test_TN": n - fp, "test_FN": fn, "test_TP": n - fn}


def test_collect_archived_audit_rows_carry_their_spread(tmp_path):
    """Figure 5 at the archived scale is judged by each cell's own spread: a perfect attack
    (zero spread, at the paper's 4.68) reproduces; a weaker one far from the paper does not."""
    rec = pd.DataFrame([_audit_record(impl, m, "paper", *(0, 0) if impl != "updated" else (120, 150))
                        for impl in (*R.IMPLEMENTATIONS, "corrected") for m in ("clopper_pearson", "bayesian")])
    write_archive("audit_querybased_large", rec, {"profile": "large", "ceiling_clopper_pearson": 4.68}, directory=tmp_path)
    got = scorecard.collect_archived(tmp_path)
    assert set(got["row"]) == set(R.IMPLEMENTATIONS)  # corrected is ours, not a paper number
    assert (got["table"] == "figure5").all() and (got["column"] == "querybased").all()
    assert (got["interval_lo"] <= got["ours"] + 1e-9).all() and (got["ours"] <= got["interval_hi"] + 1e-9).all()
    card = scorecard.build(got).set_index(["row", "column"])
    assert card.loc[("smartnoise", "querybased"), "verdict"] == "reproduced"  # 4.68 vs 4.68
    assert card.loc[("updated", "querybased"), "verdict"] == "differs"  # ≈ 0.7 vs the paper's 2.18
    assert "spread" in card.loc[("updated", "querybased"), "tolerance"]


def test_spread_rule_can_fail_and_pass():
    row = {"table": "figure5", "paper": 2.18, "ceiling": 4.68}
    assert scorecard._verdict(pd.Series({**row, "ours": 3.04, "interval_lo": 2.87, "interval_hi": 3.19})) == "differs"
    assert scorecard._verdict(pd.Series({**row, "ours": 2.40, "interval_lo": 2.0, "interval_hi": 2.8})) == "reproduced"


def test_collect_archived_without_archives_is_empty(tmp_path):
    assert scorecard.collect_archived(tmp_path).empty


def test_table12_keeps_both_hyperparameter_sets():
    """Table 12 prints D (default) and P ([49]'s) per implementation: both are tracked numbers."""
    p = scorecard.paper_numbers()
    t12 = p[p["table"] == "table12"].set_index(["row", "column"])["paper"]
    assert t12[("cervical_cancer", "original D")] == pytest.approx(0.9265)  # = Table 4's entry
    assert t12[("cervical_cancer", "original P")] == pytest.approx(0.8531)
    assert not p.duplicated(["table", "row", "column"]).any()
