"""Every Kafka release insync can deploy: turning ``--kafka-version`` into one.

A release is named by its version string (``4.1.2``), a line (``4.2.x``) or
``latest``; whether Maven Central has it is asked of Maven Central
(``cluster.releases``), and what it needs is derived from its number by its
eras (``cluster.eras``). This module resolves the name and refuses, in one
line and before anything is created, a release or a mode insync cannot run.

The names other layers import from here (``KafkaVersion``, ``ERAS``, ...) are
defined in ``cluster.kafka_release`` (what a release is) and ``cluster.eras``
(what each release needs) and re-exported, so that callers ask one module about
versions whichever of the three defines the name.
"""

from __future__ import annotations

import re
from pathlib import Path

from cluster.eras import ERAS, FLOOR, VERSIONS, Era, mode_span, release, version_text
from cluster.kafka_release import (
    CLIENT_FEATURES,
    KRAFT,
    ZOOKEEPER,
    Artifact,
    KafkaVersion,
    Logging,
    Mode,
    binding_for,
    feature_since,
    line_of,
    parse_number,
)
from harness.base.errors import UsageError

__all__ = [
    "CLIENT_FEATURES",
    "ERAS",
    "FLOOR",
    "KRAFT",
    "VERSIONS",
    "ZOOKEEPER",
    "Artifact",
    "Era",
    "KafkaVersion",
    "Logging",
    "Mode",
    "binding_for",
    "check_runnable",
    "feature_since",
    "known_versions",
    "line_of",
    "mode_span",
    "names_a_line",
    "parse_number",
    "release",
    "resolve_for_mode",
    "resolve_version",
]

_LINE = re.compile(r"^(?P<line>\d+\.\d+(?:\.\d+)?)(?:\.x)?$")


def known_versions() -> list[str]:
    return [v.version for v in VERSIONS]


def _releases(listed: set[str]) -> list[tuple[int, ...]]:
    numbers = (parse_number(v) for v in listed)
    return sorted(n for n in numbers if n is not None and n >= FLOOR)


def _normal(spec: str) -> str:
    return spec.strip().lower().removeprefix("v")


def names_a_line(spec: str) -> bool:
    """Whether ``spec`` names a line (``4.2``, ``4.2.x``, ``0.10.2``, ``latest``), not a
    release (``4.2.2``, ``0.10.2.2``)."""
    text = _normal(spec)
    match = _LINE.match(text)
    exact = parse_number(text)
    return text == "latest" or (match is not None and (
        exact is None or text.endswith(".x") or len(exact) == (3 if exact[0] == 0 else 2)))


def resolve_version(spec: str, cache_root: Path | None = None) -> KafkaVersion:
    """Turn ``latest``, a line (``4.2.x``, ``4.2``, ``0.10.2.x``) or an exact release
    into the release it names, as Maven Central lists them.

    An exact catalogue release needs no listing; an exact release in a cached
    listing needs no network; a line or ``latest`` refreshes a day-old listing.
    A release Maven Central does not have is a ``UsageError`` (one line).
    """
    from cluster.releases import default_cache_root, listing

    text = _normal(spec)
    for pinned in VERSIONS:
        if text == pinned.version:
            return pinned
    exact = parse_number(text)
    match = _LINE.match(text)
    is_line = names_a_line(text)
    if not is_line and exact is None:
        raise UsageError(
            f"unknown Kafka version {spec!r}",
            hint="pass a release such as 4.1.2, a line such as 4.2.x, or latest "
            "(`insync versions` lists them)",
        )
    if not is_line:
        release(text)  # refuses numbers below the floor before any network
    root = cache_root or default_cache_root()
    listed = listing(root, fresh=is_line, wanted=() if is_line else (text,))
    numbers = _releases(listed.versions)
    if text == "latest":
        return release(version_text(numbers[-1]))
    if is_line:
        assert match is not None
        want = parse_number(match.group("line"))
        on_line = [n for n in numbers if want is not None and line_of(n) == want]
        if on_line:
            return release(version_text(on_line[-1]))
        raise UsageError(
            f"Maven Central lists no Kafka {match.group('line')} release",
            hint=f"lines from {version_text(line_of(numbers[0]))} to "
            f"{version_text(line_of(numbers[-1]))} exist; `insync versions` lists them",
        )
    if text in listed.versions:
        return release(text)
    assert exact is not None
    same_line = [version_text(n) for n in numbers if line_of(n) == line_of(exact)]
    raise UsageError(
        f"Maven Central has no Kafka {text}"
        + (f" (its line has {', '.join(same_line)})" if same_line else ""),
        hint="pass a listed release, a line such as 4.2.x, or latest "
        "(`insync versions` lists them)",
    )


def resolve_for_mode(spec: str, mode: str, cache_root: Path | None = None) -> KafkaVersion:
    """``resolve_version``, and refuse a mode the release cannot run (ZooKeeper on 4.x, ...).

    Every command checks this before it creates a directory or asks Docker
    anything; the most it touches is the Maven listing (see ``resolve_version``).
    """
    return check_runnable(resolve_version(spec, cache_root), mode)


def check_runnable(version: KafkaVersion, mode: str) -> KafkaVersion:
    """``version`` if insync can run it in ``mode``; else one ``UsageError`` line."""
    if not version.supports(mode):
        modes = sorted(version.modes)
        raise UsageError(
            f"Kafka {version.version} does not run in {mode} mode",
            hint=f"use --mode {' or '.join(modes)}, or a release that has {mode} mode "
            f"({mode_span(mode)})",
        )
    return version
