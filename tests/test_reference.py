"""Internal consistency of the paper's reference numbers (pategan_audit.reference).

Each test checks a relation the paper's numbers must satisfy (an average equals its rows, a table
copies another, a formula reproduces a printed statement, an accountant reproduces a trace), so a
transcription error makes it fail. Source sections are cited per test (protocols spec =
the protocols spec (shared/spec/protocols.md)).
"""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pategan_audit.reference as R
from pategan_audit.accounting import MomentsAccountant, moment_increments
from pategan_audit.reference import AVERAGE, DATASETS, IMPLEMENTATIONS, PAPER49

PRINTED_ROUNDING = 5e-4  # means of 12 four-decimal values vs a printed four-decimal average


def auroc_delta_pct(x, r):
    """Protocols spec B.10: asymmetric change of x against reference r, in percent."""
    return 100 * ((x - r) / (r - 0.5) if x < r else (x - r) / r)


def classifier_means(long):
    body = long[long.row != AVERAGE]
    assert len(body.row.unique()) == 12
    return body.groupby("column", sort=False).value.mean()


# -- shapes, keys, provenance ----------------------------------------------------------------------
NUMERIC_TABLES = [R.table1, R.table4, R.table4_auprc, R.table5, R.table6, R.table7, R.setting_a_reference,
                  R.table8, R.table9, R.table10, R.table11, R.paper49_teacher_sweep]  # fmt: skip


@pytest.mark.parametrize("fn", NUMERIC_TABLES, ids=lambda f: f.__name__)
def test_long_tables_have_schema_and_provenance(fn):
    df = fn()
    assert set(R.LONG_COLUMNS) <= set(df.columns)
    assert df.value.notna().all()
    assert set(df.provenance) <= {R.PRINTED, R.RECORDS}
    assert not df.duplicated(["row", "column"]).any()
    wide = fn(wide=True)
    assert wide.notna().sum().sum() == len(df)


def test_constants():
    assert R.IMPLEMENTATIONS == ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")
    assert R.DATASETS == ("credit", "cervical_cancer", "isolet", "epileptic_seizure")
    assert set(R.DATASETS) <= set(R.DISPLAY_NAMES)
    assert R.EPS_GRID == (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 50)
    assert R.AUDIT_CEILING == 4.6815
    assert set(R.__all__) <= set(dir(R))


# -- Tables 4, 5, 8, 9, 10: averages and copies --------------------------------------------------
def test_table5_average_is_table4_epileptic_row():
    t4, t5 = R.table4(wide=True), R.table5(wide=True)
    pd.testing.assert_series_equal(t5.loc[AVERAGE], t4.loc["epileptic_seizure"], check_names=False)


def test_table8_average_is_table4_credit_row():
    t4, t8 = R.table4(wide=True), R.table8(wide=True)
    pd.testing.assert_series_equal(t8.loc[AVERAGE], t4.loc["credit"], check_names=False)


@pytest.mark.parametrize("fn", [R.table5, R.table8, R.table10], ids=lambda f: f.__name__)
def test_column_means_match_printed_averages(fn):
    df = fn()
    means = classifier_means(df)
    printed = df[df.row == AVERAGE].set_index("column").value
    for impl in IMPLEMENTATIONS:
        assert means[impl] == pytest.approx(printed[impl], abs=PRINTED_ROUNDING), impl
    if PAPER49 in means:  # [49]'s own Credit column averages 0.8742 vs its printed 0.8737
        assert means[PAPER49] == pytest.approx(printed[PAPER49], abs=1e-3)


def test_table9_printed_cells_vs_records():
    """Protocols spec E.1: two borealis cells are shifted; the printed average is the records'."""
    df = R.table9()
    body = df[df.row != AVERAGE]
    printed_avg = df[df.row == AVERAGE].set_index("column").value
    differ = body[(body.column != PAPER49) & (body.value != body.recorded)]
    assert sorted(zip(differ.row, differ.column)) == [("BernoulliNB", "borealis"), ("GaussianNB", "borealis")]
    recorded_means = body[body.column != PAPER49].groupby("column").recorded.mean()
    printed_means = body.groupby("column").value.mean()
    for impl in IMPLEMENTATIONS:
        assert recorded_means[impl] == pytest.approx(printed_avg[impl], abs=PRINTED_ROUNDING), impl
    assert printed_means["borealis"] == pytest.approx(0.1969, abs=PRINTED_ROUNDING)  # not 0.1635
    assert printed_means[PAPER49] == pytest.approx(printed_avg[PAPER49], abs=1e-3)


def test_auprc_companion_of_table4():
    auprc = R.table4_auprc(wide=True)
    assert auprc.loc["credit"].tolist() == R.table9(wide=True).loc[AVERAGE, list(IMPLEMENTATIONS)].tolist()
    assert auprc.loc["epileptic_seizure"].tolist() == R.table10(wide=True).loc[AVERAGE, list(IMPLEMENTATIONS)].tolist()


def test_single_class_entries_score_prevalence():
    """Protocols spec B.3: an AUROC of exactly 0.5 comes from single-class synthetic labels, whose
    AUPRC is the test prevalence (Table 7's imbalance column up to the split's rounding)."""
    auroc, auprc, t7 = R.table4(wide=True), R.table4_auprc(wide=True), R.table7(wide=True)
    hits = 0
    for ds in DATASETS:
        for impl in IMPLEMENTATIONS:
            if auroc.loc[ds, impl] == 0.5:
                assert auprc.loc[ds, impl] == pytest.approx(t7.loc[ds, "imbalance"], abs=2e-4), (ds, impl)
                hits += 1
    assert hits == 5  # Credit original/updated/turing, Cervical turing, ISOLET turing


def test_table6_non_conditional_is_table4_original():
    t4, t6 = R.table4(wide=True), R.table6(wide=True)
    assert t6.loc[list(DATASETS), "non_conditional"].tolist() == t4.loc[list(DATASETS), "original"].tolist()
    assert t6.loc[list(DATASETS), PAPER49].tolist() == t4.loc[list(DATASETS), PAPER49].tolist()


def test_table11_n1000_is_table4_epileptic_row():
    t4, t11 = R.table4(wide=True), R.table11(wide=True)
    for impl in t11.index:
        assert t11.loc[impl, "N/1000"] == t4.loc["epileptic_seizure", impl]
    flagged = R.table11().query("column == 'N/1000'")
    assert flagged.note.str.contains("copied from Table 4").all()
    # protocols spec G.2: within the sweep (best-of-9) N/1000 is the best only for synthcity
    sweep = t11.drop(columns="N/1000").rename(columns={"N/1000 (sweep)": "N/1000"})
    assert sweep.idxmax(axis=1).to_dict() == {
        "updated": "N/5000", "synthcity": "N/1000", "borealis": "N/5000", "smartnoise": "N/500"
    }  # fmt: skip


def test_paper49_teacher_sweep_reading():
    sweep = R.paper49_teacher_sweep(wide=True)
    assert sweep.loc["auroc", "N/1000"] == R.table4(wide=True).loc["credit", PAPER49]
    assert sweep.loc["auprc", "N/1000"] == R.table9(wide=True).loc[AVERAGE, PAPER49]


def test_table12_defaults_are_table4():
    t4, t12 = R.table4(wide=True), R.table12(wide=True)
    for impl in IMPLEMENTATIONS:
        assert t12.loc[list(DATASETS), (impl, "D")].tolist() == t4.loc[list(DATASETS), impl].tolist()


# -- B.10 formula against Tables 1, 6, 12 and the §5 text ------------------------------------------
def test_table1_from_table4():
    t1, t4 = R.table1(wide=True), R.table4(wide=True)
    all_pairs = []
    for impl in IMPLEMENTATIONS:
        deltas = [auroc_delta_pct(t4.loc[ds, impl], t4.loc[ds, PAPER49]) for ds in DATASETS]
        all_pairs += deltas
        assert np.mean(deltas) == pytest.approx(t1.loc[R.DELTA_ROW, impl], abs=0.015), impl
    text = R.text_numbers().set_index("quantity").value
    assert np.mean(all_pairs) == pytest.approx(text["auroc_delta_all_pairs_pct"], abs=0.015)


def test_table6_delta_row():
    t6 = R.table6(wide=True)
    for col in ("non_conditional", "conditional"):
        got = np.mean([auroc_delta_pct(t6.loc[ds, col], t6.loc[ds, PAPER49]) for ds in DATASETS])
        assert got == pytest.approx(t6.loc[R.DELTA_ROW, col], abs=0.015), col
    assert t6.loc[R.DELTA_ROW, "non_conditional"] == R.table1(wide=True).loc[R.DELTA_ROW, "original"]


def test_table12_delta_row_and_text():
    t12 = R.table12(wide=True)
    deltas = []
    for impl in IMPLEMENTATIONS:
        got = np.mean([auroc_delta_pct(t12.loc[ds, (impl, "P")], t12.loc[ds, (impl, "D")]) for ds in DATASETS])
        assert got == pytest.approx(t12.loc[R.DELTA_ROW, (impl, "P")], abs=0.015), impl
        deltas.append(got)
    text = R.text_numbers().set_index("quantity").value
    assert np.mean(deltas) == pytest.approx(text["table12_mean_delta_pct"], abs=0.1)


def test_dpgan_count():
    """Protocols spec B.9: 13 of 24 Table 4 entries beat DPGAN (Cervical 3, ISOLET 5, Epileptic 5)."""
    t4 = R.table4(wide=True)
    above = {ds: int(sum(t4.loc[ds, i] > R.DPGAN[ds]["auroc"] for i in IMPLEMENTATIONS)) for ds in DATASETS}
    assert above == {"credit": 0, "cervical_cancer": 3, "isolet": 5, "epileptic_seizure": 5}
    assert sum(above.values()) == R.text_numbers().set_index("quantity").value["dpgan_entries_above"]


# -- Table 7, Setting A, captions --------------------------------------------------------------------
def test_setting_a_means_are_table7():
    t7 = R.table7(wide=True)
    means = R.setting_a_reference().groupby("column").value.mean()
    for ds in DATASETS:
        assert means[ds] == pytest.approx(t7.loc[ds, "auroc"], abs=PRINTED_ROUNDING), ds


def test_captions_match_table7():
    t7 = R.table7(wide=True)
    for cap in R.caption_values().itertuples():
        assert cap.setting_a == t7.loc[cap.dataset, cap.metric]
        expected_baseline = 0.5 if cap.metric == "auroc" else t7.loc[cap.dataset, "imbalance"]
        assert cap.baseline == expected_baseline


# -- Table 2 ---------------------------------------------------------------------------------------
def test_table2_counts():
    """Implementations spec §10.1: 19 + 5 with Labels Distribution as a violation; 18 + 6 under the
    header layout; 17 + 5 in arXiv-v1."""
    t2 = R.table2()
    ticks = t2[t2.tick]
    assert ticks.groupby("group").size().to_dict() == {"privacy violation": 19, "other bug": 5}
    per_impl = ticks[ticks.group == "privacy violation"].groupby("implementation").size()
    expected = {"original": 6, "updated": 3, "synthcity": 3, "turing": 4, "borealis": 2, "smartnoise": 1}
    assert per_impl.to_dict() == expected
    header_reading = ticks.category.isin(["teachers", "processing", "labels_distribution"])
    assert (int((~header_reading).sum()), int(header_reading.sum())) == (18, 6)
    v1 = ticks[ticks.in_arxiv_v1]
    assert v1.groupby("group").size().to_dict() == {"privacy violation": 17, "other bug": 5}
    ids = ticks.id.tolist()
    assert len(set(ids)) == 24
    assert all(i[0] == ("V" if g == "privacy violation" else "B") for i, g in zip(ids, ticks.group))


def test_table3_layout():
    t3 = R.table3(wide=True)
    assert list(t3.columns) == [PAPER49, *IMPLEMENTATIONS]
    assert t3.loc["lambda", "updated"] == "1" and t3.loc["moments_L", "updated"] == "20"
    assert (R.table3().code != "").sum() >= 4  # code-verified disagreements (implementations spec §11)


# -- figures -----------------------------------------------------------------------------------------
def test_figure_points_at_epsilon_1_match_tables():
    t4, auprc = R.table4(wide=True), R.table4_auprc(wide=True)
    for fig, table, ds in [(1, t4, "epileptic_seizure"), (6, t4, "credit"), (9, auprc, "epileptic_seizure"),
                           (7, auprc, "credit")]:  # fmt: skip
        at1 = R.figure_series(fig, wide=True)[1.0]
        assert at1.tolist() == table.loc[ds, list(IMPLEMENTATIONS)].tolist(), fig


def test_figure_series_coverage():
    for fig in (1, 6, 7, 8, 9):
        df = R.figure_series(fig)
        assert len(df) == 48
        not_run = df[~df.ran]
        assert set(zip(not_run.implementation, not_run.epsilon)) == {("smartnoise", e) for e in (0.01, 0.05, 0.1)}
        assert not_run.value.isna().all() and df[df.ran].value.notna().all()
        expected_n = [25 if (e == 1 and R.FIGURES[fig]["dataset"] != "credit") else 9 for e in df.epsilon]
        assert df.n_tables.tolist() == expected_n
    with pytest.raises(ValueError, match="no reference series"):
        R.figure_series(10)


def test_single_class_points_agree_across_figures():
    """A point at AUROC 0.5 (single-class labels) has AUPRC = prevalence and mean-based AUROC 0.5."""
    for auroc_fig, auprc_fig, prevalence in [(1, 9, 0.2), (6, 7, 0.0017)]:
        a, p = R.figure_series(auroc_fig), R.figure_series(auprc_fig)
        single = a.value == 0.5
        assert single.sum() >= 5
        assert (p.value[single] == prevalence).all()
        assert (p.value[~single & a.ran] != prevalence).sum() >= 1  # sanity: not everything flat
    f1, f8 = R.figure_series(1), R.figure_series(8)
    assert (f8.value[f1.value == 0.5] == 0.5).all()


def test_mean_is_at_most_mean_of_best():
    """Fig. 8's statistic (mean over tables) cannot exceed Fig. 1's (mean over classifiers of the best table)."""
    f1, f8 = R.figure_series(1), R.figure_series(8)
    both = f1.ran
    assert (f8.value[both] <= f1.value[both] + 1e-12).all()
    assert f8.se[f8.ran].dropna().ge(0).all()


def test_paper49_marks():
    t4, t9, t10 = R.table4(wide=True), R.table9(wide=True), R.table10(wide=True)
    printed = {("credit", "auroc"): t4.loc["credit", PAPER49], ("credit", "auprc"): t9.loc[AVERAGE, PAPER49],
               ("epileptic_seizure", "auroc"): t4.loc["epileptic_seizure", PAPER49],
               ("epileptic_seizure", "auprc"): t10.loc[AVERAGE, PAPER49]}  # fmt: skip
    for (ds, metric), value in printed.items():
        marks = R.paper49_marks(ds, metric).set_index("epsilon").value
        assert abs(marks[1.0] - value) < 6e-3  # hand-read and rounded, not the printed number
    credit = R.paper49_marks("credit", "auroc")
    assert credit.epsilon.tolist() == list(R.EPS_GRID) and credit.value.is_monotonic_increasing
    assert R.paper49_marks("isolet", "auroc").empty
    with pytest.raises(ValueError, match="unknown dataset"):
        R.paper49_marks("mnist", "auroc")


# -- traces (C.1-C.3) ---------------------------------------------------------------------------------
def test_teacher_seen_counts():
    df = R.teacher_seen_reference().set_index(["implementation", "teacher"])
    n, k = 686, 5  # Cervical training rows, teachers (protocols spec C)
    for impl in ("borealis", "smartnoise"):  # disjoint partitions cover every row once
        assert df.loc[impl].only.sum() == n and df.loc[impl].shared.sum() == 0
        assert set(df.loc[impl].only) == {n // k, n // k + 1}
    assert (df.loc["updated"].shared == n // k).all() and (df.loc["updated"].only == 0).all()
    assert (df.loc["synthcity"].shared.between(0.95 * n, n)).all()
    assert not df.loc["original"].plotted.any()


def _iterations(kind, *, lam, num_moments, delta, queries, target, cap):
    acc = MomentsAccountant(kind, lam=lam, num_moments=num_moments, delta=delta, num_teachers=5, warn_at_edge=False)
    it = 0
    while acc.epsilon < target and it < cap:
        acc.charge(np.full(queries, 2))
        it += 1
    return it


def test_trace_iterations_follow_from_the_accountants():
    """Protocols spec C.2 iterations vs the vote-independent accountant loop (λ ≤ 1e-3)."""
    ref = R.trace_iterations_reference().set_index("implementation")
    updated = _iterations("updated", lam=1e-3, num_moments=20, delta=1e-5, queries=64, target=1.0, cap=1000)
    assert updated == ref.loc["updated", "iterations"]
    smartnoise = _iterations("smartnoise", lam=1e-3, num_moments=100, delta=1e-5, queries=320, target=3.0, cap=1000)
    assert smartnoise == ref.loc["smartnoise", "iterations"]
    assert _iterations("borealis", lam=1e-4, num_moments=100, delta=1e-5, queries=320, target=1.0, cap=1000) == 1000
    assert ref.loc["borealis", "hit_cap"]
    # synthcity: 10 batches of b = min(200, 686 // 5) = 137 per iteration when no batch is skipped;
    # skipped batches are free (O4), so the recorded run needs at least as many iterations
    lower = _iterations("synthcity", lam=1e-3, num_moments=100, delta=686**-1.5, queries=10 * 137, target=1.0, cap=1000)
    assert lower <= ref.loc["synthcity", "iterations"]


def test_moments_reference_from_the_formulas():
    """Protocols spec C.3: unanimous votes, λ = 1, k = 5; e(1) after 320,000 queries."""
    ref = R.moments_reference().set_index(["accountant", "quantity"]).value
    s = R.FIG4_SETTINGS
    total = s["iterations"] * s["queries_per_iteration"]
    for kind in ("updated", "synthcity", "borealis", "smartnoise"):
        inc = moment_increments(kind, n1=[0], num_teachers=s["num_teachers"], lam=s["lam"], num_moments=1)[0, 0]
        assert inc == pytest.approx(ref[(kind, "unanimous_increment_l1")], abs=5e-5)
        e1 = total * inc + np.log(1 / s["delta"])
        assert e1 == pytest.approx(ref[(kind, "unanimous_e1_after_320000_queries")], rel=0.01)
    paper = {k: ref[(k, "e1_after_1000_iterations")] for k in ("updated", "synthcity", "borealis", "smartnoise")}
    assert paper["synthcity"] < paper["updated"] < paper["borealis"] == paper["smartnoise"]


# -- audit (D.6, D.7) ---------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", sorted(R.AUDIT_CEILING_BY_ALPHA))
def test_audit_ceiling_from_clopper_pearson(alpha):
    """Perfect attack, 400 test outputs per world: CP upper end of a zero error rate at confidence
    1 - α/4, then ε = ln((1 - u - δ)/u) (protocols spec D.5, D.6)."""
    n = R.AUDIT_TEST_OUTPUTS_PER_WORLD
    u = stats.beta.ppf(1 - alpha / 4, 1, n)
    assert u == pytest.approx(1 - (alpha / 4) ** (1 / n), rel=1e-9)
    assert np.log((1 - u - 1e-5) / u) == pytest.approx(R.AUDIT_CEILING_BY_ALPHA[alpha], abs=5e-5)
    assert R.AUDIT_CEILING_BY_ALPHA[0.1] == R.AUDIT_CEILING


def test_audit_reference_values():
    df = R.audit_reference()
    assert len(df) == 12 and set(df.attack) == {"querybased", "groundhog"}
    assert (df.epsilon_emp <= R.AUDIT_CEILING).all() and (df.epsilon_emp > 1).all()
    assert df.auc.between(0.5, 1).all()
    at_ceiling = df[df.epsilon_emp == R.AUDIT_CEILING]
    assert (at_ceiling.auc == 1.0).all()  # the ceiling needs a perfect test-set split
    weakest = df.loc[df.groupby("attack").auc.idxmin()].set_index("attack").implementation.to_dict()
    assert weakest == {"querybased": "updated", "groundhog": "turing"}  # protocols spec F.4
    sel = R.target_selection_reference()
    assert sel.loc[sel.ranking == "mia_auc_rank"].sort_values("rank").row_index.iloc[0] == R.AUDIT_TARGET_ROW
    assert sel.loc[sel.ranking == "distance_rank"].value.is_monotonic_decreasing


def test_base_rates_are_table7s_imbalance_of_the_binary_datasets():
    rates = R.base_rates()
    assert rates == {"credit": 0.0017, "cervical_cancer": 0.0641, "isolet": 0.1924, "epileptic_seizure": 0.2}
