"""The ``write`` fixture: a scenario file in a fresh directory (``MINIMAL`` by default)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from scenario_text import MINIMAL


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """``write(text=MINIMAL, name="tiny")``: the file ``<tmp>/<name>.toml``."""

    def _write(text: str = MINIMAL, name: str = "tiny") -> Path:
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        return path

    return _write
