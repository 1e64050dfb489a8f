"""The package's layers read from its import graph (issue 39, item 1): the domain (datasets,
components, accounting, implementations, replicas, utility, auditing, traces, reference, the
runner and the archive store) sits below one presentation package, ``pategan_audit.pages``.

Every module of ``src/pategan_audit`` is parsed with ``ast`` (nothing is imported), and every
import is resolved to the package's module it runs: ``import pategan_audit.a.b``, ``from
pategan_audit.a import b`` and the relative forms, at module level, inside functions and under
``if TYPE_CHECKING:``. A name imported from a package is the submodule of that name when there is
one, else the package itself.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from pategan_audit import runner

PACKAGE_DIR = Path(runner.__file__).resolve().parent
PACKAGE = "pategan_audit"
PRESENTATION = f"{PACKAGE}.pages"

#: Ratchet: imports of the package's own modules placed inside functions (one per ``import`` or
#: ``from ... import`` statement). Such an import hides an arrow of the graph from a reader and
#: usually dodges a cycle or defers a heavy import; the count may fall, never rise. When you remove
#: some, lower this number to the new count.
MAX_FUNCTION_LEVEL_IMPORTS = 110

_MODULE_STRING = re.compile(r"^pategan_audit(\.[A-Za-z_]\w*)+(:\w+)?$")


@dataclass(frozen=True)
class Import:
    source: str  # dotted name of the importing module
    target: str  # dotted name of the package module the import runs
    line: int
    in_function: bool
    type_checking: bool
    string: bool = False  # a "pategan_audit.x:Name" string handed to importlib


def module_names(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package (a package is its ``__init__``)."""
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir).with_suffix("").parts
        names[".".join((PACKAGE, *(parts[:-1] if parts[-1] == "__init__" else parts)))] = path
    return names


def imports(package_dir: Path = PACKAGE_DIR) -> list[Import]:
    """Every import of the package's own modules, in every module of ``package_dir``."""
    modules = module_names(package_dir)

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found: list[Import] = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
            for child in ast.iter_child_nodes(node):
                function = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                guarded = type_checking or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
                targets: list[str | None] = []
                string = False
                if isinstance(child, ast.Import):
                    targets = [resolve(a.name) for a in child.names if a.name.split(".")[0] == PACKAGE]
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = package.split(".")[: len(package.split(".")) - child.level + 1]
                        module = ".".join(base + ([child.module] if child.module else []))
                    else:
                        module = child.module if child.module and child.module.split(".")[0] == PACKAGE else None
                    if module:
                        targets = [resolve(f"{module}.{a.name}") for a in child.names]
                elif (isinstance(child, ast.Constant) and isinstance(child.value, str)
                      and _MODULE_STRING.match(child.value)):
                    targets, string = [resolve(child.value.split(":")[0])], True
                for target in dict.fromkeys(t for t in targets if t):
                    found.append(Import(name, target, child.lineno, function, guarded, string))
                visit(child, function, guarded)

        visit(ast.parse(path.read_text(), filename=str(path)), False, False)
    return found


def _in_presentation(name: str) -> bool:
    return name == PRESENTATION or name.startswith(PRESENTATION + ".")


def upward(found: list[Import]) -> list[str]:
    """Imports (any level, importlib strings included) from outside ``pages`` into ``pages``."""
    return [f"{i.source}:{i.line} imports {i.target}" for i in found
            if _in_presentation(i.target) and not _in_presentation(i.source)]


def cycles(found: list[Import]) -> list[list[str]]:
    """The import circles among module-level imports (those that run when a module is imported;
    ``TYPE_CHECKING`` ones do not): strongly connected components of more than one module, and
    modules that import themselves."""
    graph: dict[str, set[str]] = {}
    for i in found:
        if not (i.in_function or i.type_checking or i.string):
            graph.setdefault(i.source, set()).add(i.target)
            graph.setdefault(i.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return components


def function_level(found: list[Import]) -> list[str]:
    """``module:line`` of each import statement of the package's own modules inside a function."""
    return sorted({f"{i.source}:{i.line}" for i in found if i.in_function and not i.string})


@pytest.fixture(scope="module")
def graph() -> list[Import]:
    return imports()


def test_the_graph_is_read(graph):
    """The parser finds what it must: a known module-level, relative and function-level import."""
    assert any(i.source == "pategan_audit.pages.scorecard" and i.target == "pategan_audit.pages.tolerances"
               and not i.in_function for i in graph)
    assert any(i.source == "pategan_audit.archive" and i.target == "pategan_audit.traces.archives" and not i.in_function
               for i in graph)
    assert any(i.source == "pategan_audit.pages.done_right" and i.target == "pategan_audit.archive" and i.in_function
               for i in graph)
    assert any(i.source == "pategan_audit.implementations.registry" and i.string for i in graph)


def test_nothing_outside_pages_imports_pages(graph):
    """(a) The domain never imports presentation, at any level (function-level imports and
    importlib strings included)."""
    offenders = upward(graph)
    assert not offenders, ("the domain must not import presentation (pategan_audit.pages); move what the domain "
                           "needs below pages:\n" + "\n".join(offenders))


def test_no_import_circles(graph):
    """(b) No circle among module-level imports (module granularity)."""
    found = cycles(graph)
    assert not found, f"import circles (break them by moving the shared piece below both): {found}"


def test_function_level_imports_do_not_grow(graph):
    """(c) The ratchet of :data:`MAX_FUNCTION_LEVEL_IMPORTS`."""
    found = function_level(graph)
    assert len(found) <= MAX_FUNCTION_LEVEL_IMPORTS, (
        f"{len(found)} function-level imports of the package's own modules (at most {MAX_FUNCTION_LEVEL_IMPORTS}): "
        "import at module level; if that makes a circle, move the shared piece below both")


#: The archive command (``python -m pategan_audit.archive``): an entry point, so only presentation
#: may import it; the domain reads and writes archives through ``pategan_audit.archive_store``.
ENTRY_MODULES = {f"{PACKAGE}.archive"}


def test_the_domain_does_not_import_the_archive_command(graph):
    below = [f"{i.source}:{i.line} imports {i.target}" for i in graph
             if i.target in ENTRY_MODULES and not _in_presentation(i.source) and i.source not in ENTRY_MODULES]
    assert not below, f"the domain imports the archive command (use pategan_audit.archive_store): {below}"


def test_every_page_module_is_presentation_and_nothing_sits_where_presentation_was():
    """The one rule of what computes nothing (``runner.NOT_COMPUTING``, used by the source hash and
    by provenance) covers every module of ``pages``; no module of this tree sits at a path where
    presentation lived in earlier commits (such a module would silently drop out of the source hash)."""
    relative = [p.relative_to(PACKAGE_DIR).as_posix() for p in PACKAGE_DIR.rglob("*.py")]
    assert all(runner.computes_nothing(p) for p in relative if p.startswith("pages/"))
    former = [p for p in relative if any(p == f or p.startswith(f + "/") for f in runner.FORMER_PRESENTATION)]
    assert not former, f"{former}: a module at a former presentation path; choose another name"
    assert not runner.computes_nothing("utility/run.py") and not runner.computes_nothing("traces/records.py")


# -- the checks fail on bad graphs --------------------------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / PACKAGE
    for name, text in {"__init__.py": "", "pages/__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_an_upward_import_is_caught_at_any_level(tmp_path):
    root = _package(tmp_path, {
        "pages/card.py": "x = 1\n",
        "domain.py": "def f():\n    from .pages import card\n    return card\n",
        "other.py": "from pategan_audit.pages.card import x\n",
        "lazy.py": "TABLE = {'a': 'pategan_audit.pages.card:x'}\n",
        "fine.py": "from . import domain\n",
    })
    assert sorted(upward(imports(root))) == ["pategan_audit.domain:2 imports pategan_audit.pages.card",
                                             "pategan_audit.lazy:1 imports pategan_audit.pages.card",
                                             "pategan_audit.other:1 imports pategan_audit.pages.card"]


def test_a_circle_is_caught_but_not_through_a_function_or_type_checking(tmp_path):
    root = _package(tmp_path, {
        "a.py": "from . import b\n",
        "b.py": "from .c import thing\n",
        "c.py": "from .a import something\nthing = 1\n",
        "d.py": "def f():\n    from . import e\n",
        "e.py": "from typing import TYPE_CHECKING\nfrom . import d\nif TYPE_CHECKING:\n    from . import d as _\n",
    })
    found = imports(root)
    assert cycles(found) == [["pategan_audit.a", "pategan_audit.b", "pategan_audit.c"]]
    assert function_level(found) == ["pategan_audit.d:2"]


#: the one underscored member replicas/ may still call on a model: the table validation that
#: fit() and fit_many share (BaseGenerator._accept)
REPLICA_PRIVATE_ALLOWED = {"_accept"}
#: what a model is called in replicas/: one model, or an element of a list of models
#: (``models[r]``, ``models[idx[0]]``, ``self.models[0]``, ``self._models[j]``)
_MODEL_NAMES = {"m0", "m", "model", "first"}
_MODEL_LISTS = {"models", "_models"}


def _is_model(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _MODEL_NAMES
    if isinstance(node, ast.Subscript):  # any index, nested brackets included
        base = node.value
        return (base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)) in _MODEL_LISTS
    return False


def _model_privates(text: str) -> set[str]:
    """The underscored members (dunders aside) that ``text`` reads or calls on a model, from its syntax tree."""
    return {node.attr for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
            and _is_model(node.value)}


def test_replicas_read_models_through_public_members():
    """The replica loop and steps drive a model through its public protocol (PateGenerator's
    begin_fit ... end_fit, WganGenerator's begin_fit/end_iteration/end_fit), not its internals."""
    found = {}
    for path in sorted((runner.PACKAGE_DIR / "replicas").glob("*.py")):
        bad = _model_privates(path.read_text()) - REPLICA_PRIVATE_ALLOWED
        if bad:
            found[path.name] = sorted(bad)
    assert not found, f"replicas/ reaches into underscored model members: {found}"
    assert _model_privates("x = m0._laplace_scale(); models[r]._seen[0] = 1; m.__class__") == {"_laplace_scale", "_seen"}
    assert _model_privates("w = models[idx[0]]._charges_worst_case(); self._models[j]._x; acc._table; models[r].seen_") == {
        "_charges_worst_case", "_x"}
