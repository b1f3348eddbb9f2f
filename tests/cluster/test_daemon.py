"""Daemon bookkeeping against a fake node whose process table is a dict."""

from __future__ import annotations

import pytest

from cluster.daemon import Daemon
from cluster.remote import FakeRemote


class FakeProcesses:
    """A node with one pidfile and a process table: enough to exercise Daemon."""

    def __init__(self) -> None:
        self.procs: dict[int, str] = {}
        self.pidfile: int | None = None
        self.next_pid = 100
        self.signals: list[tuple[str, int]] = []

    def handle(self, argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
        if argv[0] == "kill":
            sig, pid = argv[1].lstrip("-"), int(argv[2])
            self.signals.append((sig, pid))
            if pid in self.procs:
                self.procs[pid] = {"KILL": "Z", "STOP": "T", "CONT": "S"}.get(sig, "S")
            return 0, "", ""
        script = argv[2]
        if "setsid" in script:
            if self.pidfile in self.procs and self.procs[self.pidfile] != "Z":
                return 0, f"{self.pidfile}\n", ""
            self.next_pid += 1
            self.procs[self.next_pid] = "Sl"
            self.pidfile = self.next_pid
            return 0, f"{self.next_pid}\n", ""
        if "ps -o stat=" in script:
            if self.pidfile is None:
                return 0, "", ""
            return 0, f"{self.pidfile} {self.procs.get(self.pidfile, '')}\n", ""
        if "kill -TERM" in script:
            if self.pidfile is not None:
                self.procs[self.pidfile] = "Z"
            return 0, "", ""
        raise AssertionError(f"unexpected command {argv}")


@pytest.fixture
def node() -> tuple[FakeProcesses, Daemon]:
    procs = FakeProcesses()
    daemon = Daemon(FakeRemote("n1", procs.handle), "kafka", ["java", "Main"], "/var/log/x")
    return procs, daemon


def test_lifecycle(node: tuple[FakeProcesses, Daemon]) -> None:
    procs, daemon = node
    assert daemon.state() == "stopped" and daemon.pid() is None
    pid = daemon.start()
    assert daemon.state() == "running" and daemon.pid() == pid
    assert daemon.start() == pid, "starting a running daemon is a no-op"
    assert daemon.pause() == pid and daemon.state() == "paused"
    assert daemon.resume() == pid and daemon.state() == "running"
    assert daemon.kill() == pid and daemon.state() == "stopped"
    assert ("KILL", pid) in procs.signals
    new_pid = daemon.start()
    assert new_pid != pid
    assert daemon.stop() == new_pid and daemon.state() == "stopped"


def test_signals_to_a_stopped_daemon_hit_nothing(node: tuple[FakeProcesses, Daemon]) -> None:
    procs, daemon = node
    assert daemon.kill() is None and daemon.pause() is None
    assert procs.signals == []


def test_start_script_carries_env_and_argv() -> None:
    seen: list[str] = []

    def handler(argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
        seen.append(argv[-1])
        return 0, "42\n", ""

    daemon = Daemon(
        FakeRemote("n1", handler),
        "kafka",
        ["java", "-cp", "a b"],
        "/l",
        env={"LD_PRELOAD": "/x.so"},
    )
    assert daemon.start() == 42
    assert "LD_PRELOAD=/x.so" in seen[0] and "java -cp 'a b'" in seen[0]
