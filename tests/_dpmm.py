"""Whether the ``alternatives`` extra (dpmm) is installed: the tests that fit MST, AIM or PrivBayes
skip without it (CI installs none)."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def has_dpmm() -> bool:
    try:
        version("dpmm")
        return True
    except PackageNotFoundError:
        return False
