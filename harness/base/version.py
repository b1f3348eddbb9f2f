"""The version of the installed insync, for ``--version`` and every run's test.json."""

from __future__ import annotations


def insync_version() -> str:
    """The installed distribution's version, or ``"unknown"`` when running from a bare tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("insync")
    except PackageNotFoundError:
        return "unknown"
