"""Suite-wide setup: one torch/BLAS thread per test process, and each test starts from the
process's default run options.

Torch's default of one thread per core makes the many tiny networks of these tests much
slower on a 2-core machine under load (measured: 11 s vs 47 s for the preset tests). A test that
runs an entry point (the archive CLI, a notebook's first cell) activates the environment's run
options for the whole process (``runner.activate``); the fixture below puts the previous ones
back, so that no test sees another's (CI sets ``PATEGAN_AUDIT_JOBS``)."""
from dataclasses import replace

import pytest

from pategan_audit import runner
from pategan_audit.runner import single_thread

single_thread()


@pytest.fixture(autouse=True)
def _process_run_options():
    before = runner.current_options()
    yield
    runner.activate(before)


@pytest.fixture
def use_cache():
    """``use_cache(folder)`` gives the test its own result cache, activated as an entry point
    would activate its run options (the fixture above puts the previous ones back)."""
    def use(folder):
        runner.activate(runner.RunOptions(cache_dir=str(folder)))
        return folder
    return use


@pytest.fixture
def use_archive(monkeypatch):
    """``use_archive(folder)`` makes ``folder`` the test's archive folder as an entry point would:
    the run option ``archive_dir`` in force, and ``$PATEGAN_AUDIT_ARCHIVE`` for the entry points the
    test runs (the archive command reads it once, as it starts)."""
    def use(folder):
        monkeypatch.setenv("PATEGAN_AUDIT_ARCHIVE", str(folder))
        runner.activate(replace(runner.current_options(), archive_dir=str(folder)))
        return folder
    return use
