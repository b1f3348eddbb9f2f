"""A fake Docker engine for fast tests: proves a command never reached Docker.

insync reaches the engine only through the ``docker`` CLI found on ``PATH``
(``cluster.docker_cli.run_docker``, ``cluster.engine.RealHost``; no SDK, no
socket of its own). :func:`install` puts a fake ``docker`` first on ``PATH``: a
script that appends its argv to a log and exits 1. The engine check may also
look for ``dockerd`` and, as root, run ``apt-get``; a Kafka download runs
``mvn``; an image build ``debootstrap``: each is faked and logged the same way,
so a regression can neither start a real daemon nor reach the network.
``DOCKER_HOST`` points at a dead socket, so even a real client found some other
way could not reach the shared engine, and ``INSYNC_CACHE`` at an empty folder
(no cached Kafka jars: nothing runs a JVM).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Every program insync may start on its way to a cluster.
FAKED = ("docker", "dockerd", "apt-get", "mvn", "debootstrap")


@dataclass(frozen=True)
class Engine:
    """The fakes' call log, and a results folder a refused command must not create."""

    log: Path
    results: Path
    tmp: Path

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for name in FAKED:
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\nexit 1\n')
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'dead.sock'}")
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path / "cache"))
    return Engine(log, tmp_path / "results", tmp_path)
