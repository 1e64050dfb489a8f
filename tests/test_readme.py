"""The README stays a newcomer's five-minute read that is true: under 12 KB, every command in it one
the project has (Makefile targets, notebooks, module entry points, archives), every path it names
present, no run history, and its library example runs. The "How to reproduce" page's commands are
checked the same way."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pategan_audit.archive import ARCHIVES

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
REPRODUCE = REPO / "book" / "reproduce.md"
PAPERMILL = "mkdir -p out && .venv/bin/papermill notebooks/utility.ipynb out/utility.ipynb -p eps 1"


def _code(text: str) -> list[str]:
    """Every command-like snippet: inline code spans and the lines of bash blocks."""
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    lines = [line.strip() for b in blocks for line in b.splitlines() if line.strip()]
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return lines + inline


def _make_targets() -> set[str]:
    makefile = (REPO / "Makefile").read_text()
    return set(re.findall(r"^([a-z][\w-]*):", makefile, flags=re.M))


def _check_commands(text: str) -> list[str]:
    """The commands of ``text`` that the project does not have (empty when every one exists)."""
    bad, targets = [], _make_targets()
    for snippet in _code(text):
        for target in re.findall(r"(?:^|&& |; )make ([\w-]+)", snippet):
            if target not in targets:
                bad.append(f"make {target}")
        for module, rest in re.findall(r"python -m ([\w.]+)\s*(\S*)", snippet):
            if importlib.util.find_spec(module) is None:
                bad.append(f"python -m {module}")
            if module == "pategan_audit.archive" and rest and not rest.startswith("-") and rest != "NAME" \
                    and rest not in ARCHIVES:
                bad.append(f"archive {rest}")
        for notebook in re.findall(r"(notebooks/\w+\.ipynb)", snippet):
            if not (REPO / notebook).exists():
                bad.append(notebook)
        for path in re.findall(r"^((?:src|book|data|benchmarks|notebooks|tests)/[\w./-]+\.\w+)$", snippet):
            if path.startswith("book/_build/"):  # what the build writes: not there before `make book`
                continue
            if not (REPO / path).exists():
                bad.append(path)
    return list(dict.fromkeys(bad))


def test_readme_is_short():
    assert README.stat().st_size < 12 * 1024, f"README.md is {README.stat().st_size:,} bytes; keep it under 12 KB"


def test_readme_keeps_the_rerun_line_verbatim():
    assert PAPERMILL in README.read_text()


@pytest.mark.parametrize("page", [README, REPRODUCE], ids=["README", "reproduce"])
def test_every_command_is_one_the_project_has(page):
    snippets = _code(page.read_text())
    assert {"make book", "make test"} <= set(snippets)  # the two commands, and the check sees them
    assert _check_commands(page.read_text()) == []


def test_the_command_check_catches_a_wrong_command():
    text = ("`make bookz` `python -m pategan_audit.archives_cli` `notebooks/nothing.ipynb` "
            "`python -m pategan_audit.archive utility_huge` `src/pategan_audit/nothing.py`")
    assert _check_commands(text) == ["make bookz", "python -m pategan_audit.archives_cli", "notebooks/nothing.ipynb",
                                     "archive utility_huge", "src/pategan_audit/nothing.py"]


@pytest.mark.parametrize("page", [README, REPRODUCE], ids=["README", "reproduce"])
def test_no_run_history(page):
    text = page.read_text()
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "dates belong in meta.json, not in the page"
    assert not re.search(r"\bsessions?\b|SIGSTOP|paused", text, flags=re.I), "run history belongs in meta.json"


def test_no_dates_in_the_package_source():
    """Run history (when an archive ran, when a default changed) belongs in meta.json and the
    closing notes: no calendar date in the package's code, comments or docstrings. A behaviour
    that changed is named by what it is (a version, a switch), not by the day it changed."""
    dated = [f"{path.relative_to(REPO)}:{i}" for path in sorted((REPO / "src" / "pategan_audit").rglob("*.py"))
             for i, line in enumerate(path.read_text().splitlines(), 1) if re.search(r"\b20\d\d-\d\d-\d\d\b", line)]
    assert not dated, f"dates in the package source: {dated}"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python example"
    return blocks[0]


def test_library_example_is_ten_lines():
    assert len([line for line in _example().splitlines() if line.strip()]) <= 10


@pytest.mark.slow
def test_library_example_runs(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(_example())
    out = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    eps, iterations = out.stdout.split()
    assert 0 < float(eps) and int(iterations) >= 1
