"""``fake_api``: the Docker SDK client pointed at a fake Engine API built from handlers
(``tests/support/fake_docker_api.py``), made afresh for each test."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SUPPORT = str(Path(__file__).resolve().parents[2] / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

from fake_docker_api import ExecHandler, FakeDockerApi, Handler, version_only  # noqa: E402

from cluster.docker import client  # noqa: E402

StartApi = Callable[..., FakeDockerApi]


@pytest.fixture
def fake_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StartApi]:
    started: list[FakeDockerApi] = []

    def start(handler: Handler = version_only, exec_handler: ExecHandler | None = None,
              **kw: int) -> FakeDockerApi:
        api = FakeDockerApi(tmp_path / "docker.sock", handler, exec_handler, **kw).__enter__()
        started.append(api)
        monkeypatch.setenv("DOCKER_HOST", api.url)
        return api

    monkeypatch.setattr(client, "_shared", client._Shared())
    yield start
    client.reset_client()
    for api in started:
        api.stop()
