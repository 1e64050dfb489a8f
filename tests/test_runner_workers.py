"""The parallel map's workers (issue #37): every path runs a job in the same thread configuration,
so the worker count never changes a number; the training thread count keys other cache entries;
and a loky worker does not outlive the process that started it."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
from threadpoolctl import threadpool_info, threadpool_limits

from pategan_audit import runner


def thread_config(_: int) -> tuple[int, list[int]]:
    return torch.get_num_threads(), sorted({int(i["num_threads"]) for i in threadpool_info()})


@contextlib.contextmanager
def caller_threads(n: int):
    """The calling process with ``n`` torch and BLAS threads, as a notebook kernel has by default
    (the suite's conftest pins this process to one thread, which would hide the difference)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(n):
            yield
    finally:
        torch.set_num_threads(before)


def test_every_path_runs_jobs_with_one_torch_and_one_blas_thread():
    with caller_threads(2):
        in_process = runner.parallel_map(thread_config, range(2), n_jobs=1)
        threaded = runner.parallel_map(thread_config, range(2), n_jobs=2, backend="threading")
        pool = runner.parallel_map(thread_config, range(2), n_jobs=2)
        assert thread_config(0) == (2, [2])  # the caller's own configuration is given back
    assert in_process == threaded == pool == [(1, [1])] * 2


def test_training_threads_key_other_cache_entries():
    variable = runner.ENV["train_threads"]
    default = runner.config_hash({"x": 1}, namespace="n")
    with runner.using(runner.RunOptions.from_env({variable: "1"})):
        assert runner.config_hash({"x": 1}, namespace="n") == default  # the default's keys are unchanged
        name = runner.config_hash({"x": 1}, namespace="n", include_source=False)
    with runner.using(runner.RunOptions.from_env({variable: "2"})):
        assert runner.config_hash({"x": 1}, namespace="n") != default
        assert runner.config_hash({"x": 1}, namespace="n", include_source=False) == name  # a cell's id stays
        assert runner.execution_info(None, 1)["train_threads"] == 2
    for bad in ("two", "0", "-1"):
        with pytest.raises(ValueError, match="PATEGAN_AUDIT_TRAIN_THREADS"):
            runner.RunOptions.from_env({variable: bad})


def test_execution_info_of_the_local_backends():
    assert runner.execution_info(None, 1) == {"backend": "in-process", "n_jobs": 1, "scheduler": None, "workers": 1,
                                              "threads": 1, "job_threads": 1, "train_threads": 1}
    assert runner.execution_info("loky", 2) | {"backend": "loky", "workers": 2, "threads": 2} == runner.execution_info("loky", 2)
    assert runner.execution_info("sequential", 4)["backend"] == "in-process"
    with pytest.raises(ValueError, match="needs backend='dask'"):
        runner.execution_info("loky", 2, "tcp://127.0.0.1:8786")


@pytest.mark.slow
def test_utility_numbers_do_not_depend_on_the_worker_count(tmp_path):
    """Setting A on Epileptic (its logistic regression moved in the 6th digit when the one-worker
    path ran with the caller's threads) and a smoke-sized Setting B cell, with 1 and 2 workers."""
    from pategan_audit.utility.cells import SettingACell, UtilityCell
    from pategan_audit.utility.run import run_cells

    cells = [SettingACell("epileptic_seizure", classifiers=("LogisticRegression", "LinearSVM"), mlp_max_iter=50, xgb_n_jobs=1),
             UtilityCell("epileptic_seizure", "smartnoise", 1.0, max_iter=5, subsample=100, mlp_max_iter=50, xgb_n_jobs=1,
                         classifiers=("LogisticRegression", "MLP"))]
    runs = {}
    for n_jobs in (1, 2):
        options = runner.RunOptions(n_jobs=n_jobs, cache_dir=str(tmp_path / f"jobs{n_jobs}"), progress=False)
        with caller_threads(2):
            runs[n_jobs] = run_cells(cells, options=options).drop(columns=["fit_seconds", "eval_seconds"])
    assert runs[1]["auroc"].notna().any()
    pd.testing.assert_frame_equal(runs[1], runs[2], check_exact=True)


@pytest.mark.slow
def test_audit_numbers_do_not_depend_on_the_worker_count():
    """The smoke audit of one preset with 1 and 3 workers (3 also cuts the shadow models into other
    chunks of the replica axis): the same released tables, hence the same attack and bounds."""
    from pategan_audit.auditing.audit import make_settings, run_settings
    from pategan_audit.auditing.profiles import get_profile

    profile = get_profile("smoke")
    settings = make_settings(profile, attacks=("querybased",), implementations=("updated",))
    runs = {}
    for n_jobs in (1, 3):
        with caller_threads(2):
            runs[n_jobs] = run_settings(settings, profile, options=runner.RunOptions(n_jobs=n_jobs),
                                        cache_namespace=None)
    timing = [c for c in runs[1].columns if c.endswith("_seconds")]
    pd.testing.assert_frame_equal(runs[1].drop(columns=timing), runs[3].drop(columns=timing), check_exact=True)


_LONG_MAP = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from pategan_audit import runner

    def hold(i):
        Path(sys.argv[1], str(os.getpid())).write_text(str(i))
        time.sleep(300)
        return i

    if __name__ == "__main__":
        runner.parallel_map(hold, range(2), n_jobs=2)
""")


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a reused pid of another user
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return not sys.platform.startswith("linux")


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGKILL are POSIX")
def test_loky_workers_exit_when_their_parent_is_killed(tmp_path):
    script = tmp_path / "long_map.py"
    script.write_text(_LONG_MAP)
    marks = tmp_path / "started"
    marks.mkdir()
    proc = subprocess.Popen([sys.executable, str(script), str(marks)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            workers = [int(p.name) for p in marks.iterdir()]
        assert len(workers) == 2, f"the two jobs did not start (exit code {proc.poll()})"
        assert proc.pid not in workers  # they run in loky workers, not in the map's process
        os.kill(proc.pid, signal.SIGKILL)  # the process group leader, as a killed kernel
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _running(pid)], "loky workers outlived their parent"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in workers:  # never leave a stray worker behind, whatever the outcome
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _warn_and_count(_):
    """A job that emits a ConstantColumnWarning and says how many warnings got through its filters."""
    import warnings as w

    from pategan_audit.implementations.base import ConstantColumnWarning

    with w.catch_warnings(record=True) as seen:
        w.warn("a constant column", ConstantColumnWarning)
        w.warn("something else", RuntimeWarning)
    return [type(x.message).__name__ for x in seen]


def test_a_warning_the_caller_ignores_stays_silent_in_the_workers():
    """A page silences expected notices (display.QUIET_WARNINGS); a job sent to a loky worker takes
    the caller's ``ignore`` filters with it, so the book does not print them once per worker; other
    warnings still come through."""
    import warnings

    from pategan_audit.implementations.base import ConstantColumnWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "", ConstantColumnWarning)
        quiet = runner.parallel_map(_warn_and_count, [0, 1], n_jobs=2)
    loud = runner.parallel_map(_warn_and_count, [0, 1], n_jobs=2)
    assert quiet == [["RuntimeWarning"]] * 2
    assert loud == [["ConstantColumnWarning", "RuntimeWarning"]] * 2
