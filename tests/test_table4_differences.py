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
