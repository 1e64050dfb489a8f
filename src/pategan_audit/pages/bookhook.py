"""Sphinx extension: execute the section notebooks with papermill before the book is read.

jupyter-cache hashes only a notebook's code cells, so a change in ``src/`` would not
re-execute a page (design.md §2). Instead, on ``builder-inited`` this extension papermills
each ``notebooks/<name>.ipynb`` into ``book/<name>.ipynb`` (kernel working directory = the
repository root) and the book renders those with ``execute_notebooks: "off"``.

A notebook is skipped when a hash of (notebook bytes, parameters, package source hash,
installed versions) equals the one stored beside its last successful output. A failing
notebook fails the build; its partially executed copy is kept under
``book/_build/failed/<name>.ipynb`` for inspection. Papermill's ``injected-parameters`` cell is
tagged ``remove-cell`` (the pages show their parameters as a table) and the kernels talk to the
build over IPC rather than TCP (:func:`kernel_options`). ``book/intro.md`` opens with the summary the
scorecard page computes (:mod:`pategan_audit.pages.summary`): before the notebooks run, a placeholder
is written to ``book/_generated/`` where none exists, and after them the computed summary is copied
there (:func:`place_summary`), so the page that includes it is read after it exists. The "How to
reproduce" page (``book/reproduce.md``) includes the archive table, generated from the committed
archives' ``meta.json`` into ``book/_generated/`` before the notebooks run
(:func:`place_archive_table`, :mod:`pategan_audit.pages.archives`).

Configuration (``_config.yml`` -> ``sphinx.config``):
``pategan_audit_notebooks`` (list of names, executed in order), ``pategan_audit_profile``
(default "book") and ``pategan_audit_always_run`` (pages such as the scorecard that read the
other pages' results and are cheap, so they always re-execute); the environment variable ``PATEGAN_AUDIT_PROFILE`` overrides the profile (CI uses
"smoke").
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from importlib import metadata
from pathlib import Path

from .archives import write_table
from .. import runner
from ..runner import atomic_write_bytes, atomic_write_text, source_hash

__all__ = ["setup", "notebook_key", "execute_notebook", "kernel_options", "hide_injected_parameters", "place_summary",
           "place_archive_table"]

_VERSIONED = ("torch", "numpy", "pandas", "scikit-learn", "scipy", "xgboost-cpu", "papermill")


def _versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for dist in _VERSIONED:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def notebook_key(nb_path: Path, parameters: dict) -> str:
    """Hash deciding whether a notebook must be re-executed."""
    h = hashlib.sha256()
    h.update(nb_path.read_bytes())
    h.update(json.dumps(parameters, sort_keys=True).encode())
    h.update(source_hash().encode())
    h.update(json.dumps(_versions(), sort_keys=True).encode())
    return h.hexdigest()


def kernel_options() -> dict:
    """Extra papermill/nbclient options for the page kernels: on POSIX the kernel talks to the
    build over IPC sockets (files under the Jupyter runtime directory) instead of localhost TCP,
    so ipykernel >= 7 has no reason to warn "Kernel is running over TCP without encryption"."""
    if os.name != "posix":
        return {}
    from traitlets.config import Config

    config = Config()
    config.KernelManager.transport = "ipc"
    return {"config": config}


def hide_injected_parameters(path: Path) -> None:
    """Tag papermill's ``injected-parameters`` cell ``remove-cell``: the page shows the parameters
    as a table (:func:`pategan_audit.pages.display.parameters_table`), not as raw assignments."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    changed = False
    for cell in nb.cells:
        tags = list(cell.metadata.get("tags", []))
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell.metadata["tags"] = [*tags, "remove-cell"]
            changed = True
    if changed:
        nbformat.write(nb, str(path))


def execute_notebook(repo: Path, book_dir: Path, name: str, parameters: dict, *, force: bool = False) -> bool:
    """Execute ``notebooks/<name>.ipynb`` into ``book/<name>.ipynb``; return True if it ran."""
    import papermill as pm

    nb_in = repo / "notebooks" / f"{name}.ipynb"
    if not nb_in.exists():
        raise FileNotFoundError(f"notebook {nb_in} listed in pategan_audit_notebooks does not exist")
    nb_out = book_dir / f"{name}.ipynb"
    stamp = book_dir / ".nbhash" / f"{name}.sha256"
    key = notebook_key(nb_in, parameters)
    if not force and nb_out.exists() and stamp.exists() and stamp.read_text().strip() == key:
        print(f"[pategan_audit] {name}: unchanged, not re-executed", file=sys.stderr)
        return False
    tmp_out = book_dir / "_build" / "executing" / f"{name}.ipynb"
    tmp_out.parent.mkdir(parents=True, exist_ok=True)
    print(f"[pategan_audit] executing {name} with {parameters} ...", file=sys.stderr, flush=True)
    start = time.time()
    try:
        pm.execute_notebook(
            str(nb_in), str(tmp_out), parameters=parameters, cwd=str(repo), kernel_name="python3",
            progress_bar=False, request_save_on_cell_execute=False, **kernel_options(),
        )
    except Exception as exc:
        failed = book_dir / "_build" / "failed" / f"{name}.ipynb"
        failed.parent.mkdir(parents=True, exist_ok=True)
        if tmp_out.exists():
            os.replace(tmp_out, failed)
        raise RuntimeError(f"notebook {name} failed (partial output: {failed}): {exc}") from exc
    hide_injected_parameters(tmp_out)
    os.replace(tmp_out, nb_out)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(stamp, key)
    print(f"[pategan_audit] {name}: done in {time.time() - start:.0f} s", file=sys.stderr, flush=True)
    return True


#: The summary the scorecard page writes (under ``results/``) and ``book/intro.md`` includes from
#: ``book/_generated/`` (both ignored by git): the markdown and the figure it names.
SUMMARY_FILES = ("summary.md", "summary_sections.png")
SUMMARY_SOURCE = Path("results") / "scorecard"
SUMMARY_TARGET = Path("_generated")


def place_summary(repo: Path, book_dir: Path, *, placeholder: bool) -> None:
    """Copy the summary the scorecard page wrote (``results/scorecard/summary.md`` and its figure) to
    ``book/_generated/``, where ``intro.md`` includes it; with ``placeholder`` (before the notebooks
    run), write a placeholder where no summary exists yet, so that a missing file cannot break the
    build."""
    from .summary import PLACEHOLDER

    target = book_dir / SUMMARY_TARGET
    target.mkdir(parents=True, exist_ok=True)
    if placeholder:
        if not (target / SUMMARY_FILES[0]).exists():
            atomic_write_text(target / SUMMARY_FILES[0], PLACEHOLDER)
        return
    for name in SUMMARY_FILES:
        source = repo / SUMMARY_SOURCE / name
        if source.exists():
            atomic_write_bytes(target / name, source.read_bytes())


#: The archive table ``book/reproduce.md`` includes, written beside the summary.
ARCHIVE_TABLE = "archives.md"


def place_archive_table(book_dir: Path, *, directory: str | os.PathLike | None = None) -> bool:
    """Write the archive table (:func:`pategan_audit.pages.archives.write_table`, read from the archives
    in ``directory``, default the committed ones) to ``book/_generated/``; True if it changed."""
    return write_table(book_dir / SUMMARY_TARGET / ARCHIVE_TABLE, directory)


def _on_builder_inited(app) -> None:
    from sphinx.errors import ExtensionError

    try:  # the PATEGAN_AUDIT_* run variables: a pinned source hash keys the notebooks as it keys their caches
        runner.activate(runner.RunOptions.from_env())
    except ValueError as exc:
        raise ExtensionError(str(exc)) from exc
    book_dir = Path(app.srcdir)
    repo = book_dir.parent
    profile = os.environ.get("PATEGAN_AUDIT_PROFILE", app.config.pategan_audit_profile)
    force = os.environ.get("PATEGAN_AUDIT_FORCE", "") not in ("", "0")
    always = set(app.config.pategan_audit_always_run)
    place_summary(repo, book_dir, placeholder=True)
    try:
        place_archive_table(book_dir)
    except Exception as exc:
        raise ExtensionError(f"the archive table of book/reproduce.md could not be generated: {exc}") from exc
    for name in app.config.pategan_audit_notebooks:
        try:
            execute_notebook(repo, book_dir, name, {"profile": profile}, force=force or name in always)
        except Exception as exc:
            raise ExtensionError(str(exc)) from exc
    place_summary(repo, book_dir, placeholder=False)


def setup(app):
    app.add_config_value("pategan_audit_notebooks", [], "env")
    app.add_config_value("pategan_audit_profile", "book", "env")
    app.add_config_value("pategan_audit_always_run", [], "env")  # cheap pages reading other pages' results
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
