"""Sweep cells held by the cap at a smaller ε (``pategan_audit.utility.twins``)."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from pategan_audit import archive
from pategan_audit import utility as U
from pategan_audit.utility import twins
from pategan_audit.utility import archives as utility_archives
from pategan_audit.utility import run as R
from pategan_audit.utility.cells import UtilityCell

PANEL = ("LogisticRegression", "DecisionTree")


@pytest.fixture
def cache(tmp_path, monkeypatch, use_cache):
    use_cache(tmp_path / "cache")
    return tmp_path / "cache"


def _cell(implementation="borealis", epsilon=5.0, **kw):
    base = dict(dataset="cervical_cancer", implementation=implementation, epsilon=epsilon, n_models=1, n_tables=1,
                classifiers=PANEL, max_iter=2)
    return UtilityCell(**{**base, **kw})


def test_the_set_is_exactly_the_presets_whose_tables_do_not_move_with_epsilon():
    """Every preset, as the utility harness builds it, trained by the archive's own batched fit
    at ε = 5 and ε = 50 to a cap of 3 iterations (which neither budget stops): the tables are
    identical exactly for :data:`twins.EPSILON_STOPS_ONLY` (original and turing: ε sets σ;
    gnmax: ε sets its noise and its queries)."""
    cervical = R.load_dataset("cervical_cancer", None)
    same = {}
    for impl in sorted(archive.SWEEP_PRESETS):
        drawn = []
        for eps in (5.0, 50.0):
            cell = _cell(impl, eps, max_iter=3)
            factory = R._default_factory(cell, R.resolve_teachers(cell, len(cervical.train)), cervical)
            models = factory.fit_many(cervical.train, [11, 12], label=cervical.label)
            drawn.append([(m.trace.iterations, R.table_digest(m.sample(60, seed=3))) for m in models])
        same[impl] = drawn[0] == drawn[1]
    assert {i for i, s in same.items() if s} == twins.EPSILON_STOPS_ONLY
    assert twins.EPSILON_STOPS_ONLY < set(archive.SWEEP_PRESETS)


def test_held_by_cap_needs_every_model_trained_to_the_cap():
    ok = pd.DataFrame({"status": ["ok", "ok"], "iterations": [2, 2]})
    assert twins.held_by_cap(ok, 2) and not twins.held_by_cap(ok, 3)
    assert not twins.held_by_cap(ok.assign(iterations=[2, 1]), 2)
    assert not twins.held_by_cap(ok.assign(status=["ok", "not_trained"]), 2)
    assert not twins.held_by_cap(ok.assign(iterations=[2, np.nan]), 2)
    assert not twins.held_by_cap(ok.iloc[:0], 2)


def test_eligibility_and_the_twins_searched():
    assert twins.eligible(_cell("updated"))
    assert not twins.eligible(_cell("turing")) and not twins.eligible(_cell("gnmax"))
    assert not twins.eligible(_cell(overrides={"lam": 0.01}))  # a variant may move ε elsewhere
    assert not twins.eligible(_cell(max_iter=None))
    assert [c.epsilon for c in twins.smaller_twins(_cell(epsilon=1.0))] == [0.5, 0.1, 0.05, 0.01]
    assert twins.smaller_twins(_cell(epsilon=0.01)) == []


def test_a_cell_whose_twin_the_cap_held_takes_its_records_without_training(cache, monkeypatch):
    calls = []
    real = R.evaluate_cell
    monkeypatch.setattr(R, "evaluate_cell", lambda cell, **kw: calls.append(cell.epsilon) or real(cell, **kw))
    five = R.run_cell(_cell(epsilon=5.0))
    assert calls == [5.0] and twins.held_by_cap(five, 2)
    fifty = R.run_cell(_cell(epsilon=50.0))  # the ε = 10 twin is not there; ε = 5 is
    assert calls == [5.0]
    cols = ["model", "table", "classifier", "auroc", "auprc", "iterations", "single_class"]
    pd.testing.assert_frame_equal(five[cols], fifty[cols])
    assert (fifty["epsilon"] == 50.0).all() and (fifty["same_as_epsilon"] == 5.0).all()
    assert set(fifty["cell"]) == {R.cell_id(_cell(epsilon=50.0))} and fifty["fit_seconds"].isna().all()
    assert five["same_as_epsilon"].isna().all()
    # and it is what training would have given
    trained = R.evaluate_cell(_cell(epsilon=50.0))
    pd.testing.assert_frame_equal(trained[cols], fifty[cols])
    # refresh trains; a preset where ε sets the noise trains; a twin the budget stopped does not count
    R.run_cell(_cell(epsilon=50.0), refresh=True)
    R.run_cell(_cell("turing", 5.0))
    R.run_cell(_cell("turing", 10.0))
    low = R.run_cell(_cell(epsilon=0.01))
    assert not twins.held_by_cap(low, 2)
    R.run_cell(_cell(epsilon=0.05))
    assert calls == [5.0, 50.0, 50.0, 5.0, 10.0, 0.01, 0.05]


def test_from_twin_refuses_what_it_cannot_vouch_for(cache):
    five = R.run_cell(_cell(epsilon=5.0))
    with pytest.raises(ValueError, match="overrides"):
        twins.from_twin(_cell("turing", 10.0), five)
    with pytest.raises(ValueError, match="smaller ε"):
        twins.from_twin(_cell(epsilon=1.0), five)
    with pytest.raises(ValueError, match="ε only"):
        twins.from_twin(_cell(epsilon=10.0, seed=3), five)
    with pytest.raises(ValueError, match="cap"):
        twins.from_twin(_cell(epsilon=10.0), five.assign(iterations=1))


def test_an_archive_copies_a_twin_an_earlier_session_archived(tmp_path, cache, monkeypatch, use_cache):
    """The twin is in the archive's records, not in this work tree's cache (a new session)."""
    cells = [_cell(epsilon=5.0), _cell(epsilon=10.0), _cell("turing", 10.0)]
    run = utility_archives.cells_archive(lambda profile_name: cells, "twins")
    done, _ = run("smoke", 1, None, done=None, only=["borealis"])  # ε = 5 trains; ε = 10 from the cache
    assert done.groupby("cell")["same_as_epsilon"].first().notna().sum() == 1
    first = done[done["epsilon"] == 5.0]
    use_cache(tmp_path / "fresh")
    sent = []
    real = U.iter_cells
    monkeypatch.setattr(utility_archives, "iter_cells", lambda todo, *a, **k: sent.append(list(todo)) or real(todo, *a, **k))
    records, meta = run("smoke", 1, None, done=first.reset_index(drop=True))
    assert [c.implementation for c in sent[0]] == ["turing"]  # only turing went to a worker
    copied = records[records["epsilon"] == 10.0]
    assert set(copied.loc[copied["implementation"] == "borealis", "same_as_epsilon"]) == {5.0}
    assert meta["settings_done"] == 3


def test_a_cell_waits_while_another_worker_computes_its_twin(cache, monkeypatch):
    """Two workers: ε = 10 starts while ε = 5 is being computed elsewhere; it waits, then copies."""
    import os

    five, ten = _cell(epsilon=5.0), _cell(epsilon=10.0)
    marker = R._running_path(five, None)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(R._process_tag(os.getppid()))  # a live process other than this one
    monkeypatch.setattr(R.time, "sleep", lambda s: None)
    polls = []
    real_exists = type(marker).exists

    def exists(path):
        if path == marker:
            polls.append(1)
            if len(polls) == 3:  # the other worker finishes: its entry is stored, its marker removed
                R.run_cell(five)
                marker.unlink(missing_ok=True)
        return real_exists(path)

    monkeypatch.setattr(type(marker), "exists", exists)
    got = R.run_cell(ten)
    assert len(polls) >= 3 and (got["same_as_epsilon"] == 5.0).all()
    # a stale marker (no such process) is not waited on
    monkeypatch.setattr(type(marker), "exists", real_exists)
    stale = R._running_path(_cell(epsilon=0.5), None)
    stale.write_text(R._process_tag(999999999))
    R._wait_while_running(_cell(epsilon=0.5), None)
    stale.write_text(f"{os.getppid()} another-boot")  # a live pid, but the marker is from an earlier boot
    R._wait_while_running(_cell(epsilon=0.5), None)


def test_a_computing_cell_announces_itself_and_cleans_up(cache, monkeypatch):
    seen = []
    real = R.evaluate_cell

    def spy(cell, **kw):
        seen.append(R._running_path(cell, None).read_text())
        return real(cell, **kw)

    monkeypatch.setattr(R, "evaluate_cell", spy)
    R.run_cell(_cell(epsilon=5.0))
    import os
    assert seen == [R._process_tag(os.getpid())] and not R._running_path(_cell(epsilon=5.0), None).exists()
