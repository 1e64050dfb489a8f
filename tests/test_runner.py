"""Tests of the result cache (resume, atomic writes) and the parallel map (joblib, Dask)."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np

import pytest

from pategan_audit import runner


def square(x: int) -> int:
    return x * x


@pytest.fixture
def cache(tmp_path):
    with runner.using(runner.RunOptions(cache_dir=str(tmp_path / "cache"))):
        yield tmp_path / "cache"


def test_second_call_reads_the_cache(cache):
    calls = []

    def compute():
        calls.append(1)
        return {"value": 42}

    cfg = {"dataset": "cervical_cancer", "epsilon": 1.0}
    assert runner.cached(cfg, compute, namespace="t") == {"value": 42}
    assert runner.cached(cfg, compute, namespace="t") == {"value": 42}
    assert len(calls) == 1
    assert runner.cached({**cfg, "epsilon": 1.0000001}, compute, namespace="t") == {"value": 42}
    assert len(calls) == 2  # a different config is a different entry
    runner.cached(cfg, compute, namespace="t", refresh=True)
    assert len(calls) == 3


def test_entry_records_config_and_source(cache):
    runner.cached({"a": 1}, lambda: 7, namespace="t")
    (path,) = (cache / "t").glob("*.pkl")
    entry = pickle.loads(path.read_bytes())
    assert entry["result"] == 7 and entry["config"] == {"a": 1} and entry["source"] == runner.source_hash()


def test_flushed_denormals_key_other_entries():
    ieee = runner.config_hash({"x": 1}, namespace="n")
    with runner.using(runner.RunOptions.from_env({"PATEGAN_AUDIT_FLUSH_DENORMAL": "0"})):
        assert runner.config_hash({"x": 1}, namespace="n") == ieee  # the default's keys are unchanged
        named = runner.config_hash({"x": 1}, namespace="n", include_source=False)
    with runner.using(runner.RunOptions.from_env({"PATEGAN_AUDIT_FLUSH_DENORMAL": "1"})):
        assert runner.config_hash({"x": 1}, namespace="n") != ieee
        # a configuration's name (a cell's id in an archive) is the same under either arithmetic
        assert runner.config_hash({"x": 1}, namespace="n", include_source=False) == named


def test_a_flushed_run_names_cells_as_the_ieee_runs():
    """The archive decides which cells are done by ``cell_id``; a flushed run must see the IEEE
    runs' cells as done, not recompute finished cells under new ids."""
    from pategan_audit.utility.cells import UtilityCell
    from pategan_audit.utility.run import cell_id

    cell = UtilityCell("cervical_cancer", "synthcity", 50.0)
    ieee = cell_id(cell)
    with runner.using(runner.RunOptions(flush_denormal=True)):
        assert cell_id(cell) == ieee


def test_config_hash_is_stable_and_order_free():
    a = runner.config_hash({"x": 1, "y": [1.0, "b"]}, namespace="n")
    b = runner.config_hash({"y": [1.0, "b"], "x": 1}, namespace="n")
    assert a == b and a != runner.config_hash({"x": 1, "y": [1.0, "b"]}, namespace="other")
    with pytest.raises(TypeError, match="cannot be hashed"):
        runner.config_hash({"f": object()})


def test_an_interrupted_grid_resumes(cache):
    computed = []

    def job(x, fail_at=None):
        def compute():
            if x == fail_at:
                raise KeyboardInterrupt  # the user stops the run in the middle of item 3
            computed.append(x)
            return x * 10
        return runner.cached({"x": x}, compute, namespace="grid")

    with pytest.raises(KeyboardInterrupt):
        [job(x, fail_at=3) for x in range(6)]
    assert computed == [0, 1, 2]
    computed.clear()
    assert [job(x) for x in range(6)] == [0, 10, 20, 30, 40, 50]
    assert computed == [3, 4, 5]  # finished items are read back, the rest computed


def test_a_crash_while_writing_leaves_no_entry_and_no_temp_file(cache, monkeypatch):
    real_fsync = os.fsync

    def crash(fd):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(runner.os, "fsync", crash)
    with pytest.raises(OSError, match="simulated"):
        runner.cached({"a": 1}, lambda: "payload", namespace="t")
    assert list((cache / "t").iterdir()) == []  # neither a truncated entry nor a leftover temp file
    monkeypatch.setattr(runner.os, "fsync", real_fsync)
    calls = []
    assert runner.cached({"a": 1}, lambda: calls.append(1) or "payload", namespace="t") == "payload"
    assert calls == [1]  # recomputed after the failed write


def test_atomic_write_keeps_the_old_file_when_replacing_fails(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    runner.atomic_write_text(target, "old")

    def fail(src, dst):
        raise OSError("rename failed (simulated)")

    monkeypatch.setattr(runner.os, "replace", fail)
    with pytest.raises(OSError):
        runner.atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_an_unreadable_entry_is_recomputed(cache):
    runner.cached({"a": 2}, lambda: 1, namespace="t")
    (path,) = (cache / "t").glob("*.pkl")
    path.write_bytes(b"not a pickle")
    assert runner.cached({"a": 2}, lambda: 2, namespace="t") == 2


def test_lookup_and_store_are_the_two_halves_of_cached(cache):
    # used by the audit's chunks: read which entries exist, compute the rest together, store each
    assert runner.lookup_cached({"m": 1}, namespace="t") == (False, None)
    path = runner.store_cached({"m": 1}, None, namespace="t")
    assert path == runner.cache_path({"m": 1}, namespace="t") and path.exists()
    assert runner.lookup_cached({"m": 1}, namespace="t") == (True, None)  # a stored None is a hit
    assert runner.cached({"m": 1}, lambda: 5, namespace="t") is None  # cached() reads the same entry
    runner.cached({"m": 2}, lambda: 6, namespace="t")
    assert runner.lookup_cached({"m": 2}, namespace="t") == (True, 6)
    path.write_bytes(b"not a pickle")
    assert runner.lookup_cached({"m": 1}, namespace="t") == (False, None)  # unreadable = missing


def test_resolve_jobs(monkeypatch):
    assert runner.resolve_jobs(3) == 3
    monkeypatch.setenv("PATEGAN_AUDIT_JOBS", "5")  # read at an entry point (from_env), not below it
    assert runner.RunOptions.from_env().n_jobs == 5
    assert runner.resolve_jobs(None) == (os.cpu_count() or 1)
    monkeypatch.delenv("PATEGAN_AUDIT_JOBS")
    assert runner.RunOptions.from_env().n_jobs is None


def test_parallel_map_keeps_order_in_process_and_with_joblib():
    items = list(range(7))
    assert runner.parallel_map(square, items, n_jobs=1) == [x * x for x in items]
    assert runner.parallel_map(square, items, n_jobs=2, backend="threading") == [x * x for x in items]
    with pytest.raises(ValueError, match="unknown backend"):
        runner.parallel_map(square, items, n_jobs=2, backend="mpi")


def test_parallel_map_with_loky_processes():
    assert runner.parallel_map(square, range(5), n_jobs=2) == [0, 1, 4, 9, 16]


def slow_square(x):
    import time

    time.sleep(0.3 if x == 0 else 0.0)  # the first item finishes last
    return x * x


def test_parallel_imap_yields_each_result_as_it_finishes():
    items = list(range(6))
    in_process = list(runner.parallel_imap(slow_square, items, n_jobs=1))
    assert in_process == [(i, i * i) for i in items]  # in-process: in order
    unordered = list(runner.parallel_imap(slow_square, items, n_jobs=2, backend="threading"))
    assert sorted(unordered) == in_process and unordered[-1] == (0, 0)  # the slow first item comes last
    ordered = list(runner.parallel_imap(slow_square, items, n_jobs=2, backend="threading", ordered=True))
    assert ordered == in_process
    assert sorted(runner.run_imap(slow_square, items, runner.RunOptions(n_jobs=2, progress=False))) == in_process


def test_dask_backend_gives_the_joblib_result():
    distributed = pytest.importorskip("distributed")
    items = list(range(9))
    expected = runner.parallel_map(square, items, n_jobs=2)  # joblib, loky processes
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            got = runner.parallel_map(square, items, n_jobs=2, backend="dask")
    assert got == expected


def test_dask_without_a_cluster_says_how_to_give_one():
    distributed = pytest.importorskip("distributed")
    with pytest.raises(ValueError):
        distributed.get_client()  # no client in this process
    with pytest.raises(ValueError, match="needs a Dask cluster.*scheduler="):
        runner.parallel_map(square, range(3), n_jobs=2, backend="dask")


def test_dask_scheduler_address_connects_for_the_call():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        opts = runner.RunOptions(n_jobs=2, backend="dask", scheduler=cluster.scheduler_address)
        assert runner.run_map(square, range(4), opts) == [0, 1, 4, 9]


# -- RunOptions: how a computation runs, one frozen value ------------------------------------------

def test_run_options_are_frozen_and_validated():
    opts = runner.RunOptions(n_jobs=2, backend="loky", cache_dir=Path("cache") / "x", progress="cells")
    assert opts.cache_dir == str(Path("cache") / "x") and opts.label("default") == "cells"
    with pytest.raises(Exception):
        opts.n_jobs = 3  # frozen
    assert runner.RunOptions(progress=True).label("shadow models") == "shadow models"
    assert runner.RunOptions().label("shadow models") is None
    with pytest.raises(ValueError, match="backend"):
        runner.RunOptions(backend="mpi")
    with pytest.raises(ValueError, match="needs backend='dask'"):
        runner.RunOptions(scheduler="tcp://host:8786")
    with pytest.raises(ValueError, match="n_jobs"):
        runner.RunOptions(n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs"):
        runner.RunOptions(n_jobs=True)


def test_run_options_default_to_the_options_in_force():
    base = runner.RunOptions(n_jobs=1)
    assert runner.RunOptions.defaulted(base, n_jobs=3) is base
    assert runner.RunOptions.defaulted(None, n_jobs=3) == runner.RunOptions(n_jobs=3)
    outer = runner.RunOptions(n_jobs=4, backend="threading", progress="x", cache_dir="c", train_threads=2)
    with runner.using(outer):  # a nested computation keeps the arithmetic and folders, not the map
        assert runner.RunOptions.defaulted(None, progress=True) == runner.RunOptions(cache_dir="c", train_threads=2,
                                                                                     progress=True)
    with pytest.raises(TypeError, match="RunOptions"):
        runner.RunOptions.defaulted({"n_jobs": 1})


def test_run_map_uses_the_options():
    opts = runner.RunOptions(n_jobs=2, backend="threading")
    assert runner.run_map(square, range(5), opts) == [0, 1, 4, 9, 16]
    assert runner.run_map(square, range(3), runner.RunOptions(n_jobs=1), label="x") == [0, 1, 4]


# -- describe_for_cache: how factories and featurisers enter cache keys ----------------------------

def test_describe_for_cache():
    from pategan_audit.auditing.featurisers import QueryFeaturiser
    from pategan_audit.implementations.factory import PresetFactory

    assert runner.describe_for_cache(QueryFeaturiser())["class"] == "pategan_audit.auditing.featurisers.QueryFeaturiser"
    assert runner.describe_for_cache(square) == "tests.test_runner.square"
    # PresetFactory keeps the class path it had in auditing.settings (cached keys stay valid)
    desc = runner.describe_for_cache(PresetFactory("borealis", overrides={"lam": np.float64(1e-3)}))
    assert desc == {"class": "pategan_audit.auditing.settings.PresetFactory",
                    "fields": {"name": "borealis", "epsilon": 1.0, "delta": 1e-5, "overrides": {"lam": 1e-3}}}
    assert type(desc["fields"]["overrides"]["lam"]) is float
    with pytest.raises(ValueError, match="cannot describe"):
        runner.describe_for_cache(lambda s: s)
