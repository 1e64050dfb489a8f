"""The "What to use instead" page's library calls (pategan_audit.pages.alternatives), on archives
written here: what the page reads, what it says while an archive is missing or partial."""
from __future__ import annotations

import pandas as pd
import pytest

from pategan_audit import archive
from pategan_audit.pages import alternatives as P


def _utility(values: dict) -> pd.DataFrame:
    """Utility-archive records: {(dataset, generator, ε): [AUROC per table]}; two classifiers, the
    second 0.1 below the first."""
    rows = []
    for (dataset, impl, eps), scores in values.items():
        for table, score in enumerate(scores):
            for clf, shift in (("LogisticRegression", 0.0), ("RandomForest", -0.1)):
                rows.append({"cell": f"{dataset}-{impl}-{eps:g}", "dataset": dataset, "implementation": impl,
                             "epsilon": eps, "num_teachers": None, "variant": "default", "model": table // 2,
                             "table": table % 2, "classifier": clf, "auroc": score + shift, "auprc": 0.1,
                             "status": "ok", "single_class": False, "iterations": 1, "fit_seconds": 10.0 + table,
                             "eval_seconds": 1.0})
    return pd.DataFrame(rows)


def test_utility_values_put_the_mechanisms_beside_the_best_of_the_six_at_the_same_epsilons(tmp_path):
    assert P.utility_values(directory=tmp_path) is None
    assert "cannot be read yet" in P.utility_verdict(None)
    archive.write_archive("utility_alternatives_large", _utility({
        ("cervical_cancer", "priv-bayes", 1.0): [0.80, 0.85, 0.7, 0.6],
        ("cervical_cancer", "mst", 1.0): [0.90, 0.6, 0.6, 0.6],
        ("credit", "aim", 1.0): [0.9, 0.9, 0.9, 0.9]}), {"profile": "smoke", "runs": "test", "complete": False},
        directory=tmp_path)
    archive.write_archive("utility_sweep_large", _utility({
        ("cervical_cancer", "updated", 1.0): [0.95, 0.5, 0.5, 0.5],
        ("cervical_cancer", "borealis", 1.0): [0.70, 0.5, 0.5, 0.5],
        ("cervical_cancer", "corrected", 1.0): [0.60, 0.5, 0.5, 0.5],
        ("cervical_cancer", "updated", 0.5): [0.99, 0.99, 0.99, 0.99]}),  # not an ε of the page
        {"profile": "smoke", "runs": "test"}, directory=tmp_path)
    values = P.utility_values(directory=tmp_path)
    got = values.set_index(["dataset", "implementation", "epsilon"])["auroc"]
    assert got[("cervical_cancer", "priv-bayes", 1.0)] == pytest.approx((0.85 + 0.75) / 2)  # each classifier's best
    assert got[("cervical_cancer", P.BEST_SIX, 1.0)] == pytest.approx((0.95 + 0.85) / 2)  # updated, the six's best
    assert 0.5 not in set(values["epsilon"])
    assert "updated" in values.set_index("implementation").loc[P.BEST_SIX, "source"]
    texts = [b.markdown for b in P.utility_blocks(values, cost="x") if hasattr(b, "markdown")]
    assert any("The best of the six, and how long it trained: updated at ε = 1 (1 iteration)." in t for t in texts)
    table = P.utility_table(values, "cervical_cancer")
    assert list(table.index) == [*P.MECHANISMS, "corrected", "gnmax", P.BEST_SIX]
    assert pd.isna(table.loc["aim", "ε=1"]) and pd.isna(table.loc["gnmax", "ε=0.1"])  # not archived: empty
    assert table.loc["mst", "best of n"] == 4
    cost = P.cost_table(values)
    assert cost.loc["priv-bayes", "cervical_cancer"] == pytest.approx(11.0)  # median of the two models' fits (10, 12)
    text = P.utility_verdict(values)
    assert "cervical_cancer: mst 0.850, below the best PATE-GAN (best of the six 0.900)" in text
    assert "Not comparable yet (a side not archived): credit, epileptic_seizure, isolet." in text


def _audit(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([{"attack": "querybased", "implementation": impl, "channel": channel, "variant": variant,
                          "method": method, "epsilon_emp": e, "auc": 0.5, "epsilon": 1.0, "n_per_world": 1000}
                         for impl, channel, variant, e in rows for method in ("clopper_pearson", "bayesian")])


def test_audit_table_reads_the_controlled_channel_and_the_verdict_flags_a_bound_above_epsilon(tmp_path):
    assert P.audit_table(directory=tmp_path) is None
    assert "cannot be read yet" in P.audit_verdict(None)
    archive.write_archive("audit_alternatives_large", _audit([("priv-bayes", "controlled", "n_iters 300", 0.0)]),
                          {"profile": "large", "runs": "test", "ceiling_clopper_pearson": 4.6}, directory=tmp_path)
    archive.write_archive("audit_querybased_controlled_large", _audit([
        ("smartnoise", "controlled", "as benchmarked", 2.5), ("smartnoise", "controlled", "V1 fixed", 0.0),
        ("corrected", "controlled", "as benchmarked", 1.9)]), {"profile": "large", "runs": "test",
                                                              "ceiling_clopper_pearson": 4.7}, directory=tmp_path)
    archive.write_archive("audit_corrected_large", _audit([("corrected", "controlled", "as benchmarked", 0.0),
                                                           ("corrected", "paper", "as benchmarked", 3.0)]),
                          {"profile": "large", "runs": "test"}, directory=tmp_path)
    table = P.audit_table(directory=tmp_path)
    assert list(table.index) == ["priv-bayes", "smartnoise", "corrected"]
    assert table.loc["smartnoise", "ε_emp (Clopper-Pearson)"] == 2.5  # as benchmarked, not the variant
    assert table.loc["corrected", "archive"] == "audit_corrected_large"  # the hardened preset's own archive
    assert table.loc["priv-bayes", "ceiling"] == 4.6 and table.loc["smartnoise", "ceiling"] == 4.7  # each archive's own
    assert pd.isna(table.loc["corrected", "ceiling"])  # its archive's meta names none here
    assert "No lower bound exceeds the claimed ε" in P.audit_verdict(table)
    table.loc["priv-bayes", "ε_emp (Clopper-Pearson)"] = 1.4
    assert "ε_emp above ε for priv-bayes" in P.audit_verdict(table) and "not done yet" in P.audit_verdict(table)


def test_the_blocks_name_a_missing_archive_and_a_partial_one(tmp_path):
    from pategan_audit.pages.blocks import Text

    (missing,) = P.utility_blocks(None, cost="hours")
    assert missing.markdown.startswith("*`utility_alternatives_large` has not run yet (hours)")
    archive.write_archive("utility_alternatives_large", _utility({("credit", "aim", 1.0): [0.9, 0.9, 0.9, 0.9]}),
                          {"profile": "large", "runs": "1 of 36 cells", "complete": False}, directory=tmp_path)
    texts = [b.markdown for b in P.utility_blocks(P.utility_values(directory=tmp_path), cost="x") if isinstance(b, Text)]
    assert any(t.startswith("**Kaggle Credit.**") and "none archived at these ε" in t for t in texts)
    assert any(t.startswith("**Kaggle Credit.**") and "no point): none." in t for t in texts)
    assert any("No mechanism archived yet on: Kaggle Cervical Cancer" in t for t in texts)
    assert any(t.startswith("*Partial archive: 1 of 36 cells.") for t in texts)
    assert any("`.venv-alt/bin/python -m pategan_audit.archive utility_alternatives_large --n-jobs 2`" in t for t in texts)
    assert "`.venv-alt/bin/python -m pategan_audit.archive utility_alternatives_large --n-jobs 2`" in missing.markdown


def test_the_cost_blocks_say_when_no_fit_is_archived_at_that_epsilon():
    (note,) = P.cost_blocks(None)
    assert note.markdown == "*No fit archived at ε = 1 yet.*"
    values = pd.DataFrame([{"dataset": "credit", "implementation": "aim", "epsilon": 0.1, "auroc": 0.7, "n": 4,
                            "fit seconds": 5.0, "source": "x"}])
    assert P.cost_blocks(values)[0].markdown == "*No fit archived at ε = 1 yet.*"
    assert P.cost_blocks(values, epsilon=0.1)[0].frame.loc["aim", "credit"] == 5.0


def test_a_point_two_archives_hold_comes_from_the_larger_best_of_n(tmp_path):
    archive.write_archive("utility_alternatives_large", _utility({("isolet", "mst", 1.0): [0.6, 0.6, 0.6, 0.6]}),
                          {"profile": "large", "runs": "test"}, directory=tmp_path)
    archive.write_archive("utility_gnmax_large", _utility({("isolet", "corrected", 1.0): [0.55, 0.55, 0.55, 0.55]}),
                          {"profile": "large", "runs": "test"}, directory=tmp_path)
    archive.write_archive("utility_best25_large", _utility({("isolet", "corrected", 1.0): [0.7] * 6}),
                          {"profile": "large", "runs": "test"}, directory=tmp_path)
    values = P.utility_values(directory=tmp_path)
    row = values[(values["implementation"] == "corrected")]
    assert len(row) == 1 and row["n"].item() == 6 and row["source"].item() == "utility_best25_large"
    assert "isolet: mst 0.550, below the best PATE-GAN (corrected 0.650)" in P.utility_verdict(values)


def test_every_row_of_the_figure_has_its_own_colour_and_marker():
    from pategan_audit.pages.plotting.utility import _style

    styles = [_style(name) for name in (*P.MECHANISMS, *P.PATE_ROWS)]
    assert len({s["color"] for s in styles}) == len(styles) and len({s["marker"] for s in styles}) == len(styles)
    assert _style(P.BEST_SIX)["linestyle"] == "-." and _style("mst")["linestyle"] == "-"
