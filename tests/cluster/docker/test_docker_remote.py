"""``DockerRemote`` through the real Docker SDK against a fake Engine API: exec with
and without stdin, stderr apart, exit codes (also when the engine records them
late), deadlines, and files both ways through archives."""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import StartApi
from fake_docker_api import Call, version_only

from cluster.docker.docker_remote import DockerRemote, demultiplex
from cluster.remote import RemoteCommandFailed, write_file
from harness.base.errors import ClusterError

NODE = DockerRemote("n1", "insync-it-n1")


def shell(container: str, argv: tuple[str, ...], stdin: bytes | None) -> tuple[int, bytes, bytes]:
    """A container that knows a few commands."""
    assert container == "insync-it-n1"
    match argv:
        case ("echo", *words):
            return 0, " ".join(words).encode() + b"\n", b""
        case ("sh", "-c", script, *_rest) if "cat >" in script:
            return 0, b"", b"wrote " + str(len(stdin or b"")).encode()
        case ("false",):
            return 1, b"", b"it failed\n"
        case ("sleep", seconds):
            time.sleep(float(seconds))
            return 0, b"", b""
    return 127, b"", f"{argv[0]}: not found\n".encode()


def test_exec_returns_stdout_stderr_and_exit_code_apart(fake_api: StartApi) -> None:
    api = fake_api(exec_handler=shell)
    assert NODE.exec(["echo", "hello", "world"]).stdout == "hello world\n"
    failed = NODE.exec(["false"], check=False)
    assert (failed.exit_code, failed.stdout, failed.stderr) == (1, "", "it failed\n")
    with pytest.raises(RemoteCommandFailed, match=r"on n1: `false` exited 1: it failed"):
        NODE.exec(["false"])
    assert api.execs["exec1"].argv == ("echo", "hello", "world")
    assert not api.execs["exec1"].stdin


def test_input_reaches_stdin_and_its_end_is_seen(fake_api: StartApi) -> None:
    api = fake_api(exec_handler=shell)
    text = "x" * 200_000  # larger than one socket buffer
    write_file(NODE, "/etc/kafka/server.properties", text)
    (ex,) = api.execs.values()
    assert ex.stdin and ex.argv[3:] == ("write_file", "/etc/kafka/server.properties", "644")


def test_exec_waits_for_an_exit_code_the_engine_records_late(fake_api: StartApi) -> None:
    api = fake_api(exec_handler=shell, exit_lag=3)
    assert NODE.exec(["false"], check=False).exit_code == 1
    assert api.execs["exec1"].inspections == 4


def test_exec_past_its_deadline_is_a_cluster_error_naming_node_and_command(
    fake_api: StartApi,
) -> None:
    fake_api(exec_handler=shell)
    t0 = time.monotonic()
    with pytest.raises(ClusterError, match=r"on n1: `sleep 2` did not finish within 0.2s"):
        NODE.exec(["sleep", "2"], timeout=0.2)
    assert time.monotonic() - t0 < 1.5


def test_an_exec_costs_three_requests_and_no_process(fake_api: StartApi) -> None:
    api = fake_api(exec_handler=shell)
    NODE.exec(["echo", "x"])
    api.calls.clear()
    NODE.exec(["echo", "y"])
    assert api.calls == ["POST /containers/insync-it-n1/exec", "POST /exec/exec2/start",
                         "GET /exec/exec2/json"]


def test_an_exec_the_engine_refuses_exits_1_with_its_message(fake_api: StartApi) -> None:
    def gone(call: Call) -> tuple[int, Any]:
        if call.path.endswith("/exec"):
            return 404, {"message": "No such container: insync-it-n1"}
        return version_only(call)

    fake_api(gone)
    with pytest.raises(RemoteCommandFailed) as exc:
        NODE.exec(["true"])
    assert exc.value.one_line() == "on n1: `true` exited 1: No such container: insync-it-n1"
    unchecked = NODE.exec(["true"], check=False)  # as `docker exec` did: exit 1, its message
    assert (unchecked.exit_code, unchecked.stderr) == (1, "No such container: insync-it-n1")


def tar_of(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_files_go_up_and_come_down_as_archives(fake_api: StartApi, tmp_path: Path) -> None:
    stored: dict[str, bytes] = {}

    def archives(call: Call) -> tuple[int, Any]:
        if call.path == "/containers/insync-it-n1/archive" and call.method == "PUT":
            with tarfile.open(fileobj=io.BytesIO(call.body)) as tar:
                for member in tar.getmembers():
                    extracted = tar.extractfile(member)
                    assert extracted is not None
                    stored[f"{call.query['path'][0]}/{member.name}"] = extracted.read()
            return 200, b""
        if call.path == "/containers/insync-it-n1/archive" and call.method == "GET":
            path = call.query["path"][0]
            if path not in stored:
                return 404, {"message": f"Could not find the file {path} in container"}
            return 200, tar_of(path.rsplit("/", 1)[1], stored[path])
        return version_only(call)

    fake_api(archives)
    local = tmp_path / "jar.bin"
    local.write_bytes(b"\x00\x01binary")
    NODE.upload(local, "/opt/x/jar.bin")
    assert stored == {"/opt/x/jar.bin": b"\x00\x01binary"}
    NODE.download("/opt/x/jar.bin", tmp_path / "back" / "jar.bin")
    assert (tmp_path / "back" / "jar.bin").read_bytes() == b"\x00\x01binary"
    with pytest.raises(ClusterError, match="Could not find the file /var/log/none"):
        NODE.download("/var/log/none", tmp_path / "none")


def test_a_tree_goes_up_as_one_archive(fake_api: StartApi, tmp_path: Path) -> None:
    puts: list[dict[str, bytes]] = []

    def archives(call: Call) -> tuple[int, Any]:
        if call.path == "/containers/insync-it-n1/archive" and call.method == "PUT":
            with tarfile.open(fileobj=io.BytesIO(call.body)) as tar:
                puts.append({f"{call.query['path'][0]}/{m.name}": tar.extractfile(m).read()
                             for m in tar.getmembers() if m.isfile()})  # type: ignore[union-attr]
            return 200, b""
        return version_only(call)

    fake_api(archives)
    (tmp_path / "libs").mkdir()
    (tmp_path / "libs" / "a.jar").write_bytes(b"a")
    (tmp_path / "libs" / "b.jar").write_bytes(b"bb")
    NODE.upload_tree(tmp_path, ["libs/a.jar", "libs/b.jar"], "/opt/b")
    assert puts == [{"/opt/b/libs/a.jar": b"a", "/opt/b/libs/b.jar": b"bb"}]


@pytest.mark.parametrize(
    ("frames", "expected"),
    [
        pytest.param(b"", (b"", b""), id="empty"),
        pytest.param(b"\x01\0\0\0\0\0\0\x02ab\x02\0\0\0\0\0\0\x01e\x01\0\0\0\0\0\0\x01c",
                     (b"abc", b"e"), id="interleaved"),
        pytest.param(b"\x01\0\0\0\0\0\0\x05ab", (b"ab", b""), id="cut-short"),
    ],
)
def test_demultiplex(frames: bytes, expected: tuple[bytes, bytes]) -> None:
    assert demultiplex(frames) == expected


def containers(states: dict[str, dict[str, Any]]) -> Any:
    """An engine whose containers are ``states`` (name -> its State), inspected by name."""

    def handler(call: Call) -> tuple[int, Any]:
        if call.path == "/version":
            return version_only(call)
        name = call.path.removeprefix("/containers/").removesuffix("/json")
        if name in states:
            return 200, {"Name": f"/{name}", "State": states[name]}
        return 404, {"message": f"No such container: {name}"}

    return handler


def test_unreachable_says_why_a_container_is_lost_with_one_inspect(fake_api: StartApi) -> None:
    api = fake_api(containers({
        "insync-it-n1": {"Running": True, "Paused": False, "Status": "running"},
        "insync-it-n2": {"Running": False, "Paused": False, "Status": "exited"},
        "insync-it-n3": {"Running": True, "Paused": True, "Status": "paused"},
    }))
    assert NODE.unreachable(5) is None
    assert DockerRemote("n2", "insync-it-n2").unreachable(5) == (
        "its container insync-it-n2 is exited")
    assert DockerRemote("n3", "insync-it-n3").unreachable(5) == (
        "its container insync-it-n3 is paused")
    assert DockerRemote("n4", "insync-it-n4").unreachable(5) == (
        "its container insync-it-n4 was removed")
    assert not any("/exec" in line for line in api.calls)  # no exec: cheap to ask often


def test_unreachable_says_so_when_no_engine_answers(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from cluster.docker import client

    monkeypatch.setattr(client, "_shared", client._Shared())
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'nothing.sock'}")
    why = NODE.unreachable(5)
    client.reset_client()
    assert why == f"the Docker engine at unix://{tmp_path / 'nothing.sock'} does not answer"
