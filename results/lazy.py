"""Lazy public names for the results sub-packages' ``__init__``s.

A sub-package's ``__init__`` names its public functions without importing
their modules: ``insync check`` prints a summary through ``results.report``
and must not pay for the report's page builder (numpy, the templates) or the
analysis (Spark's helpers) on every call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``package.<names[name]>`` on first use."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
