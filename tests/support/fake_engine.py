"""A fake Docker engine for fast tests: proves a command never reached Docker.

insync reaches the engine only through the Docker SDK, at ``DOCKER_HOST``
(``cluster.docker.client``). :func:`install` points ``DOCKER_HOST`` at a fake
Engine API on a unix socket (``fake_docker_api``) that logs every request as
``docker METHOD /path``, says its version and refuses everything else, and
makes the SDK client afresh for it. The engine check may also look for
``dockerd`` and, as root, run ``apt-get``; a Kafka download runs ``mvn``; an
image build ``debootstrap``: each is a fake first on ``PATH`` that logs its
argv to the same log and exits 1 (``docker`` too, should anything spawn the
CLI again), so a regression can neither start a real daemon nor reach the
network. ``INSYNC_CACHE`` points at an empty folder (no cached Kafka jars:
nothing runs a JVM).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_docker_api import FakeDockerApi

from cluster.docker import client

#: Every program insync may start on its way to a cluster.
FAKED = ("docker", "dockerd", "apt-get", "mvn", "debootstrap")


@dataclass(frozen=True)
class Engine:
    """The fakes' call log, and a results folder a refused command must not create."""

    log: Path
    results: Path
    tmp: Path
    api: FakeDockerApi

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
    api = FakeDockerApi(tmp_path / "docker.sock", log=log).__enter__()
    monkeypatch.setenv("DOCKER_HOST", api.url)
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(client, "_shared", client._Shared())  # made afresh, for the fake
    return Engine(log, tmp_path / "results", tmp_path, api)
