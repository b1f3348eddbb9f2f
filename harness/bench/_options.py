"""Options several benchmarks share, checked when the command line is parsed.

A benchmark writes its inputs under ``--workdir`` (``tempfile`` makes its own
directory inside it), so a missing or wrong directory must be one usage line
before minutes of synthesis start, never a traceback from ``tempfile``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.base.paths import existing_dir


def _workdir(value: str) -> str:
    existing_dir(Path(value), hint="create it first, or leave --workdir out", label="--workdir ")
    return value


def add_workdir(parser: argparse.ArgumentParser, help: str) -> None:
    """``--workdir DIR``: an existing directory (default: the system's temporary one)."""
    parser.add_argument("--workdir", default=None, type=_workdir, help=help)
