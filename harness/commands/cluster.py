"""``insync cluster``: not built yet."""

from __future__ import annotations

import argparse
from typing import Any

from harness.errors import UsageError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("cluster", help="(not built yet)")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    raise UsageError("'insync cluster' is not built yet")
