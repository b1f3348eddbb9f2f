"""The results sub-packages' curated names are the functions, whichever import came first."""

from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = ("results.report", "results.browser", "results.analysis")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_is_what_it_says(name: str) -> None:
    package = importlib.import_module(name)
    for exported in package.__all__:
        module = importlib.import_module(f"{name}.{exported}") if exported in (
            "ingest",) else None
        value = getattr(package, exported)
        assert not inspect.ismodule(value), f"{name}.{exported} is a module"
        if module is not None:
            assert getattr(package, exported) is module.ingest
