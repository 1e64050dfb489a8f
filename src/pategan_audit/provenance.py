"""Which computing code an archived run depends on, and whether it has changed since the run.

The archives (:mod:`pategan_audit.archive`) hold the numbers behind the book's paper-scale
tables and figures (``ganev2025elusive`` §5, §6.1, §6.2); a caption must say whether the code
that computed them is still the code of this build. One hash over the whole package (the result
cache's :func:`~pategan_audit.runner.source_hash`) changes with every edit of any module, so it
cannot tell an edited diagnosis from an edited preset. Here each archive is compared module by
module, over the modules its computation depends on:

* the **closure** of an archive: the modules its definition imports (every import of the
  domain module that defines it: ``utility/archives.py``, ``auditing/archives.py``,
  ``traces/archives.py``; in older commits, its entry of ``archive.ARCHIVES`` through the functions
  of ``archive.py`` it calls), followed through every import, the parent packages'
  ``__init__`` files and the modules named as strings for ``importlib``
  (``"pategan_audit.implementations.borealis:Borealis"``, or a dict's values); a dict of such
  strings keyed by preset name is followed only for the presets the archive ran (its records'
  ``implementation`` column, else its meta's ``generator``; all when neither says); what computes
  nothing (:data:`pategan_audit.runner.NOT_COMPUTING`: the ``pages`` package, reference numbers,
  the archives' bookkeeping; the rule of the source hash too) is never entered. The definitions
  and ``archive.py`` themselves are not compared: what they chose to run is recorded in the meta
  (profile, cells, settings), and ``run_archive``'s checks compute nothing of the records;
* a module's hash is its git blob id (12 hex digits), so that the code of an old commit is read
  from git (``git ls-tree``, ``git cat-file``, one call each per commit, cached) and the working
  tree is hashed without git;
* an archive written with per-module hashes (:func:`code_state`) is compared with them; an
  older one with the commit of each session that computed it. Without git or without that
  commit (a tarball, a shallow clone) the answer is "provenance unknown".
"""
from __future__ import annotations

import ast
import hashlib
import re
import subprocess
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, Iterable, Mapping

from .runner import PACKAGE_DIR, REPO_ROOT, computes_nothing

__all__ = ["Comparison", "Tree", "working_tree", "git_tree", "closure", "archive_presets",
           "code_state", "compare", "compare_archive"]

HASH_DIGITS = 12
_MODULE_STRING = re.compile(r"^pategan_audit(\.[A-Za-z_]\w*)+(:\w+)?$")
_SOURCE = PACKAGE_DIR.relative_to(REPO_ROOT).as_posix() if PACKAGE_DIR.is_relative_to(REPO_ROOT) else "src/pategan_audit"


def blob_id(content: bytes) -> str:
    """Git's blob id of ``content`` (what ``git ls-tree`` prints for a committed file), shortened."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()[:HASH_DIGITS]


@dataclass(frozen=True)
class Tree:
    """The package's ``.py`` files at one state: ``blobs`` maps a package-relative path to its blob
    id; ``load()`` gives every file's content (read once, when imports must be parsed)."""

    blobs: Mapping[str, str]
    load: Callable[[], Mapping[str, bytes] | None] = field(repr=False, compare=False)

    @cached_property
    def sources(self) -> Mapping[str, bytes]:
        loaded = self.load()
        if loaded is None:
            raise RuntimeError("git could not give the files of a commit it listed (a partial clone?)")
        return loaded


def _read_package_file(path: str) -> bytes:
    return (PACKAGE_DIR / path).read_bytes()


@lru_cache(maxsize=1)
def working_tree() -> Tree:
    """The package as it is on disk (what this build runs)."""
    paths = sorted(p.relative_to(PACKAGE_DIR).as_posix() for p in PACKAGE_DIR.rglob("*.py"))
    sources = {p: _read_package_file(p) for p in paths}
    return Tree({p: blob_id(s) for p, s in sources.items()}, lambda: sources)


def _git(args: list[str], stdin: bytes | None = None) -> bytes | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, input=stdin, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


@lru_cache(maxsize=None)
def git_tree(commit: str) -> Tree | None:
    """The package at ``commit`` read from git, or None when git or the commit is unavailable."""
    if not commit or not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit):
        return None
    listing = _git(["ls-tree", "-r", "-z", commit, "--", _SOURCE + "/"])
    if not listing:
        return None
    blobs: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.decode().split("\t", 1)
        kind, full = meta.split()[1:3]
        if kind == "blob" and path.endswith(".py"):
            blobs[path[len(_SOURCE) + 1:]] = full
    return Tree({p: b[:HASH_DIGITS] for p, b in blobs.items()}, lambda: _read_blobs(blobs))


def _read_blobs(blobs: Mapping[str, str]) -> dict[str, bytes] | None:
    """The content of each path's blob, in one ``git cat-file --batch`` call."""
    batch = _git(["cat-file", "--batch"], stdin="".join(f"{b}\n" for b in blobs.values()).encode())
    if batch is None:
        return None
    sources, at = {}, 0
    try:
        for path in blobs:
            header_end = batch.index(b"\n", at)
            size = int(batch[at:header_end].split()[2])
            sources[path] = batch[header_end + 1:header_end + 1 + size]
            at = header_end + 1 + size + 1
    except (ValueError, IndexError):  # a blob git could not give (a partial clone)
        return None
    return sources


# --------------------------------------------------------------------------------------------
# imports


@lru_cache(maxsize=None)
def _dependencies(path: str, blob: str, source: bytes) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Dotted names (package-relative) that module ``path`` imports or names as a string, and the
    string module names of dict entries ``"key": "pategan_audit.x"`` as (key, name) pairs."""
    tree = ast.parse(source)
    package = path.split("/")[:-1]
    plain: list[str] = []
    keyed: list[tuple[str, str]] = []
    in_tables: set[int] = set()
    for node in ast.walk(tree):  # breadth first: a dict is met before the strings it holds
        if isinstance(node, ast.Constant):
            if (isinstance(node.value, str) and id(node) not in in_tables and ":" in node.value
                    and _MODULE_STRING.match(node.value)):
                plain.append(node.value.split(":")[0].partition(".")[2])
        elif isinstance(node, ast.Import):
            plain += [a.name.partition(".")[2] for a in node.names if a.name.startswith("pategan_audit.")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] if node.level > 1 else package
                module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and (node.module + ".").startswith("pategan_audit."):
                module = node.module.partition(".")[2]
            else:
                continue
            plain += [module] + [".".join(filter(None, (module, a.name))) for a in node.names]
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Constant)
                        and isinstance(value.value, str) and _MODULE_STRING.match(value.value)):
                    keyed.append((key.value, value.value.split(":")[0].partition(".")[2]))
                    in_tables.add(id(value))
    return tuple(dict.fromkeys(plain)), tuple(dict.fromkeys(keyed))


def _deps(tree: Tree, path: str):
    return _dependencies(path, tree.blobs[path], tree.sources[path])


def _resolve(tree: Tree, dotted: str) -> list[str]:
    """The module files that importing ``dotted`` runs (parent ``__init__`` files first); for a
    name inside a module (``a.b.SomeClass``) the module that defines it; empty outside the package."""
    parts = dotted.split(".") if dotted else []
    while True:
        stem = "/".join(parts)
        for candidate in ([stem + ".py", stem + "/__init__.py"] if parts else ["__init__.py"]):
            if candidate in tree.blobs:
                parents = ["/".join([*parts[:i], "__init__.py"]) for i in range(len(parts))]
                return [p for p in dict.fromkeys([*parents, candidate]) if p in tree.blobs]
        if not parts:
            return []
        parts = parts[:-1]


def _archive_roots(tree: Tree, name: str | None) -> frozenset[str] | None:
    """Dotted modules that the definition of archive ``name`` imports (every archive's when None),
    or None when the code of ``tree`` does not define it. The definitions sit beside each domain's
    code (:func:`_definitions`: every import of the module that defines the archive counts), or, in
    older commits, in ``archive.py`` itself (followed through the functions its entry calls)."""
    if "archive.py" not in tree.blobs:
        return None
    definitions = _definitions(tree)
    if not definitions:  # the older layout: every archive defined in archive.py
        return _roots_in(tree.blobs["archive.py"], tree.sources["archive.py"], name)
    chosen = [path for path, names in definitions.items() if name is None or name in names]
    return frozenset(d for path in chosen for d in _deps(tree, path)[0]) if chosen else None


def _definitions(tree: Tree) -> dict[str, frozenset[str]]:
    """The modules ``archive.py`` imports that define archives (a module-level ``ARCHIVES`` dict
    with literal names: ``utility/archives.py``, ...), each with the names it defines."""
    found: dict[str, frozenset[str]] = {}
    for dotted in _deps(tree, "archive.py")[0]:
        path = (_resolve(tree, dotted) or [""])[-1]
        if path and path != "archive.py" and path not in found:
            names = _table_names(tree.blobs[path], tree.sources[path])
            if names:
                found[path] = names
    return found


@lru_cache(maxsize=None)
def _table_names(blob: str, source: bytes) -> frozenset[str]:
    """The literal keys of a module-level ``ARCHIVES = {...}`` in ``source`` (empty if none)."""
    for node in ast.parse(source).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "ARCHIVES" and isinstance(node.value, ast.Dict):
            return frozenset(k.value for k in node.value.keys if isinstance(k, ast.Constant))
    return frozenset()


@lru_cache(maxsize=None)
def _roots_in(blob: str, source: bytes, name: str | None) -> frozenset[str] | None:
    module = ast.parse(source)
    defs: dict[str, ast.AST] = {}
    table: dict[str, ast.AST] = {}
    roots: set[str] = set()
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    defs[t.id] = node.value
                    if t.id == "ARCHIVES" and isinstance(node.value, ast.Dict):
                        table = {k.value: v for k, v in zip(node.value.keys, node.value.values)
                                 if isinstance(k, ast.Constant)}
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            roots.add(node.module or "")
    if name is not None and name not in table:
        return None
    todo = [table[name]] if name is not None else list(table.values())
    seen: set[str] = {"ARCHIVES", "run_archive", "main"}  # the entry points run every archive
    while todo:
        top = todo.pop()
        local = {n.id for n in ast.walk(top) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | \
            {n.arg for n in ast.walk(top) if isinstance(n, ast.arg)}  # a local ``main`` is not the CLI
        for node in ast.walk(top):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                base = node.module or ""
                roots.update([base] + [".".join(filter(None, (base, a.name))) for a in node.names])
            elif isinstance(node, ast.Name) and node.id in defs and node.id not in seen | local:
                seen.add(node.id)
                todo.append(defs[node.id])
    return frozenset(roots)


def closure(name: str | None, *, presets: Iterable[str] | None = None, tree: Tree | None = None) -> frozenset[str]:
    """The computing modules (package-relative paths) archive ``name``'s computation depends on
    in ``tree`` (default: the working tree); ``presets``: the presets it ran (None: all). ``name``
    None, or a name ``archive.ARCHIVES`` does not define: every archive's."""
    tree = tree or working_tree()
    roots = _archive_roots(tree, name)
    if roots is None:  # archive.py of that code lacks it: today's definition, else every archive's
        roots = _archive_roots(working_tree(), name) or _archive_roots(tree, None) or frozenset()
    wanted = None if presets is None else set(presets)
    found: set[str] = set()
    tables: set[tuple[str, str]] = set()  # (key, dotted) entries met so far
    followed: set[tuple[str, str]] = set()
    todo = [m for r in sorted(roots) for m in _resolve(tree, r)]
    while todo:
        while todo:
            path = todo.pop()
            if path in found or computes_nothing(path):
                continue
            found.add(path)
            plain, keyed = _deps(tree, path)
            todo += [m for d in plain for m in _resolve(tree, d)]
            tables.update(keyed)
        # a table keyed by preset names (a key that names an implementations/ module somewhere) is
        # followed for the archive's presets only; any other table entirely
        preset_names = {key for key, target in tables if target.startswith("implementations.")}
        for entry in sorted(tables - followed):
            key, dotted = entry
            if wanted is None or key in wanted or key not in preset_names:
                followed.add(entry)
                todo += _resolve(tree, dotted)
    return frozenset(found)


def archive_presets(records: Any, meta: Mapping) -> set[str] | None:
    """The presets an archive ran: its records' ``implementation`` values (a label's text before
    " (", e.g. "corrected (replace-one blocks)"), else the first word of its meta's ``generator``;
    None when neither is there (then every preset counts)."""
    if records is not None and "implementation" in getattr(records, "columns", ()):
        return {str(v).split(" (")[0] for v in records["implementation"].dropna().unique()}
    generator = meta.get("generator")
    if isinstance(generator, str) and generator.strip():
        return {re.split(r"[\s,]", generator.strip())[0]}
    return None


def code_state(name_or_modules: str | Iterable[str] | None = None) -> dict[str, dict[str, str]]:
    """``{"computing_modules": {path: blob id}}`` of the working tree, for an archive's meta: the
    closure of archive ``name`` (all presets), the given module paths, or (None) every archive's."""
    tree = working_tree()
    if name_or_modules is None or isinstance(name_or_modules, str):
        modules = closure(name_or_modules)
    else:
        modules = set(name_or_modules)
        unknown = sorted(modules - set(tree.blobs))
        if unknown:
            raise ValueError(f"{unknown}: not modules of the package; give package-relative paths such as "
                             "'implementations/borealis.py'")
    return {"computing_modules": {p: tree.blobs[p] for p in sorted(modules)}}


# --------------------------------------------------------------------------------------------
# comparison


@dataclass(frozen=True)
class Comparison:
    """Whether an archive's computing code differs from this build's: ``changed`` modules (in both,
    different content), ``new`` (depended on now, absent from the recorded code), ``removed``
    (depended on then, gone now); ``unknown``: recorded commits git cannot read here."""

    changed: tuple[str, ...] = ()
    new: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    against: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    uncommitted: bool = False

    @property
    def status(self) -> str:
        if self.changed or self.new or self.removed:
            return "changed"
        return "unknown" if self.unknown or not self.against else "unchanged"

    def modules(self, limit: int = 12) -> str:
        """"a.py, b.py changed; c.py new" (at most ``limit`` names, then how many more)."""
        named = [(p, kind) for kind, paths in (("changed", self.changed), ("new", self.new),
                                                ("removed", self.removed)) for p in paths]
        shown = named[:limit]
        parts = [", ".join(p for p, k in shown if k == kind) + f" {kind}" for kind in ("changed", "new", "removed")
                 if any(k == kind for _, k in shown)]
        more = f" and {len(named) - limit} more" if len(named) > limit else ""
        return "; ".join(parts) + more

    def sentence(self) -> str:
        """The caption's clause on the code."""
        if self.status == "changed":
            text = f"its computing code has changed since it was computed: {self.modules()}"
        elif self.status == "unchanged":
            text = "the archive's computing code is unchanged since it was computed"
        else:
            return f"provenance unknown: {self._missing()}"
        if self.unknown:
            text += f"; {self._missing()}, not compared"
        if self.uncommitted:
            text += "; a session ran with uncommitted edits in src/ (not recorded), compared with its commit"
        return text

    def _missing(self) -> str:
        commits = [c[:10] for c in self.unknown if c != "unrecorded"]
        parts = ([f"commit {', '.join(commits)} not in this clone"] if commits else []) + \
            (["no commit recorded"] if "unrecorded" in self.unknown else [])
        return "; ".join(parts) or "no commit recorded"

    def short(self) -> str:
        """One cell of a table: "unchanged", "changed: ..." or "provenance unknown"."""
        return {"changed": f"changed: {self.modules(6)}", "unchanged": "unchanged"}.get(self.status,
                                                                                       "provenance unknown")


def _states(meta: Mapping) -> list[Mapping]:
    """Each recorded code state of an archive: one per session (resumed runs), else the meta itself."""
    sessions = [s for s in meta.get("sessions") or [] if isinstance(s, Mapping)]
    return sessions or [meta]


def compare(name: str, meta: Mapping, records: Any = None, *, now: Tree | None = None) -> Comparison:
    """Compare the code that computed archive ``name`` (``meta``: each session's recorded module
    hashes or commit) with ``now`` (default: the working tree), over the modules its computation
    depends on (the presets its ``records`` hold)."""
    now = now or working_tree()
    presets = archive_presets(records, meta)
    current = closure(name, presets=presets, tree=now)
    changed, new, removed, against, unknown, dirty = set(), set(), set(), [], [], False
    for state in _states(meta):
        recorded = state.get("computing_modules")
        if isinstance(recorded, Mapping) and recorded:
            blobs, then = dict(recorded), set(recorded)
            against.append("recorded module hashes")
        else:
            commit = str(state.get("git_commit") or "")
            tree = git_tree(commit) if commit else None
            if tree is None:
                if (commit or "unrecorded") not in unknown:
                    unknown.append(commit or "unrecorded")
                continue
            gone = set(tree.blobs) - set(now.blobs)  # its closure is read only when some module is gone
            try:
                then = closure(name, presets=presets, tree=tree) & gone if gone else set()
            except RuntimeError:  # git listed the commit but could not give its files
                unknown.append(commit)
                continue
            blobs = dict(tree.blobs)
            against.append(commit)
            dirty = dirty or bool(state.get("src_uncommitted_changes"))
        changed |= {p for p in current if p in blobs and blobs[p][:HASH_DIGITS] != now.blobs[p][:HASH_DIGITS]}
        new |= {p for p in current if p not in blobs}
        removed |= {p for p in then if p not in now.blobs}
    return Comparison(tuple(sorted(changed)), tuple(sorted(new - changed)), tuple(sorted(removed)),
                      tuple(dict.fromkeys(against)), tuple(unknown), dirty)


def compare_archive(archive: Any, *, now: Tree | None = None) -> Comparison:
    """:func:`compare` for an :class:`~pategan_audit.archive.Archive`."""
    return compare(archive.name, archive.meta, archive.records, now=now)
