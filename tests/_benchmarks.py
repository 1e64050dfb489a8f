"""Load a script of ``benchmarks/`` as a module, for the tests of its functions (the scripts are
not a package: they run as ``python benchmarks/<name>.py``)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(stem: str) -> ModuleType:
    """``benchmarks/<stem>.py`` executed as the module ``<stem>``."""
    spec = importlib.util.spec_from_file_location(stem, BENCHMARKS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
