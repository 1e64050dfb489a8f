"""The Dask backend really distributes (issue #37): against a real ``dask scheduler`` and worker
processes on 127.0.0.1, the jobs run in the workers, never in the client, and give the local
backend's results; a cluster of one thread is announced (it runs one job at a time)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from pategan_audit import runner

distributed = pytest.importorskip("distributed", reason="the Dask backend needs the dask extra: pip install 'pategan-audit[dask]'")

ROOT = Path(__file__).resolve().parents[1]  # the workers import this module (tests.test_runner_dask) from here
START_SECONDS = 60


def square_and_pid(x: int) -> tuple[int, int]:
    time.sleep(0.2)  # long enough for the scheduler to spread the jobs over both workers
    return x * x, os.getpid()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and ``--no-nanny`` worker processes (one thread each) started by the test."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
        self.scheduler = self._start("scheduler", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                     "--port", self.address.rsplit(":", 1)[1], "--no-dashboard")
        self.workers: list[subprocess.Popen] = []
        self.client = distributed.Client(self.address, timeout=START_SECONDS)

    def _start(self, name: str, module: str, *args: str) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "wb")
        return subprocess.Popen([sys.executable, "-m", module, *args], stdout=log, stderr=subprocess.STDOUT,
                                env=self.env, cwd=self.folder)

    def with_workers(self, n: int) -> set[int]:
        """Exactly ``n`` workers connected; their pids."""
        while len(self.workers) < n:
            self.workers.append(self._start(f"worker{len(self.workers)}", "distributed.cli.dask_worker", self.address,
                                            "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                            "--local-directory", str(self.folder)))
        while len(self.workers) > n:
            self.workers.pop().terminate()
        deadline = time.monotonic() + START_SECONDS
        while len(self.client.nthreads()) != n:
            assert time.monotonic() < deadline, f"the cluster did not reach {n} workers; see {self.folder}/*.log"
            time.sleep(0.2)
        return set(self.client.run(os.getpid).values())

    def stop(self) -> None:
        self.client.close()
        for proc in [*self.workers, self.scheduler]:
            proc.terminate()
        for proc in [*self.workers, self.scheduler]:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # a graceful close is not what this test is about
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield c
    finally:
        c.stop()


def test_jobs_run_in_the_worker_processes_with_the_local_results(cluster):
    workers = cluster.with_workers(2)
    items = list(range(8))
    local = runner.parallel_map(square_and_pid, items, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # two threads: no warning
        got = runner.parallel_map(square_and_pid, items, n_jobs=2, backend="dask", scheduler=cluster.address)
        unordered = list(runner.run_imap(square_and_pid, items,
                                         runner.RunOptions(n_jobs=2, backend="dask", scheduler=cluster.address)))
    assert [r[0] for r in got] == [r[0] for r in local]
    assert {r[1] for r in got} == workers and os.getpid() not in workers  # both workers, never the client
    assert sorted((i, r[0]) for i, r in unordered) == [(i, x * x) for i, x in enumerate(items)]
    info = runner.execution_info("dask", 2, cluster.address)
    assert (info["backend"], info["scheduler"], info["workers"], info["threads"]) == ("dask", cluster.address, 2, 2)


def test_a_one_thread_cluster_is_announced_and_runs_on_its_worker(cluster):
    (worker,) = cluster.with_workers(1)  # after the two-worker test: one of its workers stops
    with pytest.warns(RuntimeWarning, match="offers one thread"):
        got = runner.parallel_map(square_and_pid, range(4), n_jobs=2, backend="dask", scheduler=cluster.address)
    # joblib's Dask backend ran these in the client (one thread in the cluster): here the worker does
    assert [r[0] for r in got] == [0, 1, 4, 9]
    assert {r[1] for r in got} == {worker} and worker != os.getpid()
