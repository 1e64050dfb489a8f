"""benchmarks/table4_differences.py: an experiment checks the archived cell it is compared with
before it trains anything (a missing cell once cost an hour of fits that could not be saved)."""
import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "table4_differences.py"


@pytest.fixture(scope="module")
def t4():
    spec = importlib.util.spec_from_file_location("table4_differences", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_archived_cell_reads_the_committed_table4_cell(t4):
    cell = t4.archived_cell("cervical_cancer", "smartnoise")
    assert set(cell["dataset"]) == {"cervical_cancer"} and set(cell["implementation"]) == {"smartnoise"}


def test_a_missing_cell_stops_the_experiment_before_any_training(t4, tmp_path, monkeypatch):
    monkeypatch.setenv("PATEGAN_AUDIT_ARCHIVE", str(tmp_path))  # an archive directory without the cell

    def never(*args, **kwargs):
        raise AssertionError("trained although the comparison cannot be written")

    monkeypatch.setattr(t4, "best_of_n_at_cap", never)
    with pytest.raises(LookupError, match="utility_tables_large"):
        t4.per_classifier_best_of_n(presets=("borealis",), dataset="isolet", out=str(tmp_path / "x.csv"))


def test_a_missing_sweep_cell_stops_the_sweep_experiment_before_any_training(t4, tmp_path, monkeypatch):
    monkeypatch.setenv("PATEGAN_AUDIT_ARCHIVE", str(tmp_path))  # no utility_sweep_large here

    def never(*args, **kwargs):
        raise AssertionError("trained although the comparison cannot be written")

    monkeypatch.setattr("pategan_audit.utility.run.run_cell", never)
    with pytest.raises(LookupError, match="utility_sweep_large"):
        t4.sweep_draw_again(dataset="credit", implementation="smartnoise", epsilon=0.5, out=str(tmp_path / "x.csv"))
    with pytest.raises(ValueError, match="no ε-sweep figure"):
        t4.sweep_draw_again(dataset="isolet", implementation="smartnoise", epsilon=0.5)


def test_sweep_draw_again_writes_both_figure_points_beside_the_archived_cell(t4, tmp_path, monkeypatch):
    """The committed sweep cell (Credit smartnoise, ε = 0.5) stands in for a fresh draw: the rows
    carry the archive's best of 4, the paper's Figure 6 and 7 points and the ε the scorecard keys on."""
    import pandas as pd

    arch = t4.archived_sweep_cell("credit", "smartnoise", 0.5)
    seen = {}

    def fake_run_cell(cell):
        seen["cell"] = cell
        return arch.assign(auroc=arch["auroc"] + 0.01)

    monkeypatch.setattr("pategan_audit.utility.run.run_cell", fake_run_cell)
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
