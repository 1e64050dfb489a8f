"""Notebook parameter validation (pategan_audit.pages.params): unknown names, types, ranges."""
from pathlib import Path

import nbformat
import pytest

from pategan_audit.pages.params import (
    ParameterError,
    check_parameters,
    injected_names,
    section_profiles,
    validate_notebook_parameters,
)
from pategan_audit.pages.report import coerce_parameters

REPO = Path(__file__).resolve().parents[1]
DECLARED = {"profile": str, "eps": float, "seed": int, "n_jobs": int, "results_dir": str}
DEFAULTS = {"profile": "book", "eps": 1.0, "seed": 0, "n_jobs": 2, "results_dir": "results"}


def _check(section="utility", injected=(), **changed):
    return check_parameters({**DEFAULTS, **changed}, DECLARED, injected=injected, section=section)


def test_defaults_pass_and_values_are_normalised():
    assert _check() == DEFAULTS
    got = _check(eps=1, seed=3.0)  # papermill types `-p eps 1` as int and `-p seed 3.0` as float
    assert got["eps"] == 1.0 and isinstance(got["eps"], float)
    assert got["seed"] == 3 and isinstance(got["seed"], int)


@pytest.mark.parametrize("seed", [1.5, -1, True, "3", None, [1]])
def test_seed_must_be_a_non_negative_integer(seed):
    with pytest.raises(ParameterError, match="seed must be an integer >= 0"):
        _check(seed=seed)


@pytest.mark.parametrize("eps", [0, -1, float("inf"), float("nan"), "1", False])
def test_eps_must_be_a_positive_finite_number(eps):
    with pytest.raises(ParameterError, match="eps must be a finite number > 0"):
        _check(eps=eps)


def test_a_string_number_names_the_raw_flag():
    with pytest.raises(ParameterError, match="not -r"):
        _check(eps="1")


def test_n_jobs_and_results_dir_ranges():
    with pytest.raises(ParameterError, match="n_jobs"):
        _check(n_jobs=0)
    with pytest.raises(ParameterError, match="results_dir"):
        _check(results_dir="")


def test_profile_is_one_the_section_knows():
    assert section_profiles("utility") == ("smoke", "book", "large", "paper")
    assert "large" not in section_profiles("training_traces")  # traces have no large profile
    assert _check(profile="large")["profile"] == "large"
    with pytest.raises(ParameterError, match="profile must be one of 'smoke', 'book', 'paper'"):
        _check(section="training_traces", profile="large")
    with pytest.raises(ParameterError, match="profile must be one of"):
        _check(profile="Smoke")


def test_unknown_injected_name_is_an_error_naming_the_valid_ones():
    with pytest.raises(ParameterError) as err:
        _check(injected=["epsilon", "seed"])
    msg = str(err.value)
    assert "unknown parameter 'epsilon' (did you mean 'eps'?)" in msg
    assert "takes profile, eps, seed, n_jobs, results_dir" in msg
    assert _check(injected=["eps", "seed"]) == DEFAULTS  # declared names injected: fine
    assert _check(injected=["PAPERMILL_OUTPUT_PATH"]) == DEFAULTS  # papermill --inject-output-path


def test_list_parameters_name_known_entries():
    declared = {**DECLARED, "datasets": list, "implementations": list, "attacks": list}
    values = {**DEFAULTS, "datasets": [], "implementations": ["smartnoise"], "attacks": ["groundhog"]}
    assert check_parameters(values, declared)["implementations"] == ["smartnoise"]
    with pytest.raises(ParameterError, match=r"datasets: unknown \['adult'\]"):
        check_parameters({**values, "datasets": ["adult"]}, declared)
    with pytest.raises(ParameterError, match="list of names"):
        check_parameters({**values, "datasets": "cervical_cancer"}, declared)
    with pytest.raises(ParameterError, match="at least one"):
        check_parameters({**values, "implementations": []}, declared)
    with pytest.raises(ParameterError, match="twice"):
        check_parameters({**values, "attacks": ["groundhog", "groundhog"]}, declared)


def test_section_specific_rules_and_annotation_fallback():
    declared = {"groundhog_target": int, "run_ablation": bool, "backend": str, "loss_definition": str,
                "num_teachers_compare": int, "dask_scheduler": str, "threshold": float, "label": str}
    values = {"groundhog_target": -1, "run_ablation": True, "backend": "loky", "loss_definition": "notebook",
              "num_teachers_compare": 5, "dask_scheduler": "", "threshold": 1, "label": "x"}
    assert check_parameters(values, declared)["threshold"] == 1.0  # no rule: the annotation's type
    for name, bad in [("groundhog_target", -2), ("run_ablation", 1), ("backend", "spark"),
                      ("loss_definition", "other"), ("num_teachers_compare", 0), ("threshold", "a"), ("label", 3)]:
        with pytest.raises(ParameterError, match=name):
            check_parameters({**values, name: bad}, declared)


def test_injected_names_reads_papermills_cell_only():
    assert injected_names("# Parameters\nepsilon = 1\nseed = 3\ndatasets = [\"cervical_cancer\"]\n") == ["epsilon", "seed", "datasets"]
    assert injected_names("profile: str = 'book'\nseed: int = 0\n") == []  # the parameters cell itself
    assert injected_names("") == []


def test_validate_notebook_parameters_on_a_kernel_like_namespace():
    ns = {"__annotations__": dict(DECLARED), **DEFAULTS, "eps": 2, "seed": 4,
          "_ih": ["", "profile: str = 'book'\n...", "# Parameters\neps = 2\nseed = 4\n", "validate(...)"]}
    assert validate_notebook_parameters(ns, section="utility")["eps"] == 2.0
    assert isinstance(ns["eps"], float)  # written back
    ns["_ih"][2] = "# Parameters\nepsilon = 2\n"
    ns["epsilon"] = 2
    with pytest.raises(ParameterError, match="did you mean 'eps'"):
        validate_notebook_parameters(ns, section="utility")
    ns["_ih"] = ["", "profile: str = 'book'", "validate(...)"]  # no papermill cell: interactive use
    assert validate_notebook_parameters(ns, section="utility")["seed"] == 4
    with pytest.raises(ParameterError, match="no annotated parameters"):
        validate_notebook_parameters({"seed": 1})


def test_report_section_rejects_a_fractional_seed():
    assert coerce_parameters(profile="smoke", eps=1, seed=2) == ("smoke", 1.0, 2)
    with pytest.raises(ParameterError, match="seed"):
        coerce_parameters(profile="smoke", eps=1, seed=1.5)


NOTEBOOKS = sorted(p.stem for p in (REPO / "notebooks").glob("*.py"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_validates_right_after_its_parameters_cell(name):
    """The check must be the first code cell after the parameters cell (it reads the papermill
    cell just before it), and every parameter must be annotated (that is how it finds them)."""
    import ast

    nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    i = next(k for k, c in enumerate(code) if "parameters" in c.metadata.get("tags", []))
    assert f'validate_notebook_parameters(globals(), section="{name}")' in code[i + 1].source
    body = ast.parse(code[i].source).body
    assert body and all(isinstance(node, ast.AnnAssign) for node in body), f"{name}: annotate every parameter"
    defaults = {node.target.id: ast.literal_eval(node.value) for node in body}
    kinds = {node.target.id: {"str": str, "int": int, "float": float, "bool": bool, "list": list}[node.annotation.id]
             for node in body}
    assert check_parameters(defaults, kinds, section=name) == defaults  # the defaults are valid


@pytest.mark.slow
def test_papermill_rejects_a_misspelled_parameter(tmp_path):
    """`-p epsilon 1` (for eps) stops the notebook at the check, naming the valid parameters,
    before anything is computed; a fractional seed likewise."""
    import papermill as pm

    nb = REPO / "notebooks" / "training_traces.ipynb"
    for params, expected in [({"epsilon": 1, "profile": "smoke"}, "unknown parameter 'epsilon' (did you mean 'eps'?)"),
                             ({"seed": 1.5, "profile": "smoke"}, "seed must be an integer")]:
        with pytest.raises(pm.PapermillExecutionError) as err:
            pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), cwd=str(REPO), kernel_name="python3",
                                parameters={**params, "results_dir": str(tmp_path / "results")}, progress_bar=False)
        assert err.value.ename == "ParameterError" and expected in err.value.evalue
        assert "takes profile, eps" in err.value.evalue or "seed" in params
        assert not (tmp_path / "results").exists()  # stopped before the Section wrote anything
