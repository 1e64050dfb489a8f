"""The "PATE-GAN, done right?" page's library calls (pategan_audit.pages.done_right)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit import archive
from pategan_audit.pages import done_right


def test_analysis_table_reports_the_release_beside_the_data_independent_bound():
    table = done_right.analysis_table(seed=0, max_iter=2)
    ind, dep = table.loc["data_independent"], table.loc["data_dependent"]
    assert ind["iterations"] == dep["iterations"] == 2 and ind["queries"] == dep["queries"]  # the same run
    assert ind["guarantee"] == "data_independent" and dep["guarantee"] == "released"
    assert ind["reported ε̂ (published)"] == ind["worst case over datasets"] <= 1.0
    assert 0 <= dep["answered"] <= dep["queries"]
    assert dep["worst case over datasets"] > ind["reported ε̂ (published)"]  # the release costs something
    assert "eps_data_dependent" not in table.columns  # the private value is not on the page


def test_audit_table_is_none_until_the_gnmax_archive_exists(tmp_path):
    assert done_right.audit_table(directory=tmp_path) is None
    rows = [{"implementation": impl, "attack": "querybased", "channel": "paper", "method": m, "epsilon_emp": e, "auc": a}
            for impl, e, a in (("gnmax", 0.1, 0.52), ("corrected", 3.9, 0.97)) for m in ("clopper_pearson", "bayesian")]
    for impl in ("gnmax", "corrected"):
        archive.write_archive(f"audit_{impl}_large", pd.DataFrame([r for r in rows if r["implementation"] == impl]),
                              {"profile": "smoke", "runs": "test"}, directory=tmp_path)
    table = done_right.audit_table(directory=tmp_path)
    assert table.loc[("querybased", "paper"), ("epsilon_emp", "gnmax")] == pytest.approx(0.1)
    assert table.loc[("querybased", "paper"), ("auc", "corrected")] == pytest.approx(0.97)


def _sweep_records(values: dict) -> pd.DataFrame:
    """utility_sweep_large-shaped records: {(dataset, preset, ε): [AUROC per table] or None (refused)}."""
    rows = []
    for (dataset, impl, eps), scores in values.items():
        cell = f"{dataset[:3]}-{impl}-{eps:g}"
        for table, score in enumerate(scores or [None]):
            for clf, shift in (("LogisticRegression", 0.0), ("RandomForest", -0.1)):
                rows.append({"cell": cell, "dataset": dataset, "implementation": impl, "epsilon": eps,
                             "num_teachers": None, "variant": "default", "model": 0, "table": table,
                             "classifier": clf, "auroc": None if score is None else score + shift,
                             "auprc": None if score is None else 0.1, "status": "not_trained" if score is None else "ok",
                             "single_class": None if score is None else score == 0.5,
                             "iterations": 0 if score is None else min(10 * eps, 50), "max_iter": 50,
                             "fit_seconds": 1.0, "eval_seconds": 1.0})
    return pd.DataFrame(rows)


def test_sweep_values_take_each_classifiers_best_and_name_refusals_and_single_class_tables(tmp_path):
    assert done_right.sweep_values(directory=tmp_path) is None
    assert done_right.curves(None, cost="x")[0].markdown.startswith("*`utility_sweep_large` has not run yet")
    records = _sweep_records({("cervical_cancer", "corrected", 0.1): None,
                              ("cervical_cancer", "corrected", 1.0): [0.7, 0.9],
                              ("cervical_cancer", "corrected", 5.0): [0.7, 0.9],
                              ("cervical_cancer", "gnmax", 0.5): [0.5, 0.5],
                              ("cervical_cancer", "gnmax", 1.0): [0.5, 0.5],
                              ("cervical_cancer", "gnmax", 10.0): [0.5, 0.8],
                              ("cervical_cancer", "gnmax", 50.0): [0.5, 0.8]})
    # corrected at ε = 5 scores as at ε = 1 on LogisticRegression, not on RandomForest: not a repeat
    rf5 = (records["implementation"] == "corrected") & (records["epsilon"] == 5.0) & (records["classifier"] == "RandomForest")
    records.loc[rf5, "auroc"] += 0.01
    archive.write_archive("utility_sweep_large", records, {"profile": "smoke", "runs": "test", "complete": False},
                          directory=tmp_path)
    values = done_right.sweep_values(directory=tmp_path).set_index(["implementation", "epsilon"])
    # best per classifier over the two tables (0.9 and 0.8), then their mean
    assert values.loc[("corrected", 1.0), "auroc"] == pytest.approx((0.9 + 0.8) / 2)
    assert pd.isna(values.loc[("corrected", 0.1), "auroc"])
    assert values.loc[("gnmax", 1.0), "single-class share"] == 1.0
    assert values.loc[("gnmax", 10.0), "single-class share"] == 0.5
    table = done_right.sweep_table(values.reset_index(), "cervical_cancer")
    assert list(table.index) == ["corrected", "gnmax"]
    assert list(table.columns) == ["ε=0.1", "ε=0.5", "ε=1", "ε=5", "ε=10", "ε=50"]
    flat = values.reset_index()
    flat.attrs = values.attrs
    blocks = done_right.curves(flat, cost="x")
    texts = " ".join(b.markdown for b in blocks if hasattr(b, "markdown"))
    assert "Refused to train (below the accountant's floor; no point): corrected at ε = 0.1." in texts
    assert "single label class, on which every classifier scores 0.5: gnmax at ε = 0.5, 1, 10, 50." in texts
    assert "Partial archive" in texts
    assert values.loc[("gnmax", 10.0), "iteration cap"] == 50 and values.loc[("gnmax", 1.0), "iterations"] == 10
    assert "Trained to the iteration cap (50; a preset whose accountant stops training had budget left there): " \
           "corrected at ε = 5; gnmax at ε = 10, 50." in texts
    # ε = 50 scores as ε = 10 on every table; ε = 1 as ε = 0.5, but only single-class tables (0.5 on any)
    assert list(values.index[values["same tables as the smaller ε"]]) == [("gnmax", 50.0)]
    assert "so such a point repeats the one before): gnmax at ε = 50." in texts
    assert "copied from a smaller" not in texts  # these records have no copied point


def test_curves_name_the_points_copied_from_a_capped_twin(tmp_path):
    records = _sweep_records({("cervical_cancer", "updated", 5.0): [0.7, 0.9],
                              ("cervical_cancer", "updated", 10.0): [0.7, 0.9]})
    records["same_as_epsilon"] = np.where(records["epsilon"] == 10.0, 5.0, np.nan)
    archive.write_archive("utility_sweep_large", records, {"profile": "smoke", "runs": "test", "complete": True},
                          directory=tmp_path)
    values = done_right.sweep_values(directory=tmp_path)
    assert values.set_index("epsilon")["copied from ε"].fillna(0).to_dict() == {5.0: 0, 10.0: 5.0}
    texts = " ".join(b.markdown for b in done_right.curves(values, cost="x") if hasattr(b, "markdown"))
    assert "ε only decides when these presets stop (`pategan_audit.utility.twins`): updated at ε = 10." in texts


def test_curves_on_credit_put_the_papers_six_beside_ours_and_name_what_is_not_archived(tmp_path):
    from pategan_audit import reference as R

    records = _sweep_records({("credit", "gnmax", 1.0): [0.7, 0.8], ("credit", "original", 1.0): [0.6, 0.7]})
    archive.write_archive("utility_sweep_large", records, {"profile": "smoke", "runs": "test", "complete": False},
                          directory=tmp_path)
    values = done_right.sweep_values(directory=tmp_path)
    table = done_right.sweep_table(values, "credit")
    assert list(table.index[:2]) == ["original", "gnmax"]
    assert [f"{p} (paper)" for p in R.IMPLEMENTATIONS] == list(table.index[2:])
    fig6 = R.figure_series(6).set_index(["implementation", "epsilon"])["value"]
    assert table.loc["turing (paper)", "ε=0.5"] == fig6[("turing", 0.5)]
    assert done_right.paper_curves("cervical_cancer") is None
    texts = " ".join(b.markdown for b in done_right.curves(values, cost="x") if hasattr(b, "markdown"))
    assert "the paper's Figure 6" in texts
    assert "Not archived here yet: borealis, smartnoise, synthcity, turing, updated." in texts
    # the figure draws the six's printed curves, also for presets without an archived curve
    fig = done_right.sweep_figure(values, "credit")
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert "turing (paper)" in labels and "original (paper)" not in labels and "gnmax" in labels


def test_verdict_table_puts_each_presets_audits_beside_its_utility(tmp_path):
    assert done_right.verdict_table(None, directory=tmp_path) is None
    def audit(impl, attack, channel, eps):
        return {"implementation": impl, "attack": attack, "channel": channel, "variant": "as benchmarked",
                "method": "clopper_pearson", "epsilon_emp": eps, "auc": 0.5}
    archive.write_archive("audit_gnmax_large", pd.DataFrame([audit("gnmax", "querybased", "controlled", 0.0)]),
                          {"profile": "smoke"}, directory=tmp_path)
    archive.write_archive("audit_corrected_large", pd.DataFrame([audit("corrected", "groundhog", "paper", 0.2)]),
                          {"profile": "smoke"}, directory=tmp_path)
    # the older corrected row in the paper-scale archive is not used: the hardened preset's is
    archive.write_archive("audit_groundhog_large", pd.DataFrame([audit("corrected", "groundhog", "paper", 9.0),
                                                                 audit("turing", "groundhog", "paper", 2.0)]),
                          {"profile": "smoke"}, directory=tmp_path)
    values = pd.DataFrame([{"dataset": "cervical_cancer", "implementation": "gnmax", "epsilon": 1.0, "auroc": 0.55}])
    table = done_right.verdict_table(values, directory=tmp_path)
    assert list(table.index) == ["turing", "corrected", "gnmax"]
    assert table.loc["corrected", "GroundHog ε_emp (paper channel)"] == pytest.approx(0.2)
    assert table.loc["gnmax", "Querybased ε_emp (controlled)"] == 0.0
    assert table.loc["gnmax", "AUROC (cervical_cancer, ε=1)"] == pytest.approx(0.55)
    assert pd.isna(table.loc["turing", "AUROC (cervical_cancer, ε=1)"])


def test_utility_target_counts_datasets_where_gnmax_beats_the_best_of_the_six():
    assert "cannot be judged yet" in done_right.utility_target(None)
    table = pd.DataFrame({"gnmax": [0.80, 0.70, 0.60], "best of the six (paper)": [0.74, 0.75, 0.55],
                          "best of the six (ours)": [0.90, None, None]},
                         index=["credit", "epileptic_seizure", "isolet"])
    text = done_right.utility_target(table)
    assert "on 2 of 3 datasets" in text and "credit, isolet" in text and "**met**" in text
    assert "best of our six on 0 of the 1 datasets" in text
    table.loc["isolet", "gnmax"] = 0.50
    assert "**not met**" in done_right.utility_target(table)
