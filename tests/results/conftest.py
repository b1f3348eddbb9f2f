"""Synthetic run directories (``harness.bench._synth``) shared by the report tests.

Also makes ``tests/support`` importable (``stalled_run``: a run that wrote
nothing during its fault).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harness.bench._synth import INJECTABLE, write_run

SUPPORT = str(Path(__file__).resolve().parents[1] / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

#: Every injectable anomaly, planted while a fault is in force.
INVALID_RUN = {"ops": 6000, "seed": 3, "interval_s": 0.5, "inject": INJECTABLE}


@pytest.fixture(scope="session")
def invalid_run_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory with history.jsonl and test.json (no results.json, no report)."""
    return write_run(tmp_path_factory.mktemp("runs") / "queue" / "20261121T031501.123Z",
                     name="queue", **INVALID_RUN)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def valid_run_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("runs") / "queue" / "20261121T041501.123Z",
                     name="queue", ops=3000, seed=5, interval_s=0.5)


@pytest.fixture
def invalid_run(invalid_run_template: Path, tmp_path: Path) -> Path:
    """A private copy the test may write into."""
    return Path(shutil.copytree(invalid_run_template, tmp_path / "run"))


@pytest.fixture
def valid_run(valid_run_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(valid_run_template, tmp_path / "valid"))
