"""One run-options object (``runner.RunOptions``), read from the environment once at the entry
points and passed down to every job: nothing below the entry points reads a ``PATEGAN_AUDIT_*``
variable, nothing writes ``os.environ`` to reach workers, and the settings that keyed cache entries
key exactly the same entries."""
from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
from pathlib import Path

import pytest

from pategan_audit import runner

PACKAGE = Path(runner.__file__).resolve().parent

#: Entry-point modules: they read their own variables (the Sphinx hook: PATEGAN_AUDIT_PROFILE/FORCE).
ENTRY_MODULES = {"pages/bookhook.py"}

#: (module, function) allowed to touch ``os.environ``/``os.getenv``, and why. Everything else in
#: the package reads its settings from the run options in force (``runner.current_options``).
ALLOWED = {
    ("runner.py", "RunOptions.from_env"): "the one reader of the PATEGAN_AUDIT_* run variables (entry points call it)",
    ("runner.py", "single_thread"): "one BLAS/OpenMP thread in this process itself (OMP_NUM_THREADS etc.)",
}


def _environment_uses(path: Path) -> list[tuple[str, int, str]]:
    """``(enclosing function, line, source)`` of every ``os.environ``/``os.getenv``/``environ``
    use in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, scope + [child.name])
                continue
            is_os_attr = (isinstance(child, ast.Attribute) and child.attr in ("environ", "getenv", "putenv", "unsetenv")
                          and isinstance(child.value, ast.Name) and child.value.id == "os")
            imported = isinstance(child, ast.ImportFrom) and child.module == "os" and any(
                a.name in ("environ", "getenv", "putenv") for a in child.names)
            if is_os_attr or imported:
                found.append((".".join(scope) or "<module>", child.lineno, ast.get_source_segment(path.read_text(), child)))
            visit(child, scope)

    visit(tree, [])
    return found


def test_nothing_below_the_entry_points_reads_or_writes_the_environment():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        for scope, line, source in _environment_uses(path):
            if (module, scope) not in ALLOWED and module not in ENTRY_MODULES:
                offenders.append(f"{module}:{line} in {scope}: {source}")
    assert not offenders, ("the environment is read only at the entry points (RunOptions.from_env); "
                           "take the value from runner.current_options() or an options argument:\n" + "\n".join(offenders))


def test_the_allowed_readers_still_exist():
    """An allowance whose function moved or went away is stale: the list must say what is true."""
    uses = {(str(p.relative_to(PACKAGE)), scope) for p in PACKAGE.rglob("*.py") for scope, _, _ in _environment_uses(p)}
    assert set(ALLOWED) <= uses, sorted(set(ALLOWED) - uses)


def test_no_module_writes_the_environment_to_reach_workers():
    writes = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            target = None
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                target = next((t for t in targets if isinstance(t, ast.Subscript) and "os.environ" in ast.unparse(t.value)), None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("pop", "setdefault", "update", "clear") and ast.unparse(node.func.value) == "os.environ":
                target = node
            if target is not None:
                writes.append((str(path.relative_to(PACKAGE)), ast.unparse(target)))
    # single_thread limits BLAS in its own process (and children it might start); it is no channel to workers
    assert all(module == "runner.py" and "os.environ[var]" in what for module, what in writes), writes


def test_from_env_reads_every_run_variable_once_with_clear_errors():
    env = {"PATEGAN_AUDIT_JOBS": "3", "PATEGAN_AUDIT_CACHE": "c", "PATEGAN_AUDIT_DEVICE": "cpu",
           "PATEGAN_AUDIT_TRAIN_THREADS": "2", "PATEGAN_AUDIT_FLUSH_DENORMAL": "yes",
           "PATEGAN_AUDIT_SOLVER_REPLICAS": "4", "PATEGAN_AUDIT_SNAPSHOTS": "s",
           "PATEGAN_AUDIT_CHECKPOINT_SECONDS": "30", "PATEGAN_AUDIT_SOURCE_HASH": "pinned",
           "PATEGAN_AUDIT_DATA": "d", "PATEGAN_AUDIT_ARCHIVE": "a", "PATEGAN_AUDIT_CREDIT_CSV": "creditcard.csv"}
    assert set(env) == set(runner.ENV.values())
    options = runner.RunOptions.from_env(env)
    assert options == runner.RunOptions(n_jobs=3, cache_dir="c", device="cpu", train_threads=2, flush_denormal=True,
                                        solver_replicas=4, snapshots="s", checkpoint_seconds=30.0, source_hash="pinned",
                                        data_dir="d", archive_dir="a", credit_csv="creditcard.csv")
    assert runner.RunOptions.from_env({}) == runner.RunOptions()
    assert runner.RunOptions.from_env(env, n_jobs=1, cache_dir=None).n_jobs == 1  # given keywords win; None gives way
    assert runner.RunOptions.from_env(env, cache_dir=None).cache_dir == "c"
    for name, bad in (("PATEGAN_AUDIT_JOBS", "all"), ("PATEGAN_AUDIT_TRAIN_THREADS", "0"),
                      ("PATEGAN_AUDIT_FLUSH_DENORMAL", "sometimes"), ("PATEGAN_AUDIT_SOLVER_REPLICAS", "-2"),
                      ("PATEGAN_AUDIT_CHECKPOINT_SECONDS", "soon"), ("PATEGAN_AUDIT_DEVICE", "nowhere")):
        with pytest.raises(ValueError, match=rf"\${name}='{bad}'"):
            runner.RunOptions.from_env({name: bad})


def test_settings_below_the_entry_points_come_from_the_options_not_the_environment(monkeypatch):
    from pategan_audit.implementations.base import flush_denormal_requested
    from pategan_audit.implementations.many import resolve_device
    from pategan_audit.replicas import checkpoint, stack

    for name, value in (("PATEGAN_AUDIT_TRAIN_THREADS", "3"), ("PATEGAN_AUDIT_FLUSH_DENORMAL", "1"),
                        ("PATEGAN_AUDIT_DEVICE", "meta"), ("PATEGAN_AUDIT_SOLVER_REPLICAS", "7"),
                        ("PATEGAN_AUDIT_CHECKPOINT_SECONDS", "5"), ("PATEGAN_AUDIT_CACHE", "elsewhere"),
                        ("PATEGAN_AUDIT_SOURCE_HASH", "pinned"), ("PATEGAN_AUDIT_DATA", "nodata"),
                        ("PATEGAN_AUDIT_ARCHIVE", "noarchive"), ("PATEGAN_AUDIT_CREDIT_CSV", "nocredit.csv")):
        monkeypatch.setenv(name, value)
    from pategan_audit import archive_store, datasets
    # no entry point read them: the defaults hold
    assert runner.train_threads() == 1 and not flush_denormal_requested() and str(resolve_device()) == "cpu"
    assert stack.solver_replicas(k=10, rows=100, width=50) == 1 and checkpoint.default_every() == 600.0
    assert runner.cache_dir() == runner.REPO_ROOT / "results" / "cache" and runner.source_hash() != "pinned"
    assert datasets.data_dir() == datasets.DATA_DIR and archive_store.archive_dir() == runner.REPO_ROOT / "results" / "archive"
    assert not datasets.credit_rows()[1]  # the bundled split
    with runner.using(runner.RunOptions.from_env()):  # what an entry point does
        assert runner.train_threads() == 3 and flush_denormal_requested() and str(resolve_device()) == "meta"
        assert stack.solver_replicas(k=10, rows=100, width=50) == 7 and checkpoint.default_every() == 5.0
        assert runner.cache_dir() == Path("elsewhere") and runner.source_hash() == "pinned"
        assert datasets.data_dir() == Path("nodata") and archive_store.archive_dir() == Path("noarchive")
        with pytest.raises(datasets.DataError, match="nocredit.csv does not exist.*credit_csv"):
            datasets.credit_rows()


def test_the_full_credit_file_keys_other_cache_entries(tmp_path):
    """The full Kaggle file gives other data than the bundled split: a cell computed on one is
    never read back for the other (the default's keys are those the committed caches have)."""
    config = {"dataset": "credit", "epsilon": 1.0}
    plain = runner.config_hash(config, namespace="utility")
    with runner.using(runner.RunOptions(credit_csv=str(tmp_path / "creditcard.csv"))):
        full = runner.config_hash(config, namespace="utility")
        named = runner.config_hash(config, namespace="utility", include_source=False)
    assert full != plain and named == runner.config_hash(config, namespace="utility", include_source=False)


def _job_view(_: int) -> dict:
    """What a job sees: the options in force and the threads/flushing training runs under."""
    import torch

    from pategan_audit.implementations.base import training_threads

    with training_threads():
        threads, flushing = torch.get_num_threads(), (torch.tensor([1e-39]) * 0.5).item() == 0.0
    return {"options": runner.current_options(), "threads": threads, "flushing": flushing, "pid": os.getpid(),
            "variables": sorted(k for k in os.environ if k.startswith("PATEGAN_AUDIT_"))}


@pytest.mark.parametrize("backend", ["loky", "threading", "sequential"])
def test_jobs_receive_the_options_and_apply_threads_and_flushing(backend, monkeypatch):
    # a loky worker started by an earlier test keeps the environment it was started with (CI sets
    # PATEGAN_AUDIT_JOBS for the whole run): nothing beyond that may reach it
    inherited = sorted(k for k in os.environ if k.startswith("PATEGAN_AUDIT_"))
    for name in runner.ENV.values():
        monkeypatch.delenv(name, raising=False)
    options = runner.RunOptions(n_jobs=2 if backend != "sequential" else 1, backend=backend, train_threads=2,
                                flush_denormal=True, snapshots="snap")
    views = runner.run_map(_job_view, range(2), options)
    assert not [k for k in os.environ if k.startswith("PATEGAN_AUDIT_")]  # nothing went through the environment
    for view in views:
        assert view["options"] == options and view["threads"] == 2 and view["flushing"]
        assert set(view["variables"]) <= set(inherited)
    if backend == "loky":
        assert {v["pid"] for v in views} != {os.getpid()}  # the options were pickled to other processes
    assert runner.current_options() == runner.RunOptions()  # the caller's own options are untouched


def _old_key(config, namespace: str, *, threads: int, flush: bool, source: str) -> str:
    """The cache-key formula the committed caches were keyed with, written out: the source, and
    the training threads and denormal flushing only when not at their defaults."""
    payload = {"namespace": namespace, "config": runner._jsonable(config), "source": source}
    if flush:
        payload["flush_denormal"] = True
    if threads != 1:
        payload["train_threads"] = threads
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


@pytest.mark.parametrize("threads, flush", [(1, False), (2, False), (1, True), (4, True)])
def test_cache_keys_are_those_the_environment_gave(threads, flush):
    config = {"dataset": "cervical_cancer", "epsilon": 1.0}
    env = {"PATEGAN_AUDIT_TRAIN_THREADS": str(threads), "PATEGAN_AUDIT_FLUSH_DENORMAL": str(int(flush)),
           "PATEGAN_AUDIT_SOURCE_HASH": "pinned0000000000"}
    with runner.using(runner.RunOptions.from_env(env)):
        assert runner.config_hash(config, namespace="utility") == _old_key(config, "utility", threads=threads, flush=flush,
                                                                            source="pinned0000000000")
        named = runner.config_hash(config, namespace="utility", include_source=False)
    assert named == runner.config_hash(config, namespace="utility", include_source=False)  # ids ignore the arithmetic


def test_experiment_functions_take_an_options_keyword_and_no_catch_all():
    from pategan_audit.auditing import audit, game, targets
    from pategan_audit.traces import compute_traces
    from pategan_audit.utility import run

    d_out = d_in = None
    with pytest.raises(TypeError, match="n_job"):
        game.run_game(None, d_out, d_in, n_per_world=1, featurise=None, n_job=1)
    with pytest.raises(TypeError, match="options must be a RunOptions"):
        compute_traces("smoke", options={"n_jobs": 1})
    for fn in (audit.audit_generator, audit.run_setting, audit.run_settings, audit.run_calibration, game.run_game,
               targets.select_target, compute_traces, run.run_cells):
        params = inspect.signature(fn).parameters
        assert "options" in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()), fn.__name__


def test_old_run_keywords_are_gone_from_the_experiment_functions():
    """The legacy keyword shims are removed: ``n_jobs=`` / ``backend=`` given to an experiment
    function is Python's own TypeError; run settings travel only as ``options=RunOptions(...)``."""
    from pategan_audit.auditing import audit
    from pategan_audit.utility import run_cells

    with pytest.raises(TypeError):
        run_cells([], n_jobs=2)
    with pytest.raises(TypeError):
        audit.run_settings([], None, backend="loky")


def test_the_book_build_keys_notebooks_under_the_run_variables(tmp_path, monkeypatch):
    """The Sphinx hook is an entry point: it reads the run variables before keying the notebooks,
    so a pinned source hash keys them as it keys the caches their kernels read (conftest puts the
    process's options back after this test)."""
    from types import SimpleNamespace

    from sphinx.errors import ExtensionError

    from pategan_audit.pages import bookhook

    monkeypatch.setenv(runner.ENV["source_hash"], "pinned0000000000")
    config = SimpleNamespace(pategan_audit_profile="smoke", pategan_audit_always_run=[], pategan_audit_notebooks=[])
    (tmp_path / "book").mkdir()
    bookhook._on_builder_inited(SimpleNamespace(srcdir=str(tmp_path / "book"), config=config))
    assert runner.source_hash() == "pinned0000000000"
    monkeypatch.setenv(runner.ENV["train_threads"], "none")
    with pytest.raises(ExtensionError, match=r"\$PATEGAN_AUDIT_TRAIN_THREADS='none'"):
        bookhook._on_builder_inited(SimpleNamespace(srcdir=str(tmp_path / "book"), config=config))
