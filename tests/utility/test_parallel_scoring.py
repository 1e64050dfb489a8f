"""Parallel scoring of a utility cell (paper §5, App. C): every (table, classifier) pair is an
independent job, and the records do not depend on how many workers ran them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pategan_audit import runner
from pategan_audit.classifiers import evaluate_table
from pategan_audit.utility import run as R
from pategan_audit.utility.cells import SettingACell, UtilityCell

PANEL = ("LogisticRegression", "RandomForest", "DecisionTree", "MLP")
SCORES = ["classifier", "auroc", "auprc"]


def _tiny_cell(**kw) -> UtilityCell:
    fields = dict(dataset="cervical_cancer", implementation="smartnoise", epsilon=50.0, n_models=2, n_tables=2,
                  classifiers=PANEL, max_iter=3, mlp_max_iter=20, xgb_n_jobs=1, seed=3)
    return UtilityCell(**(fields | kw))


def _scores(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[["model", "table", "classifier", "auroc", "auprc", "status", "single_class", "iterations"]]


def test_records_identical_with_one_and_two_score_workers():
    cell = _tiny_cell()
    one = R.evaluate_cell(cell, score_options=runner.RunOptions(n_jobs=1))
    two = R.evaluate_cell(cell, score_options=runner.RunOptions(n_jobs=2))
    assert list(one.columns) == R.COLUMNS == list(two.columns)
    assert len(one) == cell.n_models * cell.n_tables * len(PANEL)
    pd.testing.assert_frame_equal(_scores(one), _scores(two), check_exact=True)
    # the scores vary across tables and classifiers (a constant would pass the comparison trivially)
    assert one["auroc"].nunique() > 3
    assert (one["eval_seconds"] > 0).all() and (two["eval_seconds"] > 0).all()


def test_parallel_scores_equal_serial_evaluate_table():
    """Each table's rows are what ``evaluate_table`` gives serially for the table's seed, whatever
    order the jobs finish in (two workers, the panel reversed in job order by the pool)."""
    data = R.load_dataset("cervical_cancer", None)
    rng = np.random.default_rng(0)
    tables = []
    for seed in (11, 12, 13):
        synth = data.train.sample(frac=1.0, replace=True, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)
        tables.append((synth, seed))
    knobs = _tiny_cell().knobs
    parallel = R.score_tables(tables, data.test, classifiers=PANEL, knobs=knobs, options=runner.RunOptions(n_jobs=2))
    for (synth, seed), (frame, seconds) in zip(tables, parallel):
        serial = evaluate_table(synth, data.test, classifiers=PANEL, seed=seed, knobs=knobs)
        pd.testing.assert_frame_equal(frame[SCORES], serial[SCORES], check_exact=True)
        assert seconds > 0


def test_setting_a_identical_with_one_and_two_score_workers():
    cell = SettingACell(dataset="cervical_cancer", classifiers=PANEL, mlp_max_iter=20, xgb_n_jobs=1)
    one = R.evaluate_setting_a(cell, score_options=runner.RunOptions(n_jobs=1))
    two = R.evaluate_setting_a(cell, score_options=runner.RunOptions(n_jobs=2))
    pd.testing.assert_frame_equal(one, two, check_exact=True)


@pytest.mark.parametrize("tables,classifiers", [(0, 12), (1, 1), (3, 4), (25, 12)])
def test_job_split_covers_every_pair_once(tables, classifiers):
    jobs = R.scoring_jobs(tables, classifiers)
    assert len(jobs) == tables * classifiers
    assert set(jobs) == {(t, c) for t in range(tables) for c in range(classifiers)}


def test_job_split_refuses_negative_counts():
    with pytest.raises(ValueError, match="counts must be >= 0"):
        R.scoring_jobs(-1, 12)


def test_cache_key_does_not_include_score_workers(tmp_path):
    """The cell's cache entry is the same whatever the scoring workers: a second run with other
    workers reads the first run's entry (its records, timings included, come back unchanged)."""
    cell = _tiny_cell(n_models=1, n_tables=1, classifiers=("LogisticRegression", "DecisionTree"))
    first = R.run_cell(cell, cache_dir=tmp_path, score_options=runner.RunOptions(n_jobs=1))
    again = R.run_cell(cell, cache_dir=tmp_path, score_options=runner.RunOptions(n_jobs=2))
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert R.cell_id(cell) == first["cell"].iloc[0]


def test_reused_scores_are_read_not_recomputed(tmp_path, monkeypatch):
    """With ``reuse``, a table scored before is read from the scores cache: no job runs again."""
    data = R.load_dataset("cervical_cancer", None)
    tables = [(data.train, 5)]
    knobs = _tiny_cell().knobs
    first = R.score_tables(tables, data.test, classifiers=PANEL[:2], knobs=knobs, reuse=True, cache_dir=tmp_path)

    def refuse(item):
        raise AssertionError("a cached table was scored again")

    monkeypatch.setattr(R, "_classifier_job", refuse)
    again = R.score_tables(tables, data.test, classifiers=PANEL[:2], knobs=knobs, reuse=True, cache_dir=tmp_path)
    pd.testing.assert_frame_equal(first[0][0], again[0][0], check_exact=True)


@pytest.mark.parametrize("n_jobs,cells,expected", [(16, 1, (1, 16)), (16, 8, (8, 2)), (16, 40, (16, 1)),
                                                   (2, 1, (1, 2)), (1, 5, (1, 1))])
def test_split_workers_gives_idle_workers_to_scoring(n_jobs, cells, expected):
    assert R.split_workers(runner.RunOptions(n_jobs=n_jobs), cells) == expected


def test_split_workers_explicit_and_refused():
    assert R.split_workers(runner.RunOptions(n_jobs=4), 1, score_jobs=3) == (1, 3)
    with pytest.raises(ValueError, match="score_jobs must be"):
        R.split_workers(runner.RunOptions(n_jobs=4), 1, score_jobs=0)
    with pytest.raises(ValueError, match="needs local workers"):
        R.split_workers(runner.RunOptions(n_jobs=4, backend="dask"), 1, score_jobs=2)


def test_a_scoring_run_stopped_mid_cell_keeps_the_tables_it_finished(tmp_path, monkeypatch):
    """Each table's scores reach the cache as soon as its panel is done: a run that stops on the
    third table has cached the first two, and the rerun reads them instead of scoring them again."""
    data = R.load_dataset("cervical_cancer", None)
    tables = [(data.train.sample(frac=1.0, replace=True, random_state=s).reset_index(drop=True), s) for s in (1, 2, 3)]
    knobs = _tiny_cell().knobs
    real = R._classifier_job
    calls = []

    def stops_on_the_third_table(item):
        calls.append(item[1])
        if len(calls) > 2 * len(PANEL):
            raise KeyboardInterrupt("session ended")
        return real(item)

    monkeypatch.setattr(R, "_classifier_job", stops_on_the_third_table)
    with pytest.raises(KeyboardInterrupt):
        R.score_tables(tables, data.test, classifiers=PANEL, knobs=knobs, reuse=True, cache_dir=tmp_path)
    monkeypatch.setattr(R, "_classifier_job", real)
    scored = []
    monkeypatch.setattr(R, "_classifier_job", lambda item: scored.append(item[1]) or real(item))
    again = R.score_tables(tables, data.test, classifiers=PANEL, knobs=knobs, reuse=True, cache_dir=tmp_path)
    assert len(scored) == len(PANEL)  # only the third table is scored again
    for (synth, seed), (frame, _) in zip(tables, again):
        serial = evaluate_table(synth, data.test, classifiers=PANEL, seed=seed, knobs=knobs)
        pd.testing.assert_frame_equal(frame[SCORES], serial[SCORES], check_exact=True)
