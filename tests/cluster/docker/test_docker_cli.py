"""run_docker's error mapping and the inspect helpers, against a fake ``docker``
executable on PATH (a shell script), so no engine is needed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cluster.docker.docker_cli import DockerError, inspect, inspect_one, run_docker
from harness.base.errors import EnvironmentProblem

FAKE_DOCKER = r"""#!/bin/sh
case "$*" in
  "version") echo 28.2.2 ;;
  "echo-stdin") cat ;;
  "fail") echo "Error response from daemon: conflict: unable to remove" >&2; exit 1 ;;
  "sleep") exec sleep 5 ;;
  "image inspect --format {{json .}} nosuch") echo "Error: No such image: nosuch" >&2; exit 1 ;;
  "network inspect --format {{json .}} nonet") echo "Error: network nonet not found" >&2; exit 1 ;;
  "image inspect --format {{json .}} broken") echo "Cannot connect to Docker" >&2; exit 1 ;;
  "image inspect --format {{json .}} a b") echo '{"Id": "a"}'; echo '{"Id": "b"}' ;;
  "image inspect --format {{json .}} a") echo '{"Id": "a", "Config": {"Labels": {"insync": ""}}}' ;;
  *) echo "fake docker: unexpected $*" >&2; exit 99 ;;
esac
"""


@pytest.fixture
def fake_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "docker"
    script.write_text(textwrap.dedent(FAKE_DOCKER))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return script


@pytest.mark.usefixtures("fake_docker")
def test_output_and_input_pass_through() -> None:
    assert run_docker(["version"]).stdout == "28.2.2\n"
    assert run_docker(["echo-stdin"], input="hello").stdout == "hello"
    assert run_docker(["echo-stdin"], input=b"\x00\x01", text=False).stdout == b"\x00\x01"


@pytest.mark.usefixtures("fake_docker")
def test_failure_is_a_one_line_docker_error_with_stderr() -> None:
    with pytest.raises(DockerError) as exc:
        run_docker(["fail"])
    err = exc.value
    assert err.returncode == 1 and err.args_run == ["fail"]
    assert err.one_line() == (
        "`docker fail` failed (exit 1): Error response from daemon: conflict: unable to remove"
    )
    assert run_docker(["fail"], check=False).returncode == 1


@pytest.mark.usefixtures("fake_docker")
def test_timeout_is_an_environment_problem() -> None:
    with pytest.raises(EnvironmentProblem, match=r"`docker sleep` did not finish within 0.2s"):
        run_docker(["sleep"], timeout=0.2)


def test_missing_client_is_an_environment_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem, match="client is not installed"):
        run_docker(["version"])


@pytest.mark.usefixtures("fake_docker")
def test_inspect_helpers() -> None:
    assert [d["Id"] for d in inspect("image", ["a", "b"])] == ["a", "b"]
    one = inspect_one("image", "a")
    assert one is not None and one["Config"]["Labels"] == {"insync": ""}
    assert inspect_one("image", "nosuch") is None
    assert inspect_one("network", "nonet") is None
    with pytest.raises(DockerError, match="Cannot connect"):
        inspect_one("image", "broken")
