"""The artefact index of ``src/pategan_audit/README.md`` stays true: every function it names
imports, every notebook heading exists, every ``results/`` file name is one the code writes, and
every scorecard key is a table of :mod:`pategan_audit.pages.scorecard`."""
from __future__ import annotations

import ast
import importlib
import re
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "src" / "pategan_audit" / "README.md"
SECTIONS = {"implementations", "utility", "training_traces", "auditing"}


def index_rows() -> list[dict]:
    text = README.read_text()
    body = text.split("## Artefact index", 1)[1]
    rows = []
    for line in body.splitlines():
        if not line.startswith("| ") or line.startswith("| artefact") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 5, line
        artefact, headings, functions, files, keys = cells
        rows.append({
            "artefact": artefact,
            "headings": re.findall(r"`(\w+)` → \"([^\"]+)\"", headings),
            "functions": re.findall(r"`(pategan_audit\.[\w.]+)`", functions),
            "files": re.findall(r"`(results/[\w./]+)`", files),
            "keys": re.findall(r"`(\w+)`", keys),
            "raw": cells,
        })
    return rows


ROWS = index_rows()


def test_index_covers_every_table_and_figure():
    named = {row["artefact"].split(" (")[0] for row in ROWS}
    assert named == {f"Table {i}" for i in range(1, 14)} | {f"Figure {i}" for i in range(1, 13)}


SAVERS = {"SaveTable", "SaveFigure", "Figure", "table", "figure"}  # the calls that write under results/<section>/


@lru_cache(maxsize=None)
def written_names() -> tuple[re.Pattern, ...]:
    """Names the code can write: every string constant of the package and the notebooks, and the
    f-string templates (``{...}`` -> ``.+``) passed to a table or figure writer."""
    patterns: set[str] = set()
    sources = [*(REPO / "src" / "pategan_audit").rglob("*.py"), *(REPO / "notebooks").glob("*.py")]
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 80:
                patterns.add(re.escape(node.value))
            elif isinstance(node, ast.Call):
                func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if func not in SAVERS:
                    continue
                for arg in node.args:
                    literal = "".join(v.value for v in getattr(arg, "values", ()) if isinstance(v, ast.Constant))
                    if isinstance(arg, ast.JoinedStr) and len(literal) >= 4:  # not a bare f"{name}"
                        patterns.add("".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in arg.values))
    return tuple(re.compile(p) for p in patterns if p)


def _lookup(dotted: str):
    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError:  # a module named as the attribute
        return importlib.import_module(dotted)


@pytest.mark.parametrize("row", ROWS, ids=[r["artefact"] for r in ROWS])
def test_index_row_exists(row):
    from pategan_audit.pages import scorecard

    assert row["functions"], row["raw"]
    for dotted in row["functions"]:
        assert callable(_lookup(dotted)), dotted
    if row["raw"][1] != "— (printed facts, not shown)":
        assert row["headings"], row["raw"]
    for notebook, heading in row["headings"]:
        source = (REPO / "notebooks" / f"{notebook}.py").read_text()
        assert re.search(r"^# #+ " + re.escape(heading) + r"\s*$", source, re.M), (notebook, heading)
    for path in row["files"]:
        _, section, name = path.split("/")
        assert section in SECTIONS, path
        stem = name.rsplit(".", 1)[0]
        assert any(p.fullmatch(stem) for p in written_names()), f"no code writes {path}"
    tables = set(scorecard.paper_numbers()["table"])
    for key in row["keys"]:
        assert key in tables and key in scorecard.TOLERANCES, key


NOTES = REPO / "book" / "implementation_notes.md"


def notes_sections() -> tuple[set[str], set[str]]:
    """The section keys (headings) and the MyST labels (``(notes-...)=``) of book/implementation_notes.md."""
    page = NOTES.read_text()
    keys = set(re.findall(r"^##+ ([a-z]+(?:\.[a-z0-9-]+)?)\b", page, re.M))
    labels = set(re.findall(r"^\((notes-[a-z0-9-]+)\)=$", page, re.M))
    return keys, labels


def test_cited_implementation_notes_sections_exist():
    """Every "implementation notes §key" cited in the package names a heading of book/implementation_notes.md."""
    defined, _ = notes_sections()
    text = "\n".join(p.read_text() for p in (REPO / "src" / "pategan_audit").rglob("*.py"))
    cited = set(re.findall(r"§([a-z]+\.[a-z0-9-]+)", text))
    assert cited, "no citations found"
    assert cited <= defined, sorted(cited - defined)


def notebook_markdown() -> dict[str, str]:
    """The markdown cells of every notebooks/*.py, joined per notebook."""
    import jupytext

    return {p.stem: "\n".join(c.source for c in jupytext.read(p).cells if c.cell_type == "markdown")
            for p in sorted((REPO / "notebooks").glob("*.py"))}


REF = re.compile(r"\{ref\}`([^`<]*?)\s*<([^`>]+)>`")


def test_notebook_citations_resolve():
    """The notebooks' markdown cites implementation notes sections that exist: every ``§key`` is a heading of
    book/implementation_notes.md, every ``{ref}`§key <label>``` link targets one of its labels, the label of that
    very key (``notes-`` + the key with dots as dashes), and no cell cites a document the repository lacks
    (the external "spec" files the notes were written from)."""
    defined, labels = notes_sections()
    markdown = notebook_markdown()
    assert any(REF.search(text) for text in markdown.values()), "no links to the implementation notes found"
    for name, text in markdown.items():
        for title, label in REF.findall(text):
            if not label.startswith("notes-"):
                continue  # a label of another page
            assert label in labels, f"{name}: no label ({label})= in {NOTES.name}"
            key = title.strip().removeprefix("§")
            assert label == "notes-" + key.replace(".", "-"), f"{name}: link text {title!r} does not match {label}"
        cited = set(re.findall(r"§([a-z]+(?:\.[a-z0-9-]+)?)", text))
        assert cited <= defined, f"{name}: unknown implementation notes sections {sorted(cited - defined)}"
        dangling = re.findall(r".{0,30}\b(?:specs?|spec's)\b.{0,30}", text)
        assert not dangling, f"{name}: cites a spec document the repository does not contain: {dangling}"
