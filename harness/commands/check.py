"""``insync check``: not built yet."""

from __future__ import annotations

import argparse
from typing import Any

from harness.errors import UsageError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("check", help="(not built yet)")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    raise UsageError("'insync check' is not built yet")
