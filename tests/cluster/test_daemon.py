"""Daemon bookkeeping against a fake node whose process table is a dict, and its
one-command scripts against a real shell and real processes on this machine."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fake_remote import FakeRemote

from cluster.daemon import Daemon
from cluster.remote import ExecResult, RemoteCommandFailed
from harness.base.errors import ClusterError
from tests.support.shell_text import script_text


class FakeProcesses:
    """A node with one pidfile and a process table: enough to exercise Daemon."""

    def __init__(self) -> None:
        self.procs: dict[int, str] = {}
        self.pidfile: int | None = None
        self.next_pid = 100
        self.signals: list[tuple[str, int]] = []

    def handle(self, argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
        if argv[3:4] == ("insync-signal",):  # pidfile, signal, wanted states, polls
            sig, want = argv[5], argv[6].split()
            stat = self.procs.get(self.pidfile or -1, "")
            if self.pidfile is None or stat in ("", "Z"):
                return 0, "stopped\n", ""
            state = "paused" if stat == "T" else "running"
            if state not in want:
                return 0, f"{state}\n", ""
            self.signals.append((sig, self.pidfile))
            self.procs[self.pidfile] = {"KILL": "Z", "STOP": "T", "CONT": "S"}.get(sig, "S")
            return 0, f"{state} {self.pidfile}\n", ""
        script = script_text(argv)
        if "setsid" in script:
            if self.pidfile in self.procs and self.procs[self.pidfile] != "Z":
                return 0, f"running {self.pidfile}\n", ""
            self.next_pid += 1
            self.procs[self.next_pid] = "Sl"
            self.pidfile = self.next_pid
            return 0, f"stopped {self.next_pid}\n", ""
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
    seen: list[tuple[str, ...]] = []

    def handler(argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
        seen.append(argv)
        return 0, "42\n", ""

    daemon = Daemon(
        FakeRemote("n1", handler),
        "kafka",
        ["java", "-cp", "a b"],
        "/l",
        env={"LD_PRELOAD": "/x.so"},
    )
    assert daemon.start() == 42
    # env's argv, each value its own entry after the constant script's fixed arguments
    assert seen[0][-5:] == ("LD_PRELOAD=/x.so", "setsid", "java", "-cp", "a b")
    assert 'env "$@"' in seen[0][2] and "/x.so" not in seen[0][2], "values stay out of the text"


# -- the one-command scripts, run by a real shell on this machine ---------------------------


@dataclass(frozen=True)
class LocalRemote:
    """A ``Remote`` that runs commands here: the Daemon's scripts meet a real ``sh``,
    ``ps`` and ``kill``."""

    name: str = "local"
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def exec(self, argv: Sequence[str], *, input: str | None = None, timeout: float = 60.0,
             check: bool = True) -> ExecResult:
        self.calls.append(tuple(argv))
        proc = subprocess.run(list(argv), input=input, capture_output=True, text=True,
                              timeout=timeout, check=False)
        result = ExecResult(tuple(argv), proc.returncode, proc.stdout, proc.stderr)
        if check and not result.ok:
            raise RemoteCommandFailed(self.name, result)
        return result

    def upload(self, local: Path, remote_path: str) -> None:
        raise NotImplementedError

    def download(self, remote_path: str, local: Path) -> None:
        raise NotImplementedError


def stat_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_a_kill_is_one_command_that_returns_only_once_the_zombie_is_reaped(
    tmp_path: Path,
) -> None:
    """``kill -0`` succeeds on a zombie: a start right after a kill that did not wait
    for the reaper would take the dead JVM for a live one. Here the test itself is the
    parent, so the killed child stays a zombie until the test reaps it."""
    child = subprocess.Popen(["sleep", "60"])
    remote = LocalRemote()
    daemon = Daemon(remote, "kafka", ["true"], str(tmp_path / "out.log"), run_dir=str(tmp_path))
    (tmp_path / "kafka.pid").write_text(f"{child.pid}\n")
    outcome: list[tuple[str, int | None]] = []
    waiter = threading.Thread(target=lambda: outcome.append(daemon.signal_if("KILL", reap_s=20)))
    waiter.start()
    try:
        deadline = time.monotonic() + 10
        while stat_of(child.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stat_of(child.pid) == "Z"
        time.sleep(0.3)
        assert waiter.is_alive(), "returned while the killed process was still a zombie"
    finally:
        child.wait()  # reap: the script sees it gone
        waiter.join(timeout=10)
    assert outcome == [("running", child.pid)]
    assert len(remote.calls) == 1


def test_a_kill_whose_process_outlives_the_wait_is_an_error(tmp_path: Path) -> None:
    child = subprocess.Popen(["sleep", "60"])
    daemon = Daemon(LocalRemote(), "kafka", ["true"], str(tmp_path / "o.log"),
                    run_dir=str(tmp_path))
    (tmp_path / "kafka.pid").write_text(f"{child.pid}\n")
    try:
        with pytest.raises(ClusterError, match=rf"kafka \(pid {child.pid}\) still alive"):
            daemon.signal_if("KILL", reap_s=0.2)  # the zombie is never reaped in time
    finally:
        child.wait()


def settled(daemon: Daemon, state: str, timeout_s: float = 10.0) -> int:
    """Probe until the process is in ``state``; how many probes it took."""
    probes, deadline = 1, time.monotonic() + timeout_s
    while daemon.state() != state:
        assert time.monotonic() < deadline, f"never {state}"
        probes += 1
        time.sleep(0.01)
    return probes


def test_launch_and_signals_judge_the_state_in_the_same_command(tmp_path: Path) -> None:
    remote = LocalRemote()
    daemon = Daemon(remote, "sleeper", ["sleep", "60"], str(tmp_path / "log" / "out.log"),
                    run_dir=str(tmp_path / "run"))
    state, pid = daemon.launch()
    try:
        assert state == "stopped"
        assert daemon.launch() == ("running", pid), "a running daemon is not started twice"
        assert daemon.signal_if("STOP", ("running",)) == ("running", pid)
        probes = settled(daemon, "paused")  # SIGSTOP lands asynchronously (a loaded host)
        assert daemon.signal_if("STOP", ("running",)) == ("paused", None)
        assert daemon.launch() == ("paused", pid)
        assert daemon.signal_if("CONT", ("paused",)) == ("paused", pid)
        probes += settled(daemon, "running")
        assert len(remote.calls) == 6 + probes, "one command each"
        assert "starting sleeper" in (tmp_path / "log" / "out.log").read_text()
    finally:
        daemon.signal_if("KILL")
    assert daemon.signal_if("KILL", reap_s=1) == ("stopped", None)
