"""Preset cells stopped mid-fit go on from their snapshots (``utility.run`` with ``replicas.checkpoint``)."""
from __future__ import annotations

import os

import pandas as pd
import pytest

from pategan_audit import archive_store, runner
from pategan_audit.replicas.neural import NeuralStep
from pategan_audit.utility import run as R
from pategan_audit.utility.cells import UtilityCell

PANEL = ("LogisticRegression", "DecisionTree")
TIMES = ["fit_seconds", "eval_seconds"]


class Stopped(Exception):
    pass


@pytest.fixture
def cell() -> UtilityCell:
    return UtilityCell(dataset="cervical_cancer", implementation="borealis", epsilon=50.0, n_models=2, n_tables=1,
                       classifiers=PANEL, max_iter=4)


def _log_calls(monkeypatch, stop_at: int | None = None) -> list[int]:
    """Log ``NeuralStep.iteration``'s iterations; raise :class:`Stopped` at call ``stop_at`` (0-based)."""
    original, calls = NeuralStep.iteration, []

    def iteration(self, it, active):
        calls.append(it)
        if len(calls) - 1 == stop_at:
            raise Stopped
        return original(self, it, active)

    monkeypatch.setattr(NeuralStep, "iteration", iteration)
    return calls


def test_a_cell_stopped_mid_fit_resumes_to_the_same_records(cell, tmp_path, monkeypatch):
    straight = R.run_cell(cell, cache_dir=tmp_path / "a")
    root = tmp_path / "snapshots"
    options = runner.RunOptions(snapshots=str(root), checkpoint_seconds=0)
    with monkeypatch.context() as patch, runner.using(options):
        _log_calls(patch, stop_at=2)
        with pytest.raises(Stopped):
            R.run_cell(cell, cache_dir=tmp_path / "b")
    folder = root / R.cell_id(cell)
    assert (folder / "group0.pkl").exists()
    calls = _log_calls(monkeypatch)
    with runner.using(options):
        resumed = R.run_cell(cell, cache_dir=tmp_path / "b")
    assert calls[0] == 2  # iterations 0 and 1 came from the snapshot
    pd.testing.assert_frame_equal(resumed.drop(columns=TIMES), straight.drop(columns=TIMES))
    assert (resumed["fit_seconds"] > 0).all()
    assert not folder.exists()  # the stored cell needs no snapshot


def test_refresh_starts_the_fit_again(cell, tmp_path, monkeypatch):
    with monkeypatch.context() as patch, runner.using(runner.RunOptions(checkpoint_seconds=0)):
        _log_calls(patch, stop_at=2)
        with pytest.raises(Stopped):
            R.run_cell(cell, cache_dir=tmp_path)
    folder = R._snapshot_dir(cell, None, None, tmp_path)  # beside the cache entry by default
    assert tmp_path in folder.parents
    assert (folder / "group0.pkl").exists()
    calls = _log_calls(monkeypatch)
    with runner.using(runner.RunOptions(checkpoint_seconds=0)):
        R.run_cell(cell, cache_dir=tmp_path, refresh=True)
    assert calls[0] == 0 and not folder.exists()


def test_the_archive_keeps_snapshots_in_its_folder(tmp_path):
    folder = tmp_path / "utility_x" / "snapshots"
    environment = dict(os.environ)
    with archive_store.snapshots_in(folder):
        assert runner.current_options().snapshots == str(folder)  # sent to every job with the options
        folder.mkdir(parents=True)
    assert runner.current_options().snapshots is None and not folder.exists()  # empty: removed
    assert dict(os.environ) == environment  # nothing reaches the workers through the environment
    with archive_store.snapshots_in(folder):
        (folder / "cell").mkdir(parents=True)
    assert (folder / "cell").exists()  # a cell still to finish keeps its snapshots


def test_records_say_which_arithmetic_trained_them(cell, tmp_path, monkeypatch):
    """A flushed session (``RunOptions(flush_denormal=True)``) writes records under the same cell
    id as an IEEE one, so each row says which arithmetic trained its generator."""
    ieee = R.run_cell(cell, cache_dir=tmp_path)
    with runner.using(runner.RunOptions(flush_denormal=True)):
        flushed = R.run_cell(cell, cache_dir=tmp_path)  # another cache entry: trained again
    assert not ieee["flush_denormal"].any() and flushed["flush_denormal"].all()
    assert set(flushed["cell"]) == set(ieee["cell"]) == {R.cell_id(cell)}
