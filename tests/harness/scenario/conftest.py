"""The ``write`` fixture: a scenario file in a fresh directory (``MINIMAL`` by default); the
``fake`` fixture: a fake ``harness.run.run`` (``scenario_runs``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from scenario_runs import FakeRun, Verdicts, install_fake
from scenario_text import MINIMAL


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """``write(text=MINIMAL, name="tiny")``: the file ``<tmp>/<name>.toml``."""

    def _write(text: str = MINIMAL, name: str = "tiny") -> Path:
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        return path

    return _write


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Verdicts], FakeRun]:
    return install_fake(tmp_path, monkeypatch)
