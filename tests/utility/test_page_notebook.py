"""The utility notebook is narrative over pategan_audit.utility.page (issue 14, Deliver item 3)."""
import ast
import re
from pathlib import Path

import jupytext

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "utility.py"


def _code_lines():
    cells = [c.source for c in jupytext.read(NOTEBOOK).cells if c.cell_type == "code"]
    return cells, [line for src in cells for line in src.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_no_function_definitions_and_few_code_lines():
    cells, lines = _code_lines()
    for src in cells:
        tree = ast.parse(src)
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef))]
    assert len(lines) < 150


def test_no_single_letter_module_aliases():
    _, lines = _code_lines()
    assert not [line for line in lines if re.search(r"\bimport\b.*\bas [A-Za-z]\b", line)]
