"""How the book's pages show their numbers: nothing truncated, every figure text readable.

Every notebook under ``notebooks/`` calls :func:`setup_page` once, in its first code cell, and
shows its parameters with :func:`parameters_table` (the raw ``parameters`` cell is hidden in
the HTML by its ``remove-cell`` tag)::

    from pategan_audit.pages.display import parameters_table, setup_page

    validate_notebook_parameters(globals(), section="utility")
    setup_page()
    parameters_table(globals())

:func:`setup_page`

* sets pandas' display options so that no table is ever cut: every row, every column and the
  full text of every cell (:data:`PANDAS_OPTIONS`); the book's CSS
  (``book/_static/pategan_audit.css``) makes wide tables scroll sideways instead, and keeps
  long text cells (marked by :func:`frame_html`) at a readable width;
* sets the figure theme (:func:`pategan_audit.pages.plotting.set_theme`), whose font sizes are all
  at least :data:`MIN_FONT_PT` points;
* silences the warnings that our own code and data cause and that say nothing to a reader
  (:data:`QUIET_WARNINGS`), and the kernel's "KeyboardInterrupt caught in kernel" log line:
  jupyter_client's ``KernelManager.shutdown_kernel`` always interrupts (SIGINT) the kernel before
  asking it to stop, and ipykernel logs that interrupt at ERROR level when it lands while a
  message is being handled. No setting of jupyter_client, nbclient, papermill or ipykernel turns
  the interrupt off, so a filter on the kernel's logger drops that one line (other kernel errors
  still print). The other build noise, "Kernel is running over TCP without encryption", is
  configuration: the book's kernels use IPC sockets (:func:`pategan_audit.pages.bookhook.kernel_options`).
"""
from __future__ import annotations

import ast
import io
import logging
import re
import tokenize
import warnings
from typing import Any, Iterable, Mapping

import pandas as pd

from ..implementations.base import ConstantColumnWarning
from .plotting.theme import MIN_FONT_PT

__all__ = ["LONG_TEXT_CHARS", "MIN_FONT_PT", "PANDAS_OPTIONS", "QUIET_WARNINGS", "frame_html", "setup_page", "parameters_table",
           "parameter_descriptions"]


#: pandas display options of every page: never truncate a table, a column or a cell.
PANDAS_OPTIONS: dict[str, Any] = {
    "display.max_rows": None,
    "display.min_rows": None,
    "display.max_columns": None,
    "display.max_colwidth": None,
    "display.max_seq_items": None,
    "display.width": None,
    "display.expand_frame_repr": False,  # a printed frame stays one block (the HTML page scrolls it)
    "display.show_dimensions": False,
    "styler.render.max_elements": 10_000_000,
    "styler.render.max_rows": None,
    "styler.render.max_columns": None,
}

#: (category, message regex, module regex) of warnings silenced on every page: each comes from
#: our own code or bundled data, is expected, and is stated on the page where it matters (the
#: dataset notices are listed under the tables they concern).
QUIET_WARNINGS: tuple[tuple[type[Warning], str, str], ...] = (
    (UserWarning, r"Kaggle Credit: only the authors' 20% test split", ""),  # datasets.load("credit")
    (UserWarning, "IProgress not found", ""),  # tqdm.auto in a kernel without ipywidgets: the text bar is used
    # the audit's worst-case tables and Cervical's all-zero columns are constant on purpose: the per-fit
    # advice is for library users who fit their own tables, not for the pages
    (ConstantColumnWarning, "", ""),
    (FutureWarning, "", r"pategan_audit(\.|$)"),  # pandas/numpy deprecations met by our own code
    (DeprecationWarning, "", r"pategan_audit(\.|$)"),
)

#: A table cell with at least this many characters of text is marked ``class="pa-text"`` in the
#: HTML of a DataFrame, so that the book's CSS keeps it at a readable width (it wraps there)
#: instead of letting the table squeeze it to its longest word.
LONG_TEXT_CHARS = 40
_LONG_CELL = re.compile(r"<td>([^<]{%d,})</td>" % LONG_TEXT_CHARS)

_KERNEL_NOISE = ("KeyboardInterrupt caught in kernel",)


class _DropKernelNoise(logging.Filter):
    """Drop the kernel log line that every clean shutdown under papermill produces."""

    def filter(self, record: logging.LogRecord) -> bool:  # noqa: A003 - logging's name
        return not str(record.msg).startswith(_KERNEL_NOISE)


def _quiet_kernel_log() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book extras
        return
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    log = getattr(kernel, "log", None)
    if isinstance(log, logging.LoggerAdapter):
        log = log.logger
    if isinstance(log, logging.Logger) and not any(isinstance(f, _DropKernelNoise) for f in log.filters):
        log.addFilter(_DropKernelNoise())


def frame_html(df: pd.DataFrame) -> str | None:
    """pandas' HTML of ``df``, the table marked ``class="pa-frame"`` and its long text cells
    ``class="pa-text"`` (see :data:`LONG_TEXT_CHARS`): the book's CSS keeps the other cells of such
    a table on one line and wraps the long ones at a readable width. The notebook's HTML
    formatter for DataFrames after :func:`setup_page`."""
    html = df._repr_html_()
    if html is None:
        return None
    html = html.replace('class="dataframe"', 'class="dataframe pa-frame"', 1)
    return _LONG_CELL.sub(r'<td class="pa-text">\1</td>', html)


def _register_frame_html() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)


def setup_page(*, quiet: bool = True) -> None:
    """Display settings of a book page (see the module docstring); call once per notebook.

    ``quiet=False`` keeps every warning (for debugging a page)."""
    from .plotting import set_theme

    for key, value in PANDAS_OPTIONS.items():
        pd.set_option(key, value)
    set_theme()
    _register_frame_html()
    if quiet:
        for category, message, module in QUIET_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=category, module=module)
        _quiet_kernel_log()


def parameter_descriptions(source: str) -> dict[str, tuple[Any, str]]:
    """``{name: (default, comment)}`` of the annotated assignments ``name: type = default  # comment``
    in a ``parameters`` cell's source (a default that is not a literal is given as its source text)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    comments: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError):
        pass
    out: dict[str, tuple[Any, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            try:
                default = ast.literal_eval(node.value)
            except ValueError:
                default = ast.get_source_segment(source, node.value)
            out[node.target.id] = (default, comments.get(node.end_lineno or node.lineno, ""))
    return out


def _parameters_source(namespace: Mapping[str, Any], names: Iterable[str]) -> str:
    """The source of the ``parameters`` cell from IPython's input history (the latest cell that
    declares every one of ``names`` with an annotation)."""
    names = list(names)
    for source in reversed(list(namespace.get("_ih") or namespace.get("In") or [])):
        declared = parameter_descriptions(source)
        if declared and all(n in declared for n in names):
            return source
    return ""


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if value == "" else value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(str, value)) + "]" if value else "[] (empty)"
    return repr(value) if isinstance(value, float) else str(value)


def parameters_table(namespace: Mapping[str, Any] | Iterable[str], values: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The parameters of this run as a small table: value (and the default where papermill
    changed it) and the meaning given by the comment in the ``parameters`` cell.

    ``namespace``: the notebook's ``globals()`` (its parameters are the annotated names of the
    ``parameters`` cell); or an iterable of names, whose values are read from ``values``.
    """
    if isinstance(namespace, Mapping):
        names = list(namespace.get("__annotations__", {}))
        source_ns: Mapping[str, Any] = namespace
        values = namespace if values is None else values
    else:
        names = list(namespace)
        source_ns = values or {}
        values = values or {}
    missing = [n for n in names if n not in values]
    if missing:
        raise KeyError(f"parameters without a value: {missing}")
    declared = parameter_descriptions(_parameters_source(source_ns, names))
    rows = []
    for name in names:
        default, meaning = declared.get(name, (None, ""))
        shown = _show(values[name])
        if name in declared and _show(default) != shown:
            shown += f" (default {_show(default)})"
        rows.append({"parameter": name, "value": shown, "meaning": meaning})
    return pd.DataFrame(rows, columns=["parameter", "value", "meaning"]).set_index("parameter")
