"""The shared SDK client: made once, not kept when no engine answered, and every failure
a one-line insync error (no engine: exit 69; the engine said no: exit 70)."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import pytest
from conftest import StartApi
from fake_docker_api import FakeDockerApi

from cluster.docker import client
from cluster.docker.client import DockerError, docker_client, inspect_one, server_version
from harness.base.errors import EnvironmentProblem


def test_no_engine_is_a_one_line_environment_problem_and_is_not_kept(
    fake_api: StartApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'docker.sock'}")  # nothing there
    # The SDK's unix-socket connection leaves the socket of a refused connect to the
    # garbage collector (a ResourceWarning, an error in these tests): collected here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        with pytest.raises(EnvironmentProblem) as exc:
            docker_client()
        line, code = exc.value.one_line(), exc.value.exit_code
        del exc  # its traceback holds the socket
        assert server_version() is None
        gc.collect()
    assert line.startswith(f"no Docker engine answers at unix://{tmp_path / 'docker.sock'}")
    assert "\n" not in line and code == 69
    api = fake_api()  # now an engine answers at the same address
    assert server_version() == "28.2.2"
    assert docker_client() is docker_client(), "one client, made once"
    assert api.calls.count("GET /version") == 2  # the SDK's version probe, then ours


def test_what_the_engine_refuses_is_a_docker_error_naming_what_was_asked(
    fake_api: StartApi,
) -> None:
    fake_api()  # refuses everything but its version
    with pytest.raises(DockerError) as exc:
        inspect_one("container", "insync-n1")
    assert exc.value.exit_code == 70
    assert exc.value.one_line() == (
        "Docker inspect container insync-n1 failed: "
        "fake engine refuses GET /containers/insync-n1/json")


def test_a_missing_object_is_none(fake_api: StartApi) -> None:
    fake_api(lambda call: (404, {"message": "No such image"}) if call.path != "/version"
             else (200, {"Version": "28.2.2", "ApiVersion": "1.41"}))
    assert inspect_one("image", "insync-node:abc") is None


def test_reset_uses_the_given_factory(fake_api: StartApi) -> None:
    api: FakeDockerApi = fake_api()
    made: list[int] = []

    def factory():  # type: ignore[no-untyped-def]
        made.append(1)
        return client._from_env()

    client.reset_client(factory)
    docker_client()
    docker_client()
    assert made == [1]
    assert api.calls[-1] == "GET /version"
