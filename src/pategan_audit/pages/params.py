"""Check a section notebook's papermill parameters in one call, before anything runs.

Every notebook under ``notebooks/`` declares its parameters in the cell tagged ``parameters``,
one annotated assignment each (``seed: int = 0  # ...``). Papermill runs a parameterised
notebook by inserting a cell of plain assignments (tagged ``injected-parameters``, source
starting ``# Parameters``) right after that cell. The first code cell after the parameters
cell calls::

    from pategan_audit.pages.params import validate_notebook_parameters
    validate_notebook_parameters(globals(), section="utility")

which

* reads the declared parameters from the annotations the parameters cell left in the
  notebook's namespace (``__annotations__``);
* reads the names papermill injected from the kernel's input history (``_ih``: the cell run
  just before this one, when it is papermill's ``# Parameters`` cell), so that a misspelled
  ``-p epsilon 1`` is an error naming the valid parameters instead of papermill's warning
  followed by a run at the defaults;
* checks every value with the rule of its name (:data:`RULES`; the annotation's type for a
  name without a rule): seeds are integers (``1.5`` is an error, not cast to 1), the profile
  is one the section knows, numbers lie in range, names in lists are known (a list may also come
  as the bracketed string ``-p implementations '["smartnoise"]'`` gives), ``results_dir`` is a
  directory this user can write (or can create), ``groundhog_target`` is a row of the Cervical
  training split (§6.2), and ``backend="dask"`` comes with a ``dask_scheduler``;
* writes the normalised values back (``-p eps 1`` arrives as the int 1 and leaves as 1.0).

:func:`check_parameters` is the same check on plain dicts, without a kernel.
"""
from __future__ import annotations

import ast
import difflib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, MutableMapping

__all__ = [
    "ParameterError",
    "RULES",
    "check_parameters",
    "injected_names",
    "section_profiles",
    "validate_notebook_parameters",
]

#: First line of the cell papermill inserts after the ``parameters`` cell (its Python translator).
PAPERMILL_HEADER = "# Parameters"


class ParameterError(ValueError):
    """A notebook parameter that is unknown, of the wrong type or out of range."""


# -- value rules: each takes (name, value, section) and returns the normalised value ----------------

def _fail(name: str, expected: str, value: Any, example: str) -> ParameterError:
    hint = " (a string: pass numbers with -p, not -r)" if isinstance(value, str) and expected != "a string" else ""
    return ParameterError(f"parameter {name} must be {expected}, got {value!r}{hint} (e.g. -p {name} {example})")


def _integer(name: str, value: Any, *, minimum: int, example: str) -> int:
    """An int (a float only when integral, e.g. ``-p seed 2.0``); never a bool or a string."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(name, f"an integer >= {minimum}", value, example)
    if isinstance(value, float) and not value.is_integer():
        raise _fail(name, f"an integer >= {minimum}", value, example)
    if value < minimum:
        raise _fail(name, f"an integer >= {minimum}", value, example)
    return int(value)


def _positive_number(name: str, value: Any, *, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise _fail(name, "a finite number > 0", value, example)
    return float(value)


def _choice(name: str, value: Any, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise ParameterError(f"parameter {name} must be one of {', '.join(map(repr, choices))}, got {value!r} "
                             f"(e.g. -p {name} {choices[0]})")
    return value


def _list_from_string(value: str) -> list | None:
    """The list a bracketed string spells (``'["a", "b"]'`` as JSON, or ``'[a, b]'``), else None.

    papermill's ``-p NAME VALUE`` passes VALUE as a string (an int, float or bool where it parses
    as one), never as a list; a bracketed string is read here so that ``-p implementations
    '["smartnoise"]'`` works as the YAML form ``-y 'implementations: [smartnoise]'`` does."""
    text = value.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        inner = text[1:-1].strip()
        parsed = [part.strip().strip("'\"") for part in inner.split(",")] if inner else []
    return parsed if isinstance(parsed, list) else None


def _names(name: str, value: Any, choices: Iterable[str], *, allow_empty: bool) -> list[str]:
    choices = tuple(choices)
    example = f"-p {name} '[\"{choices[0]}\"]' or -y '{name}: [{choices[0]}]'"
    if isinstance(value, str):
        value = _list_from_string(value) if _list_from_string(value) is not None else value
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ParameterError(f"parameter {name} must be a list of names from {', '.join(choices)}, got {value!r}; "
                             f"papermill's -p passes a string, so write the list in brackets (e.g. {example})")
    unknown = [v for v in value if v not in choices]
    if unknown:
        raise ParameterError(f"parameter {name}: unknown {unknown}; choose from {', '.join(choices)}")
    if not value and not allow_empty:
        raise ParameterError(f"parameter {name} must name at least one of {', '.join(choices)} (e.g. {example})")
    if len(set(value)) != len(value):
        raise ParameterError(f"parameter {name} lists a name twice: {list(value)}")
    return list(value)


def _string(name: str, value: Any, *, allow_empty: bool = True) -> str:
    if not isinstance(value, str) or (not allow_empty and not value):
        raise _fail(name, "a non-empty string" if not allow_empty else "a string", value, "'...'")
    return value


def _directory(name: str, value: Any) -> str:
    """A directory the notebook can write into: an existing writable directory, or a path whose
    nearest existing parent is one (the notebook creates the rest). Checked, never created here."""
    value = _string(name, value, allow_empty=False)
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise ParameterError(f"parameter {name}={value!r} is a file, not a directory; pass a directory "
                             f"(e.g. -p {name} results)")
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ParameterError(f"parameter {name}={value!r} cannot be created: {str(parent)!r} is a file, not a "
                             f"directory; pass another path (e.g. -p {name} results)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(f"parameter {name}={value!r}: {str(parent)!r} is not writable by this user; pass a "
                             f"directory you can write to (e.g. -p {name} out/results, relative to the notebook's working directory: "
                             "the repository root in the book build)")
    return value


def _cervical_train_rows() -> int:
    from ..datasets import load

    return len(load("cervical_cancer").train)


def _groundhog_target(name: str, value: Any) -> int:
    """-1 (the mini-MIAs pick the row) or a row position of the Cervical training split."""
    value = _integer(name, value, minimum=-1, example="397")
    if value >= 0:
        rows = _cervical_train_rows()
        if value >= rows:
            raise ParameterError(f"parameter {name} must be a row of the Cervical training split (0..{rows - 1}) "
                                 f"or -1 (the mini-MIAs' pick), got {value} (e.g. -p {name} 397)")
    return value


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(name, "True or False", value, "True")
    return value


def section_profiles(section: str | None) -> tuple[str, ...]:
    """The profiles a section's notebook accepts: its experiment registry's names, or the
    book-wide :data:`pategan_audit.pages.report.PROFILES` for pages whose profile is a caption."""
    if section == "utility":
        from ..utility.profiles import UTILITY_PROFILES as registry
    elif section == "auditing":
        from ..auditing import AUDIT_PROFILES as registry
    elif section == "training_traces":
        from ..traces.profiles import TRACE_PROFILES as registry
    else:
        from .report import PROFILES as registry
    order = ("smoke", "book", "resolvable", "large", "paper")
    return tuple(sorted(registry, key=lambda p: (order.index(p) if p in order else len(order), p)))


def _presets() -> tuple[str, ...]:
    from ..implementations import PRESETS

    return tuple(PRESETS)


def _table4_datasets() -> tuple[str, ...]:
    from ..reference import DATASETS

    return tuple(DATASETS)


Rule = Callable[[str, Any, "str | None"], Any]

#: Rule per parameter name, shared by every notebook that declares that name.
RULES: dict[str, Rule] = {
    "profile": lambda n, v, s: _choice(n, v, section_profiles(s)),
    "eps": lambda n, v, s: _positive_number(n, v, example="1"),
    "seed": lambda n, v, s: _integer(n, v, minimum=0, example="0"),
    "n_jobs": lambda n, v, s: _integer(n, v, minimum=1, example="2"),
    "results_dir": lambda n, v, s: _directory(n, v),
    "datasets": lambda n, v, s: _names(n, v, _table4_datasets(), allow_empty=True),
    "implementations": lambda n, v, s: _names(n, v, _presets(), allow_empty=False),
    "attacks": lambda n, v, s: _names(n, v, ("querybased", "groundhog"), allow_empty=False),
    "groundhog_target": lambda n, v, s: _groundhog_target(n, v),
    "run_ablation": lambda n, v, s: _bool(n, v),
    "backend": lambda n, v, s: _choice(n, v, ("loky", "dask")),
    "loss_definition": lambda n, v, s: _choice(n, v, ("paper", "notebook")),
    "num_teachers_compare": lambda n, v, s: _integer(n, v, minimum=1, example="5"),
    "dask_scheduler": lambda n, v, s: _string(n, v),
}


def _by_annotation(name: str, value: Any, kind: Any) -> Any:
    """Fallback for a declared name without a rule: the annotation's type, nothing more."""
    if kind is int:
        return _integer(name, value, minimum=-(2**63), example="0")
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(name, "a number", value, "1")
        return float(value)
    if kind is bool:
        return _bool(name, value)
    if kind is str:
        return _string(name, value)
    if kind is list:
        if not isinstance(value, (list, tuple)):
            raise _fail(name, "a list", value, "'[...]'")
        return list(value)
    return value


def check_parameters(
    values: Mapping[str, Any],
    declared: Iterable[str] | Mapping[str, Any],
    *,
    injected: Iterable[str] = (),
    section: str | None = None,
) -> dict[str, Any]:
    """Check and normalise a notebook's parameters.

    ``values``: the current value of every declared parameter; ``declared``: the parameter
    names (a mapping name -> annotated type lets names without a rule be type-checked);
    ``injected``: the names papermill assigned (its own ``PAPERMILL_*`` names aside). Raises :class:`ParameterError` for an injected
    name that is not declared (the message lists the valid names and the closest match), and
    for a value its rule rejects. Returns ``{name: normalised value}`` for the declared names.
    """
    kinds = dict(declared) if isinstance(declared, Mapping) else dict.fromkeys(declared)
    # papermill's own --inject-paths / --inject-output-path names are not the notebook's parameters
    unknown = [n for n in injected if n not in kinds and not n.startswith("PAPERMILL_")]
    if unknown:
        hints = []
        for n in unknown:
            close = difflib.get_close_matches(n, list(kinds), n=1, cutoff=0.5)
            hints.append(f"{n!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        where = f"the {section} notebook" if section else "this notebook"
        raise ParameterError(f"unknown parameter {', '.join(hints)}: {where} takes {', '.join(kinds)}")
    missing = [n for n in kinds if n not in values]
    if missing:
        raise ParameterError(f"declared parameters without a value: {missing}")
    out = {}
    for name, kind in kinds.items():
        rule = RULES.get(name)
        out[name] = rule(name, values[name], section) if rule else _by_annotation(name, values[name], kind)
    _check_together(out)
    return out


def _check_together(params: Mapping[str, Any]) -> None:
    """Rules between parameters: ``backend="dask"`` runs on a Dask cluster, so it needs the
    scheduler's address (``dask_scheduler``) to connect to; joblib alone would fail later with
    its own "create a Client" advice."""
    if params.get("backend") == "dask" and not params.get("dask_scheduler"):
        if "dask_scheduler" in params:
            raise ParameterError("parameter backend='dask' needs parameter dask_scheduler, the address of a running "
                                 "Dask scheduler (e.g. -p dask_scheduler tcp://10.0.0.5:8786, which also selects the "
                                 "dask backend), or -p backend loky for local workers")
        raise ParameterError("parameter backend='dask' needs a Dask scheduler, which this notebook cannot take; "
                             "use -p backend loky")


def injected_names(source: str) -> list[str]:
    """Names assigned by a papermill ``# Parameters`` cell (``[]`` for any other source)."""
    if not source.lstrip().startswith(PAPERMILL_HEADER):
        return []
    names = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def validate_notebook_parameters(namespace: MutableMapping[str, Any], *, section: str | None = None) -> dict[str, Any]:
    """Check the parameters of the running notebook (see the module docstring) and write the
    normalised values back into ``namespace`` (pass ``globals()``). Call it in the first code
    cell after the ``parameters`` cell, before anything else defines a name."""
    declared = dict(namespace.get("__annotations__", {}))
    if not declared:
        raise ParameterError("no annotated parameters in this namespace: declare them in the 'parameters' cell "
                             "as `name: type = default`")
    history = namespace.get("_ih") or namespace.get("In") or []
    # history[-1] is the cell running now; history[-2] the one before it: papermill's, if it injected one
    previous = history[-2] if len(history) >= 2 else ""
    params = check_parameters(namespace, declared, injected=injected_names(previous), section=section)
    namespace.update(params)
    return params
