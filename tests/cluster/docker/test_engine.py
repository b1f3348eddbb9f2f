"""ensure_engine's decisions, driven by a fake host built from a handler function.

The fake routes every host action (commands, which, spawn, alive) through one
handler so each test states the machine it pretends to be in a few lines.
The last tests touch the real machine: detaching a process, and (integration)
a real engine answering.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from cluster.docker.client import server_version
from cluster.docker.engine import EngineInfo, RealHost, apt_install, ensure_engine, file_lock
from harness.base.errors import EnvironmentProblem

Handler = Callable[[list[str]], tuple[int, str, str]]


class FakeHost:
    """A Host whose every action is answered by ``handler(argv)``; records calls."""

    def __init__(self, handler: Handler, *, root: bool = True) -> None:
        self.handler = handler
        self.root = root
        self.calls: list[list[str]] = []

    def _ask(self, argv: list[str]) -> tuple[int, str, str]:
        self.calls.append(argv)
        return self.handler(argv)

    def run(
        self, argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        rc, out, err = self._ask(list(argv))
        return subprocess.CompletedProcess(list(argv), rc, out, err)

    def probe(self) -> tuple[str | None, str]:
        rc, out, err = self._ask(["probe"])
        return (out.strip() or None, "") if rc == 0 else (None, err)

    def spawn_detached(self, argv: Sequence[str], log_path: Path) -> int:
        return int(self._ask(["spawn", *argv])[1])

    def alive(self, pid: int) -> bool:
        return self._ask(["alive", str(pid)])[0] == 0

    def which(self, name: str) -> str | None:
        rc, out, _ = self._ask(["which", name])
        return out if rc == 0 else None

    def is_root(self) -> bool:
        return self.root

    def commands(self, first: str) -> list[list[str]]:
        return [c for c in self.calls if c[0] == first]


NOT_RUNNING = (1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.")


def machine(
    *,
    dockerd: bool = True,
    answers_after_spawn: int | None = 2,
    apt: tuple[int, str, str] = (0, "", ""),
    dockerd_dies: bool = False,
) -> Handler:
    """A machine with the docker client; dockerd installed or not; engine stopped."""
    state = {"installed": dockerd, "spawned": False, "polls": 0}

    def handler(argv: list[str]) -> tuple[int, str, str]:
        match argv:
            case ["which", "dockerd"]:
                return (0, "/usr/sbin/dockerd", "") if state["installed"] else (1, "", "")
            case ["apt-get", "install", *rest]:
                if apt[0] == 0 and "docker.io" in rest:
                    state["installed"] = True
                return apt
            case ["apt-get", *_]:
                return apt
            case ["spawn", "/usr/sbin/dockerd"]:
                state["spawned"] = True
                return 0, "4242", ""
            case ["alive", "4242"]:
                return (1, "", "") if dockerd_dies else (0, "", "")
            case ["probe"]:
                if state["spawned"] and answers_after_spawn is not None:
                    state["polls"] += 1
                    if state["polls"] > answers_after_spawn:
                        return 0, "20.10.24+dfsg1\n", ""
                return NOT_RUNNING
        raise AssertionError(f"unexpected host call {argv}")

    return handler


def run_fake(host: FakeHost, tmp_path: Path, **kw: float) -> EngineInfo:
    return ensure_engine(
        host, poll_interval=0.001, log_path=tmp_path / "d.log", lock_path=tmp_path / "l", **kw
    )


def test_already_running_engine_is_returned_without_touching_the_host(tmp_path: Path) -> None:
    host = FakeHost(lambda argv: (0, "28.1.1\n", ""), root=False)
    info = run_fake(host, tmp_path)
    assert (info.server_version, info.started, info.installed) == ("28.1.1", False, False)
    assert host.calls == [["probe"]]


@pytest.mark.parametrize(
    ("dockerd", "expected_hint"),
    [
        pytest.param(
            False, "sudo apt-get install -y docker.io && sudo sh -c 'dockerd", id="no-dockerd"
        ),
        pytest.param(
            True, "run `sudo sh -c 'dockerd >>/var/log/insync-dockerd.log", id="dockerd-installed"
        ),
    ],
)
def test_non_root_says_exactly_what_to_run(
    tmp_path: Path, dockerd: bool, expected_hint: str
) -> None:
    host = FakeHost(machine(dockerd=dockerd), root=False)
    with pytest.raises(EnvironmentProblem) as exc:
        run_fake(host, tmp_path)
    assert "not root" in exc.value.message
    assert exc.value.hint is not None and expected_hint in exc.value.hint
    assert "\n" not in exc.value.one_line()
    assert host.commands("apt-get") == [] and host.commands("spawn") == []


def test_non_root_without_socket_permission_gets_the_group_hint(tmp_path: Path) -> None:
    denied = (1, "", "permission denied while trying to connect to the Docker daemon socket")
    host = FakeHost(
        lambda argv: denied if argv[0] == "probe" else (0, "/usr/bin/" + argv[1], ""),
        root=False,
    )
    with pytest.raises(EnvironmentProblem, match="may not use it") as exc:
        run_fake(host, tmp_path)
    assert exc.value.hint is not None and "usermod -aG docker" in exc.value.hint


def test_root_starts_installed_dockerd_and_polls_until_it_answers(tmp_path: Path) -> None:
    host = FakeHost(machine(dockerd=True, answers_after_spawn=3))
    info = run_fake(host, tmp_path)
    assert (info.started, info.installed, info.server_version) == (True, False, "20.10.24+dfsg1")
    assert info.log_path == tmp_path / "d.log"
    assert host.commands("spawn") == [["spawn", "/usr/sbin/dockerd"]]
    assert host.commands("apt-get") == []
    # 2 probes before the spawn (first look, then again under the lock) + 4 polls.
    assert len(host.commands("probe")) == 6


def test_root_installs_docker_io_when_dockerd_is_missing(tmp_path: Path) -> None:
    host = FakeHost(machine(dockerd=False))
    info = run_fake(host, tmp_path)
    assert (info.started, info.installed) == (True, True)
    apt = host.commands("apt-get")
    assert [c[1] for c in apt] == ["update", "install"]
    assert "-y" in apt[1] and apt[1][-1] == "docker.io"


def test_unreachable_debian_mirror_is_one_line_problem(tmp_path: Path) -> None:
    fail = (
        100,
        "",
        "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  "
        "Temporary failure resolving 'deb.debian.org'\nE: Unable to locate package docker.io",
    )
    host = FakeHost(machine(dockerd=False, apt=fail))
    with pytest.raises(EnvironmentProblem, match="cannot reach Debian's packages") as exc:
        run_fake(host, tmp_path)
    assert "\n" not in exc.value.one_line()
    assert host.commands("spawn") == []


def test_other_apt_failures_are_reported_with_aptss_last_words() -> None:
    host = FakeHost(lambda argv: (100, "", "E: dpkg was interrupted, run 'dpkg --configure -a'"))
    with pytest.raises(EnvironmentProblem, match="dpkg was interrupted") as exc:
        apt_install(host, ["mmdebstrap"])
    assert "cannot reach" not in exc.value.message


def test_dockerd_that_exits_is_reported_with_its_log(tmp_path: Path) -> None:
    (tmp_path / "d.log").write_text("starting\nfailed to start daemon: no space left\n")
    host = FakeHost(machine(answers_after_spawn=None, dockerd_dies=True))
    with pytest.raises(EnvironmentProblem, match="exited right after starting: failed to start"):
        run_fake(host, tmp_path)


def test_dockerd_that_never_answers_times_out(tmp_path: Path) -> None:
    host = FakeHost(machine(answers_after_spawn=None))
    with pytest.raises(EnvironmentProblem, match=r"did not answer within 0.05s"):
        run_fake(host, tmp_path, start_timeout=0.05)


def test_spawn_detached_process_outlives_us_in_its_own_session(tmp_path: Path) -> None:
    host = RealHost()
    log = tmp_path / "sub" / "sleep.log"
    pid = host.spawn_detached(["sh", "-c", "echo hello; exec sleep 30"], log)
    try:
        assert host.alive(pid)
        # Fields after "(comm)": state ppid pgrp session tty_nr ...
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ppid, sid = int(stat[1]), int(stat[3])
        assert ppid != os.getpid(), "still our child: would die/zombie with us"
        assert sid != os.getsid(0), "same session: a terminal hangup would kill it"
    finally:
        os.kill(pid, signal.SIGTERM)
    assert log.exists()


def test_file_lock_excludes_a_second_holder_until_released(tmp_path: Path) -> None:
    lock = tmp_path / "sub" / "x.lock"
    order: list[str] = []

    def second() -> None:
        with file_lock(lock):
            order.append("second")

    with file_lock(lock):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.3)
        order.append("first-done")
    thread.join(timeout=10)
    assert order == ["first-done", "second"]


@pytest.mark.integration
def test_real_engine_answers() -> None:
    info = ensure_engine()
    assert info.server_version
    assert server_version() == info.server_version
