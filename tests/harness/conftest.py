"""The ``engine`` fixture (``tests/support/fake_engine.py``): a fake Docker Engine API
at ``DOCKER_HOST`` and fake tools on PATH."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SUPPORT = str(Path(__file__).resolve().parents[1] / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

from fake_engine import Engine, install  # noqa: E402


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    fake = install(tmp_path, monkeypatch)
    yield fake
    fake.api.stop()
