"""Bad inputs at every entry point: a clear error before any computing, a warning, or a valid run.

One table of cases, each with the outcome class it must keep:

* ``clear``: the named exception type, with a message that names the parameter (and so says what
  to fix); raised before anything is trained;
* ``warns``: runs, and warns with a message naming the problem (the silent cases the presets keep
  as the paper benchmarked them, e.g. a constant column decoded away from its value);
* ``valid``: runs or returns without an error.

Entry points: the notebooks' parameter check (:func:`pategan_audit.pages.params.check_parameters`, the
function every notebook's first cell calls, with each notebook's own declared parameters), the
library (``datasets.load``, ``implementations.create`` / ``fit`` / ``sample`` / ``fit_many``, the
utility cells, the audit's game, settings and bounds) and the archive CLI's argument parsing.
Every case is fast: nothing trains beyond one iteration on a 24-row table.
"""
from __future__ import annotations

import ast
import contextlib
import io
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

from pategan_audit.pages import params
from pategan_audit.implementations.base import ConstantColumnWarning
from pategan_audit.pages.params import ParameterError, check_parameters

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """``call(tmp_path)`` and the outcome class it must have: "clear" (``exc`` raised and every
    string of ``names`` in its message), "warns" (``exc`` is the warning category) or "valid"."""

    id: str
    call: Callable[[Path], Any]
    outcome: str
    exc: type | None = None
    names: tuple[str, ...] = ()
    known_gap: str = ""  # where the fix belongs, for a case that does not have its class yet (strict xfail)


def clear(id_, call, exc, *names):
    return Case(id_, call, "clear", exc, tuple(names))


def warns(id_, call, category, *names):
    return Case(id_, call, "warns", category, tuple(names))


def valid(id_, call):
    return Case(id_, call, "valid")


def gap(case: Case, where: str) -> Case:
    """``case`` as it should be, failing today: the fix belongs in ``where`` (not this change's files)."""
    return Case(case.id, case.call, case.outcome, case.exc, case.names, where)


# -- the notebooks' parameters --------------------------------------------------------------------

def _notebook_parameters(name: str) -> tuple[dict[str, type], dict[str, Any]]:
    """(declared kinds, defaults) of ``notebooks/<name>.py``'s cell tagged ``parameters``."""
    text = (REPO / "notebooks" / f"{name}.py").read_text()
    cell = text.split('tags=["parameters"', 1)[1].split("\n", 1)[1].split("# %%", 1)[0]
    body = ast.parse(cell).body
    types = {"str": str, "int": int, "float": float, "bool": bool, "list": list}
    kinds = {node.target.id: types[node.annotation.id] for node in body}
    defaults = {node.target.id: ast.literal_eval(node.value) for node in body}
    return kinds, defaults


NOTEBOOKS = sorted(p.stem for p in (REPO / "notebooks").glob("*.py"))


def _a_file(tmp: Path) -> str:
    path = tmp / "a_file"
    path.write_text("x")
    return str(path)


def _below_a_file(tmp: Path) -> str:
    return str(Path(_a_file(tmp)) / "below")


def _new_dir(tmp: Path) -> str:
    return str(tmp / "new" / "dir")


#: (parameter, bad value or ``tmp -> value``, outcome): applied to every notebook that declares the parameter.
PARAMETER_CASES: list[tuple[str, Any, str]] = [
    ("profile", "Smoke", "clear"),
    ("profile", 1, "clear"),
    ("eps", 0, "clear"),
    ("eps", "1", "clear"),
    ("eps", float("nan"), "clear"),
    ("eps", 2, "valid"),
    ("seed", 1.5, "clear"),
    ("seed", -1, "clear"),
    ("seed", True, "clear"),
    ("seed", 3.0, "valid"),
    ("n_jobs", 0, "clear"),
    ("results_dir", "", "clear"),
    ("results_dir", _a_file, "clear"),
    ("results_dir", _below_a_file, "clear"),
    ("results_dir", _new_dir, "valid"),
    ("implementations", "original", "clear"),
    ("implementations", '["original", "smartnoise"]', "valid"),
    ("implementations", "[original, smartnoise]", "valid"),
    ("implementations", ["adult"], "clear"),
    ("implementations", [], "clear"),
    ("datasets", "cervical_cancer", "clear"),
    ("datasets", '["cervical_cancer"]', "valid"),
    ("datasets", ["adult"], "clear"),
    ("attacks", ["groundhog", "groundhog"], "clear"),
    ("attacks", "querybased", "clear"),
    ("groundhog_target", 100000, "clear"),
    ("groundhog_target", 686, "clear"),
    ("groundhog_target", -2, "clear"),
    ("groundhog_target", 685, "valid"),
    ("run_ablation", 1, "clear"),
    ("backend", "spark", "clear"),
    ("backend", "dask", "clear"),  # without dask_scheduler
    ("loss_definition", "other", "clear"),
    ("num_teachers_compare", 0, "clear"),
    ("dask_scheduler", 3, "clear"),
]


def _parameter_call(section: str, name: str, value: Any, *, injected: tuple[str, ...] = ()):
    kinds, defaults = _notebook_parameters(section)

    def call(tmp: Path):
        resolved = value(tmp) if callable(value) else value
        out = check_parameters({**defaults, name: resolved} if name in kinds else defaults, kinds,
                               injected=injected, section=section)
        if isinstance(resolved, str) and resolved.startswith("["):  # a bracketed -p string arrives as a list
            assert out[name] == [v.strip().strip('"') for v in resolved[1:-1].split(",")]
        return out

    return call


def _parameter_cases() -> list[Case]:
    cases = []
    for section in NOTEBOOKS:
        kinds, defaults = _notebook_parameters(section)
        cases.append(valid(f"params-{section}-defaults", _parameter_call(section, "seed", defaults["seed"])))
        cases.append(clear(f"params-{section}-misspelled", _parameter_call(section, "seed", 0, injected=("sead",)),
                           ParameterError, "sead", "seed"))
        for name, value, outcome in PARAMETER_CASES:
            if name not in kinds:
                continue
            call = _parameter_call(section, name, value)
            label = f"params-{section}-{name}={getattr(value, '__name__', value)!r}"
            cases.append(clear(label, call, ParameterError, name) if outcome == "clear" else valid(label, call))
    # backend="dask" with a scheduler: the pair is valid (auditing is the notebook with both)
    kinds, defaults = _notebook_parameters("auditing")
    cases.append(valid("params-auditing-dask-with-scheduler", lambda tmp: check_parameters(
        {**defaults, "backend": "dask", "dask_scheduler": "tcp://10.0.0.5:8786"}, kinds, section="auditing")))
    return cases


def _unwritable_results_dir(tmp: Path, monkeypatch) -> None:
    """An existing directory this user cannot write to (simulated: root may write anywhere)."""
    locked = tmp / "locked"
    locked.mkdir()
    real = params.os.access
    monkeypatch.setattr(params.os, "access", lambda p, mode: False if Path(p) == locked else real(p, mode))
    kinds, defaults = _notebook_parameters("utility")
    with pytest.raises(ParameterError, match="results_dir.*not writable"):
        check_parameters({**defaults, "results_dir": str(locked / "out")}, kinds, section="utility")


def test_results_dir_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    _unwritable_results_dir(tmp_path, monkeypatch)


def test_the_list_forms_the_message_shows_work_through_papermill():
    """The error for a list given as a plain string shows two forms; both must work as papermill
    delivers them: ``-p NAME '[...]'`` arrives as a string (papermill's ``_resolve_type``), ``-y``
    as YAML."""
    import yaml
    from papermill.cli import _resolve_type

    kinds, defaults = _notebook_parameters("utility")
    with pytest.raises(ParameterError) as err:
        check_parameters({**defaults, "implementations": _resolve_type("original")}, kinds, section="utility")
    message = str(err.value)
    p_form = message.split("-p implementations ", 1)[1].split(" or ", 1)[0].strip("'")
    y_form = message.split("-y ", 1)[1].rstrip(")").strip("'")
    from_p = _resolve_type(p_form)
    from_y = yaml.safe_load(y_form)["implementations"]
    assert isinstance(from_p, str)  # papermill's -p gives a string, never a list
    for value in (from_p, from_y):
        assert check_parameters({**defaults, "implementations": value}, kinds,
                                section="utility")["implementations"] == ["original"]


# -- the library ----------------------------------------------------------------------------------

def _toy(n: int = 24) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n).astype(np.int64), "y": np.arange(n) % 2})


FAST = {"max_iter": 1, "num_teachers": 2}


def _create(name="smartnoise", **kw):
    from pategan_audit.implementations import create

    return create(name, **{**FAST, **kw})


_FITTED: dict[str, Any] = {}


def _fitted():
    if "model" not in _FITTED:
        _FITTED["model"] = _create().fit(_toy(), label="y")
    return _FITTED["model"]


def _fit(name="smartnoise", df=None, label="y", **kw):
    return lambda tmp: _create(name, **kw).fit(_toy() if df is None else df, label=label)


def _with(df: pd.DataFrame, **columns) -> pd.DataFrame:
    out = df.copy()
    for c, v in columns.items():
        out[c] = v
    return out


def _fit_many(seeds, data=None, name="smartnoise", **kw):
    def call(tmp):
        from pategan_audit.implementations import fit_many

        return fit_many(name, _toy() if data is None else data, seeds=seeds, label="y", **{**FAST, **kw})

    return call


def _load(name="cervical_cancer", **kw):
    def call(tmp):
        from pategan_audit.datasets import load

        return load(name, **kw)

    return call


def _cell(**kw):
    def call(tmp):
        from pategan_audit.utility.cells import UtilityCell

        return UtilityCell(**{"dataset": "cervical_cancer", "implementation": "smartnoise", "epsilon": 1.0, **kw})

    return call


def _setting_a(**kw):
    def call(tmp):
        from pategan_audit.utility.cells import SettingACell

        return SettingACell(**{"dataset": "cervical_cancer", **kw})

    return call


def _game(**kw):
    def call(tmp):
        from pategan_audit.auditing.featurisers import NaiveFeaturiser
        from pategan_audit.auditing.game import run_game
        from pategan_audit.datasets import worst_case
        from pategan_audit.implementations import PresetFactory

        args = {"d_out": worst_case("out"), "d_in": worst_case("in"), "n_per_world": 1, "featurise": NaiveFeaturiser(),
                "cache_namespace": None}
        args.update(kw)
        factory = PresetFactory("borealis", overrides={"max_iter": 1, "num_teachers": 2})
        return run_game(factory, args.pop("d_out"), args.pop("d_in"), **args)

    return call


def _counts(**kw):
    def call(tmp):
        from pategan_audit.auditing.bounds import AttackCounts

        return AttackCounts(**{"FP": 1, "TN": 9, "FN": 2, "TP": 8, **kw})

    return call


def _cp(alpha=0.1, delta=1e-5):
    def call(tmp):
        from pategan_audit.auditing.bounds import AttackCounts, clopper_pearson_eps_lower

        return clopper_pearson_eps_lower(AttackCounts(FP=1, TN=9, FN=2, TP=8), alpha=alpha, delta=delta)

    return call


def _attack_data(attack="groundhog", target=397):
    def call(tmp):
        from pategan_audit.auditing.settings import attack_data

        return attack_data(attack, target=target)

    return call


def _setting(**kw):
    def call(tmp):
        from pategan_audit.auditing.settings import AuditSetting

        return AuditSetting(**{"attack": "querybased", "implementation": "borealis", **kw})

    return call


def _archive(*argv):
    def call(tmp):
        from pategan_audit.archive import main

        return main([*argv, "--directory", str(tmp / "archive")])

    return call


def _archive_into_file(*argv):
    def call(tmp):
        from pategan_audit.archive import main

        target = tmp / "a-file"
        target.write_text("not a folder")
        return main([*argv, "--directory", str(target)])

    return call


LIBRARY_CASES: list[Case] = [
    # datasets.load
    clear("load-unknown-name", _load("adult"), ValueError, "adult", "cervical_cancer"),
    clear("load-isolet-test", _load("isolet", isolet_test="uci"), ValueError, "isolet_test"),
    valid("load-cervical", _load()),
    # implementations.create
    clear("create-unknown-name", lambda tmp: _create("pategan"), ValueError, "pategan", "smartnoise"),
    clear("create-unknown-setting", lambda tmp: _create(num_teacher=3), ValueError, "num_teacher", "num_teachers"),
    clear("create-epsilon-0", lambda tmp: _create(epsilon=0), ValueError, "epsilon"),
    clear("create-epsilon-str", lambda tmp: _create(epsilon="abc"), ValueError, "epsilon"),
    clear("create-epsilon-nan", lambda tmp: _create(epsilon=float("nan")), ValueError, "epsilon"),
    clear("create-delta-str", lambda tmp: _create("updated", delta="abc"), ValueError, "delta", "'abc'"),
    clear("create-delta-1", lambda tmp: _create("updated", delta=1.0), ValueError, "delta"),
    clear("create-delta-0", lambda tmp: _create("borealis", delta=0), ValueError, "delta"),
    clear("create-seed-negative", lambda tmp: _create(seed=-1), ValueError, "seed"),
    clear("create-seed-float", lambda tmp: _create(seed=1.5), ValueError, "seed"),
    clear("create-seed-bool", lambda tmp: _create(seed=True), ValueError, "seed"),
    clear("create-lam-0", lambda tmp: _create(lam=0), ValueError, "lam"),
    clear("create-max-iter-0", lambda tmp: _create(max_iter=0), ValueError, "max_iter"),
    valid("create-valid", lambda tmp: _create("synthcity")),
    # fit
    clear("fit-array", lambda tmp: _create().fit(_toy().to_numpy()), TypeError, "DataFrame"),
    clear("fit-list", lambda tmp: _create().fit([[1, 2]]), TypeError, "DataFrame"),
    clear("fit-empty", _fit(df=_toy().iloc[:0]), ValueError, "empty"),
    clear("fit-nan", _fit(df=_with(_toy(), a=np.nan)), ValueError, "NaN", "'a'"),
    clear("fit-inf", _fit(df=_with(_toy(), a=np.inf)), ValueError, "infinite"),
    clear("fit-strings", _fit(df=_with(_toy(), s="x")), ValueError, "non-numeric", "'s'"),
    clear("fit-unknown-label", _fit(label="target"), ValueError, "label", "'target'"),
    clear("fit-too-many-teachers", _fit("updated", num_teachers=50), ValueError, "num_teachers"),
    clear("fit-smartnoise-default-teachers", _fit(num_teachers=None), ValueError, "num_teachers"),
    clear("fit-smartnoise-tiny-epsilon", _fit(epsilon=1e-12), ValueError, "epsilon=1e-12", "0.01"),
    clear("fit-smartnoise-dp-bounds-take-all", _fit(epsilon=0.105, bounds="dp", preprocessor_eps=0.1),
          ValueError, "preprocessor_eps", "epsilon"),
    clear("fit-synthcity-one-row", _fit("synthcity", df=_toy().iloc[:1], num_teachers=1), ValueError,
          "delta", "N^(-3/2)", "N = 1"),
    clear("fit-synthcity-too-many-teachers", _fit("synthcity", df=_toy().iloc[:1]), ValueError, "num_teachers"),
    clear("fit-corrected-no-bounds", _fit("corrected"), ValueError, "public_bounds"),
    valid("fit-synthcity-one-row-user-delta", _fit("synthcity", df=_toy(2), num_teachers=1, ignore_user_delta=False)),
    valid("fit-valid", _fit()),
    warns("fit-borealis-constant-column", _fit("borealis", df=_with(_toy(), c=7)), ConstantColumnWarning, "'c'", "c + 1"),
    warns("fit-updated-constant-column", _fit("updated", df=_with(_toy(), c=7.5)), ConstantColumnWarning, "'c'", "c + 1"),
    warns("fit-turing-constant-column", _fit("turing", df=_with(_toy(), c=7)), ConstantColumnWarning, "'c'", "2c"),
    valid("fit-turing-zero-column", _fit("turing", df=_with(_toy(), c=0))),  # 0 / (0 + 1e-8) decodes back to 0
    warns("fit-updated-many-constant-columns", _fit("updated", df=_with(_toy(), **{f"z{i}": 0 for i in range(8)})),
          ConstantColumnWarning, "'z0'", "and 3 more"),
    valid("fit-smartnoise-constant-column", _fit(df=_with(_toy(), c=7))),  # maps to -1 and back to 7
    # sample
    clear("sample-before-fit", lambda tmp: _create().sample(5), RuntimeError, "fit()"),
    clear("sample-true", lambda tmp: _fitted().sample(True), ValueError, "sample(n)", "True"),
    clear("sample-zero", lambda tmp: _fitted().sample(0), ValueError, "sample(n)", "positive"),
    clear("sample-negative", lambda tmp: _fitted().sample(-3), ValueError, "n ", "-3"),
    clear("sample-float", lambda tmp: _fitted().sample(2.5), ValueError, "n ", "2.5"),
    clear("sample-integral-float", lambda tmp: _fitted().sample(2.0), ValueError, "n ", "2.0"),
    clear("sample-str", lambda tmp: _fitted().sample("5"), ValueError, "n ", "'5'"),
    clear("sample-seed-negative", lambda tmp: _fitted().sample(5, seed=-1), ValueError, "seed", "-1"),
    clear("sample-seed-float", lambda tmp: _fitted().sample(5, seed=1.5), ValueError, "seed", "1.5"),
    clear("sample-seed-str", lambda tmp: _fitted().sample(5, seed="0"), ValueError, "seed"),
    valid("sample-valid", lambda tmp: _fitted().sample(np.int64(3), seed=np.int64(2))),
    # fit_many
    clear("fit-many-repeated-seeds", _fit_many([0, 0]), ValueError, "seeds", "[0]"),
    clear("fit-many-repeated-seeds-shared-list", _fit_many([3, 1, 3], data=[_toy()] * 3), ValueError, "seeds", "[3]"),
    valid("fit-many-same-seed-other-table", _fit_many([0, 0], data=[_toy(24), _toy(23)])),
    clear("fit-many-empty-seeds", _fit_many([]), ValueError, "seeds"),
    clear("fit-many-int-seeds", _fit_many(5), TypeError, "seeds"),
    clear("fit-many-float-seed", _fit_many([0, 1.5]), TypeError, "seed", "1.5"),
    clear("fit-many-tables-mismatch", _fit_many([0, 1, 2], data=[_toy(), _toy()]), ValueError, "tables", "seeds"),
    clear("fit-many-max-replicas-0", _fit_many([0, 1], max_replicas=0), ValueError, "max_replicas"),
    clear("fit-many-device", _fit_many([0, 1], device="tpu9"), ValueError, "device"),
    clear("fit-many-unknown-name", _fit_many([0, 1], name="pategan"), ValueError, "pategan"),
    clear("fit-many-bad-second-table", _fit_many([0, 1], data=[_toy(), _with(_toy(), a=np.nan)]), ValueError, "NaN"),
    clear("fit-many-synthcity-one-row", _fit_many([0, 1], data=_toy().iloc[:1], name="synthcity", num_teachers=1),
          ValueError, "N^(-3/2)"),
    valid("fit-many-valid", _fit_many([0, 1])),
    # utility cells
    clear("cell-epsilon-0", _cell(epsilon=0), ValueError, "epsilon"),
    clear("cell-delta-1", _cell(delta=1.0), ValueError, "delta"),
    clear("cell-n-models-0", _cell(n_models=0), ValueError, "n_models"),
    clear("cell-num-teachers-0", _cell(num_teachers=0), ValueError, "num_teachers"),
    clear("cell-max-iter-0", _cell(max_iter=0), ValueError, "max_iter"),
    clear("cell-unknown-classifier", _cell(classifiers=("svm9",)), ValueError, "classifiers", "svm9"),
    clear("cell-majority", _cell(classifiers=("majority",)), ValueError, "majority"),
    clear("setting-a-unknown-classifier", _setting_a(classifiers=("svm9",)), ValueError, "classifiers"),
    valid("cell-valid", _cell()),
    clear("cell-delta-str", _cell(delta="abc"), ValueError, "delta", "'abc'"),
    clear("cell-epsilon-str", _cell(epsilon="abc"), ValueError, "epsilon", "'abc'"),
    clear("cell-unknown-dataset", _cell(dataset="adult"), ValueError, "dataset", "adult"),
    valid("cell-own-generator-name", _cell(implementation="my_generator")),  # run with its own make_generator
    clear("cell-empty-implementation", _cell(implementation=""), ValueError, "implementation"),
    clear("cell-seed-float", _cell(seed=1.5), ValueError, "seed"),
    clear("cell-seed-negative", _cell(seed=-1), ValueError, "seed"),
    clear("setting-a-unknown-dataset", _setting_a(dataset="adult"), ValueError, "dataset", "adult"),
    # the audit
    clear("game-n-per-world-0", _game(n_per_world=0), ValueError, "n_per_world"),
    clear("game-empty-d-out", _game(d_out=pd.DataFrame()), ValueError, "d_out"),
    clear("game-columns-differ", _game(d_in=pd.DataFrame({"X": [1.0]})), ValueError, "columns"),
    clear("game-n-synth-rows", _game(n_synth_rows=0), ValueError, "n_synth_rows"),
    clear("counts-negative", _counts(FP=-1), ValueError, "FP"),
    clear("counts-bool", _counts(TP=True), ValueError, "TP"),
    clear("counts-empty-world", _counts(FN=0, TP=0), ValueError, "world"),
    clear("cp-alpha-0", _cp(alpha=0), ValueError, "alpha"),
    clear("cp-delta-1", _cp(delta=1), ValueError, "delta"),
    valid("cp-valid", _cp()),
    clear("attack-data-target", _attack_data(target=100000), ValueError, "target", "685"),
    clear("attack-data-unknown", _attack_data(attack="shadow"), ValueError, "shadow", "querybased"),
    clear("setting-unknown-attack", _setting(attack="shadow"), ValueError, "attack"),
    clear("setting-unknown-channel", _setting(channel="side"), ValueError, "channel"),
    clear("setting-iterations-0", _setting(iterations=0), ValueError, "iterations"),
    valid("setting-valid", _setting()),
    # the archive CLI: argument errors, refused by argparse before anything runs
    clear("archive-unknown-name", _archive("no_such_archive"), SystemExit, "invalid choice", "no_such_archive"),
    clear("archive-n-jobs-not-int", _archive("utility_sweep_large", "--n-jobs", "two"), SystemExit, "--n-jobs"),
    clear("archive-unknown-option", _archive("utility_sweep_large", "--jobs", "2"), SystemExit, "--jobs"),
    clear("archive-n-jobs-0", _archive("utility_sweep_large", "--n-jobs", "0"), SystemExit, "--n-jobs"),
    clear("archive-unknown-profile", _archive("utility_sweep_large", "--profile", "huge"), SystemExit, "huge"),
    clear("archive-directory-is-a-file", _archive_into_file("utility_sweep_large"), SystemExit, "--directory"),
]

CASES = _parameter_cases() + LIBRARY_CASES


def run_case(case: Case, tmp: Path) -> tuple[str, str]:
    """(observed class, message): "error" + the message (with what went to stderr, where argparse
    writes), "warns" + the warnings, or "valid"."""
    stderr = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(stderr):
        warnings.simplefilter("always")
        try:
            case.call(tmp)
        except (Exception, SystemExit) as err:
            return f"error:{type(err).__name__}", f"{err} {stderr.getvalue()}"
    flagged = [str(w.message) for w in caught if issubclass(w.category, ConstantColumnWarning)]
    return ("warns", " | ".join(flagged)) if flagged else ("valid", "")


def test_the_table_is_large_and_covers_every_notebook():
    assert len(CASES) >= 99
    assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"
    for section in NOTEBOOKS:
        assert any(c.id.startswith(f"params-{section}-") for c in CASES)


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c.known_gap))
                                  if c.known_gap else c for c in CASES], ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path):
    observed, message = run_case(case, tmp_path)
    if case.outcome == "valid":
        assert observed == "valid", f"{case.id}: expected a valid run, got {observed}: {message}"
    elif case.outcome == "warns":
        assert observed == "warns", f"{case.id}: expected a warning, got {observed}: {message}"
        for name in case.names:
            assert name in message, f"{case.id}: the warning does not name {name!r}: {message}"
    else:
        assert observed == f"error:{case.exc.__name__}", f"{case.id}: expected {case.exc.__name__}, got {observed}: {message}"
        for name in case.names:
            assert name in message, f"{case.id}: the message does not name {name!r}: {message}"


def test_the_check_comes_before_any_computing(monkeypatch):
    """The refusals of fit/fit_many come before the preset's data transform runs: the setup that
    would compute is never reached."""
    from pategan_audit.implementations.synthcity import Synthcity

    def never(*args, **kwargs):
        raise AssertionError("the preset started computing before refusing the input")

    monkeypatch.setattr(Synthcity, "_setup", never)
    with pytest.raises(ValueError, match="N = 1"):
        _create("synthcity", num_teachers=1).fit(_toy().iloc[:1], label="y")
    from pategan_audit.implementations import fit_many

    with pytest.raises(ValueError, match="NaN"):
        fit_many("synthcity", [_toy(), _with(_toy(), a=np.nan)], seeds=[0, 1], label="y", **FAST)


def test_the_constant_column_warning_changes_no_number():
    """The warning only says what the preset does: the samples are those of the preset as
    benchmarked (same seed, same numbers, warning or not)."""
    df = _with(_toy(), c=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = _create("borealis", seed=3).fit(df, label="y").sample(50, seed=1)
        warnings.simplefilter("error")
        with pytest.raises(ConstantColumnWarning, match="constant column"):
            _create("borealis", seed=3).fit(df, label="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = _create("borealis", seed=3).fit(df, label="y").sample(50, seed=1)
    pd.testing.assert_frame_equal(first, again)


if __name__ == "__main__":  # counts by class, e.g. against another checkout: python tests/test_bad_inputs.py
    import tempfile

    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            observed, message = run_case(case, Path(tmp))
            if case.outcome == "clear":
                ok = observed == f"error:{case.exc.__name__}" and all(n in message for n in case.names)
                kind = "clear" if ok else ("poor" if observed.startswith("error") else "silent")
            elif case.outcome == "warns":
                kind = "warns" if observed == "warns" else ("silent" if observed == "valid" else "poor")
            else:
                kind = "valid" if observed == "valid" else "poor(valid refused)"
            kind += " (known gap)" if case.known_gap else ""
            counts[kind] = counts.get(kind, 0) + 1
            if not kind.startswith(("clear", "valid", "warns")):
                print(f"{kind:>8}  {case.id}: {observed} {message[:160]!r}")
    print(json.dumps(counts))
