"""Notebook hygiene (jupytext pairs, stripped outputs, parameters cell) and smoke execution."""
import json
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SECTIONS = ["implementations", "utility", "training_traces", "auditing"]
NOTEBOOKS = sorted(p.stem for p in (REPO / "notebooks").glob("*.py"))


def test_every_section_has_a_notebook():
    assert set(SECTIONS) <= set(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_pair_in_sync_and_stripped(name):
    py = jupytext.read(REPO / "notebooks" / f"{name}.py")
    ipynb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    src_py = [(c.cell_type, c.source.strip()) for c in py.cells]
    src_nb = [(c.cell_type, c.source.strip()) for c in ipynb.cells]
    assert src_py == src_nb, f"notebooks/{name}.py and .ipynb differ: run `jupytext --sync notebooks/{name}.py`"
    for cell in ipynb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{name}.ipynb has outputs: strip them"
    assert ipynb.metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_parameters_cell(name):
    nb = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{name}: exactly one cell must carry the 'parameters' tag"
    src = tagged[0].source
    for param in ("profile", "seed"):
        assert f"{param}:" in src, f"{name}: parameters cell lacks {param}"
    if name in SECTIONS:
        assert "eps:" in src


def test_environment_yml_delegates_to_pyproject():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    deps = env["dependencies"]
    pip = [d for d in deps if isinstance(d, dict)]
    plain = [d for d in deps if not isinstance(d, dict)]
    assert sorted(plain) == ["pip", "python=3.11"]
    assert pip == [{"pip": ["-e .[all]"]}]


def test_book_config_shape():
    assert (REPO / "book" / "_config.yml").is_symlink() and (REPO / "book" / "_toc.yml").is_symlink()
    cfg = yaml.safe_load((REPO / "_config.yml").read_text())
    assert cfg["execute"]["execute_notebooks"] == "off"
    listed = cfg["sphinx"]["config"]["pategan_audit_notebooks"]
    assert set(SECTIONS) <= set(listed)
    toc = (REPO / "_toc.yml").read_text()
    for name in listed:
        assert f"file: {name}" in toc


@pytest.mark.slow
@pytest.mark.parametrize("name", SECTIONS)
def test_notebook_runs_at_smoke_profile(name, tmp_path):
    """Each section notebook executes under papermill at profile=smoke and honours eps."""
    import papermill as pm

    eps = 2.0 if name == "utility" else 1.0  # one changed eps is enough to show it is honoured
    out = tmp_path / f"{name}.ipynb"
    pm.execute_notebook(
        str(REPO / "notebooks" / f"{name}.ipynb"), str(out), cwd=str(REPO), kernel_name="python3",
        parameters={"profile": "smoke", "eps": eps, "results_dir": str(tmp_path / "results")}, progress_bar=False,
    )
    run = json.loads((tmp_path / "results" / name / "run.json").read_text())
    assert run["profile"] == "smoke" and run["eps"] == eps
    assert run["outputs"], f"{name} wrote no table or figure under results/{name}/"
    executed = nbformat.read(out, as_version=4)
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 9])
def test_utility_notebook_runs_at_smoke_for_other_seeds(seed, tmp_path):
    """Seeds other than the default run through at smoke (seeds 0-20 were checked by hand). Seed 1
    used to stop at Table 12: a D column below 0.5 made its AUROC-Δ undefined; now NaN with a note."""
    import papermill as pm

    pm.execute_notebook(
        str(REPO / "notebooks" / "utility.ipynb"), str(tmp_path / "utility.ipynb"), cwd=str(REPO), kernel_name="python3",
        parameters={"profile": "smoke", "seed": seed, "n_jobs": 1, "results_dir": str(tmp_path / "results")},
        progress_bar=False,
    )
    run = json.loads((tmp_path / "results" / "utility" / "run.json").read_text())
    assert run["seed"] == seed and "table12.csv" in run["outputs"]


def _code_lines(name):
    cells = [c.source for c in jupytext.read(REPO / "notebooks" / f"{name}.py").cells if c.cell_type == "code"]
    return cells, [line for src in cells for line in src.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("name", ["utility", "auditing", "training_traces", "done_right", "implementations"])
def test_section_notebook_is_narrative_over_the_library(name):
    """Issue 14, Deliver item 3: the page logic lives in ``pategan_audit.<section>.page``; the
    notebook defines no function, lambda or class, has fewer than 150 code lines and imports
    no module under a single-letter alias."""
    import ast
    import re

    cells, lines = _code_lines(name)
    for src in cells:
        tree = ast.parse(src)
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef))], name
    assert len(lines) < 150, f"{name}: {len(lines)} code lines"
    assert not [line for line in lines if re.search(r"\bimport\b.*\bas [A-Za-z]\b", line)], name
