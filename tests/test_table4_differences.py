"""benchmarks/table4_differences.py: an experiment checks the archived cell it is compared with
before it trains anything (a missing cell once cost an hour of fits that could not be saved)."""
from pathlib import Path

import pytest

from ._benchmarks import load_benchmark


@pytest.fixture(scope="module")
def t4():
    return load_benchmark("table4_differences")


def test_archived_cell_reads_the_committed_table4_cell(t4):
    cell = t4.archived_cell("cervical_cancer", "smartnoise")
    assert set(cell["dataset"]) == {"cervical_cancer"} and set(cell["implementation"]) == {"smartnoise"}


def test_a_missing_cell_stops_the_experiment_before_any_training(t4, tmp_path, monkeypatch, use_archive):
    use_archive(tmp_path)  # an archive directory without the cell

    def never(*args, **kwargs):
        raise AssertionError("trained although the comparison cannot be written")

    monkeypatch.setattr(t4, "best_of_n_at_cap", never)
    with pytest.raises(LookupError, match="utility_tables_large"):
        t4.per_classifier_best_of_n(presets=("borealis",), dataset="isolet", out=str(tmp_path / "x.csv"))


def test_a_missing_sweep_cell_stops_the_sweep_experiment_before_any_training(t4, tmp_path, monkeypatch, use_archive):
    use_archive(tmp_path)  # no utility_sweep_large here

    def never(*args, **kwargs):
        raise AssertionError("trained although the comparison cannot be written")

    monkeypatch.setattr("pategan_audit.utility.run.run_cell", never)
    with pytest.raises(LookupError, match="utility_sweep_large"):
        t4.sweep_draw_again(dataset="credit", implementation="smartnoise", epsilon=0.5, out=str(tmp_path / "x.csv"))
    with pytest.raises(ValueError, match="no ε-sweep figure"):
        t4.sweep_draw_again(dataset="isolet", implementation="smartnoise", epsilon=0.5)


def _draw_from(arch, shift: float, monkeypatch) -> dict:
    """The archived cell ``arch`` stands in for a fresh draw, its AUROC raised by ``shift``;
    the returned dict gets the cell the experiment asked for."""
    seen = {}

    def fake_run_cell(cell):
        seen["cell"] = cell
        return arch.assign(auroc=arch["auroc"] + shift)

    monkeypatch.setattr("pategan_audit.utility.run.run_cell", fake_run_cell)
    return seen


def test_sweep_draw_again_writes_both_figure_points_beside_the_archived_cell(t4, tmp_path, monkeypatch):
    """The committed sweep cell (Credit smartnoise, ε = 0.5) stands in for a fresh draw: the rows
    carry the archive's best of 4, the paper's Figure 6 and 7 points and the ε the scorecard keys on."""
    import pandas as pd

    arch = t4.archived_sweep_cell("credit", "smartnoise", 0.5)
    seen = _draw_from(arch, 0.01, monkeypatch)
    out = tmp_path / "p.csv"
    got = t4.sweep_draw_again(dataset="credit", implementation="smartnoise", epsilon=0.5, out=str(out))
    cell = seen["cell"]
    assert (cell.n_models, cell.n_tables, cell.seed, cell.epsilon, cell.max_iter) == (3, 3, 1, 0.5, 10_000)
    assert list(got["table"]) == ["figure6", "figure7"] and (got["epsilon"] == 0.5).all()
    assert got["paper"].tolist() == [0.4935, 0.0234]  # the paper's smartnoise points at ε = 0.5
    auroc = got.set_index("metric").loc["auroc"]
    assert auroc["best_of_all"] == pytest.approx(auroc["archive"] + 0.01)
    assert auroc["n_archive"] == 4 and "epsilon = 0.5" in auroc["tried"]
    pd.testing.assert_frame_equal(pd.read_csv(out), got, check_dtype=False)


def test_sweep_draw_again_at_the_papers_cap_adds_figure_8s_mean(t4, tmp_path, monkeypatch):
    """On Epileptic, trained past the archive's 2,000 cap (``max_iter``): the cell runs to the
    paper's 10,000, the rows say both caps, and Figure 8's point is the new tables' per-table mean
    AUROC beside the archive's tables' mean and the authors' records' mean at that ε."""
    import pandas as pd

    from pategan_audit import reference as R

    arch = t4.archived_sweep_cell("epileptic_seizure", "original", 10.0)
    seen = _draw_from(arch, 0.05, monkeypatch)
    got = t4.sweep_draw_again(dataset="epileptic_seizure", implementation="original", epsilon=10.0, n_models=1,
                              n_tables=2, max_iter=10_000, out=str(tmp_path / "p.csv"))
    assert seen["cell"].max_iter == 10_000 and (got["archive_max_iter"] == 2_000).all()
    assert list(got["table"]) == ["figure1", "figure9", "figure8"]
    mean = got.set_index("table").loc["figure8"]
    per_table = arch.groupby(["model", "table"])["auroc"].mean().mean()
    assert mean["statistic"] == "mean" and mean["archive"] == pytest.approx(per_table)
    assert mean["best_of_all"] == pytest.approx(per_table + 0.05)
    fig8 = R.figure_series(8)
    assert mean["paper"] == float(fig8[(fig8["implementation"] == "original") & (fig8["epsilon"] == 10.0)]["value"].iloc[0])
    assert "10,000-iteration cap (the archive's: 2,000)" in mean["tried"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "p.csv"), got, check_dtype=False)


def test_sweep_mean_vs_records_is_the_committed_file_and_its_worked_numbers(t4):
    """The committed ``sweep_mean_vs_records.csv`` is what the experiment gives on the committed
    sweep archive (rerun it when the archive gains cells, or the scorecard reads stale diagnoses);
    each row's z is the per-table mean difference over the combined standard errors."""
    import numpy as np
    import pandas as pd

    from pategan_audit import reference as R
    from pategan_audit.pages.scorecard import paper_numbers

    got = t4.sweep_mean_vs_records(out=None)
    committed = pd.read_csv(Path(__file__).resolve().parents[1] / "results" / "experiments"
                            / "sweep_mean_vs_records.csv")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), committed, check_dtype=False)
    assert len(got) and not np.isclose(got["epsilon"], 1.0).any()  # ε = 1 is Table 4's archive
    # NaN where the records give no standard error (a bare 0.5: every table of theirs single-class),
    # or where neither side varies (both standard errors 0)
    spread = np.hypot(got["ours_se"], got["records_se"]).where(lambda v: v > 0)
    assert np.allclose(got["z"], (got["ours_mean"] - got["records_mean"]) / spread, equal_nan=True)
    assert t4._z(0.1, 0.0, 0.0) != t4._z(0.1, 0.0, 0.0) and t4._z(0.1, 0.03, 0.04) == pytest.approx(2.0)
    assert got["z"].notna().any()
    fig8 = R.figure_series(8).set_index(["implementation", "epsilon"])
    for r in got.itertuples():
        assert r.records_mean == pytest.approx(fig8.loc[(r.implementation, r.epsilon), "value"])
        if r.statistic == "mean":
            assert r.ours == r.ours_mean and r.table == "figure8"
    keys = set(zip(*(paper_numbers()[c] for c in ("table", "row", "column"))))
    assert {(r.table, r.implementation, f"{r.metric} eps={r.epsilon:g}") for r in got.itertuples()} <= keys


def test_borealis_best_of_n_runs_table_11s_k_and_table_12s_hyperparameters(t4, monkeypatch):
    """Table 11's teacher count and Table 12's [49] hyperparameters reach the cell the experiment
    trains (the variants archive's cells), at the paper's cap; the best-of-n curve is the records'."""
    arch = t4.archived_sweep_cell("credit", "smartnoise", 0.5)  # 4 tables standing in for a draw
    seen = _draw_from(arch, 0.0, monkeypatch)
    got = t4.borealis_best_of_n(n_models=2, n_tables=2, num_teachers=2)
    cell = seen["cell"]
    assert (cell.implementation, cell.dataset, cell.num_teachers, cell.variant) == ("borealis", "epileptic_seizure", 2, "default")
    assert (cell.n_models, cell.n_tables, cell.max_iter, cell.seed) == (2, 2, 10_000, 1)
    curve = got[got["classifier"] == "mean of 12"].set_index("n")["auroc"]
    assert list(curve.index) == [1, 2, 3, 4] and curve.is_monotonic_increasing
    from pategan_audit.utility.aggregate import best_of_n
    assert curve[4] == pytest.approx(float(best_of_n(arch)["auroc"].iloc[0]))
    t4.borealis_best_of_n(n_models=1, n_tables=1, overrides={"hyperparameters": "paper"})
    assert seen["cell"].variant == "hyperparameters=paper" and seen["cell"].num_teachers is None
