"""The run under its own host's faults, without Docker: a node lost, the history's disk full.

The history writer is given a file that refuses a write part-way through a
line (as a full disk does); the node probe is given remotes that answer as a
removed container would. The runner tests use the fake provisioner and the
in-memory Kafka of ``tests/support``: the run must end with one line, a history
that ``insync check`` judges, ``unknown`` (exit 2), and cleanup must leave the
lost node alone. The real faults are in ``test_host_faults_integration.py``.
"""

from __future__ import annotations

import errno
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_provisioner import FakeCluster, install
from mem_kafka import fake_workload

from cluster.remote import Reachable
from harness.base.history import read_history
from harness.base.history_writer import HistoryWriter
from harness.run import parse, run, watch
from harness.run.watch import HostWatch, NodeProbe
from workloads import WORKLOADS

pytestmark = pytest.mark.usefixtures("engine")  # a fake docker on PATH: nothing reaches Docker


class FillsUp:
    """A file that takes ``room`` more bytes, then refuses (ENOSPC) as a full disk does."""

    def __init__(self, raw: Any, room: int) -> None:
        self.raw, self.room = raw, room

    def write(self, data: Any) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = min(len(data), self.room)
        self.room -= n
        return int(self.raw.write(bytes(data[:n])))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def test_a_full_disk_keeps_whole_lines_and_closes_the_history(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    writer = HistoryWriter(path, start_ns=0, clock=lambda: 5)
    writer.nemesis("start", None)
    whole = path.stat().st_size
    writer._file = FillsUp(writer._file, room=30)  # half of the next line fits
    for p in range(3):
        writer.invoke(p, "send", [["send", "k", p]])  # no raise: the run's watch stops it
    assert writer.failed is not None and writer.failed.errno == errno.ENOSPC
    assert writer.dropped == 3
    writer.close()
    assert path.stat().st_size == whole  # cut back to its last whole line
    assert [op["f"] for op in read_history(path)] == ["start"]


@dataclass
class Answers:
    """A ``Reachable`` remote answering from a script, then with its last answer."""

    name: str
    script: list[str | None]
    asked: int = 0

    def unreachable(self, timeout: float) -> str | None:
        self.asked += 1
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]


def test_a_node_counts_as_lost_only_after_misses_in_a_row() -> None:
    gone = "its container insync-mine-n2 was removed"
    n2 = Answers("n2", [gone, None, gone, gone])
    assert isinstance(n2, Reachable)
    probe = NodeProbe({"n1": Answers("n1", [None]), "n2": n2, "n3": object()}, misses=2)
    assert probe.look() is None  # one slow or odd answer stops nothing
    assert probe.look() is None  # it answered again: the count starts over
    assert probe.look() is None
    fault = probe.look()
    assert fault is not None and fault.lost == ("n2",)
    assert fault.message == f"lost node(s) outside insync's faults: n2: {gone}"


@dataclass
class Target:
    halted: BaseException | None = None


@dataclass
class Failed:
    failed: OSError | None = None


def test_the_watch_halts_its_target_once_with_the_first_fault() -> None:
    target, history = Target(), Failed()
    w = HostWatch(target, history, "/r/history.jsonl", None)
    assert w.look(nodes=True) is None and target.halted is None
    history.failed = OSError(errno.ENOSPC, "No space left on device")
    fault = w.look(nodes=True)
    assert target.halted is fault and w.fault is fault
    assert fault is not None and fault.message == (
        "the history can no longer be written (No space left on device: /r/history.jsonl); "
        "the lines written so far are kept")


# -- the runner ------------------------------------------------------------------------------


@dataclass
class LostNode:
    """A node whose remote says, from its ``after``-th question on, that it is gone."""

    name: str
    after: int
    remote: Answers = field(init=False)
    logs_read: bool = False

    def __post_init__(self) -> None:
        gone = f"its container insync-mine-{self.name} was removed"
        self.remote = Answers(self.name, [None] * self.after + [gone])

    def collect_logs(self, into: Path) -> None:
        self.logs_read = True


def go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nodes: dict[str, Any]) -> Any:
    monkeypatch.setattr(watch, "HISTORY_EVERY_S", 0.05)
    monkeypatch.setattr(watch, "NODES_EVERY_S", 0.1)
    install(monkeypatch, lambda: FakeCluster(nodes=nodes))
    workload, _ = fake_workload()
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    said: list[str] = []
    flags = ["--workload", "fake", "--results-dir", str(tmp_path / "results"),
             "--cluster-name", "mine", "--time-limit", "30", "--rate", "200",
             "--quiet-time", "0.1", "--final-time-limit", "5", "--concurrency", "2",
             "--seed", "3"]
    return run(parse(flags), say=said.append, live=False), said


def check(path: Path) -> int:
    proc = subprocess.run([sys.executable, "-m", "harness", "check", str(path)],
                          capture_output=True, text=True, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode


def test_a_node_lost_mid_run_stops_it_unknown_and_is_left_out_of_cleanup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n1, n2 = LostNode("n1", after=10**6), LostNode("n2", after=5)
    result, said = go(tmp_path, monkeypatch, {"n1": n1, "n2": n2})
    assert result.exit_code == 2 and result.verdict["valid"] == "unknown"
    assert result.summary["duration_s"] < 20  # stopped, not run to its 30 s
    stopped = [line for line in said if line.startswith("run stopped")]
    assert stopped == ["run stopped: lost node(s) outside insync's faults: "
                       "n2: its container insync-mine-n2 was removed"]
    assert n1.logs_read and not n2.logs_read
    assert not result.summary["drain_finished"]
    assert check(result.run_dir.path) == 2  # the stored run gets the same verdict


def test_a_full_disk_mid_run_stops_it_unknown_with_the_history_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = HistoryWriter.__init__

    def fills_up(self: HistoryWriter, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        self._file = FillsUp(self._file, room=20_000)

    monkeypatch.setattr(HistoryWriter, "__init__", fills_up)
    result, said = go(tmp_path, monkeypatch, {})
    assert result.exit_code == 2 and result.verdict["valid"] == "unknown"
    assert [line for line in said if line.startswith("run stopped")] == [
        "run stopped: the history can no longer be written (No space left on device: "
        f"{result.run_dir.history_path}); the lines written so far are kept"]
    lines = result.run_dir.history_path.read_bytes().splitlines()
    assert lines and all(isinstance(orjson.loads(line), dict) for line in lines)
    assert check(result.run_dir.path) == 2


def test_one_reason_for_every_node_is_said_once() -> None:
    gone = "the Docker engine does not answer (connection refused)"
    probe = NodeProbe({n: Answers(n, [gone]) for n in ("n1", "n2", "n3")}, misses=1)
    fault = probe.look()
    assert fault is not None and fault.lost == ("n1", "n2", "n3")
    assert fault.message == f"lost node(s) outside insync's faults: n1, n2, n3: {gone}"


def test_removing_the_cluster_waits_for_an_engine_only_after_nodes_were_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.base.errors import EnvironmentProblem
    from harness.run.watch import HostFault

    monkeypatch.setattr(watch, "RETRY_S", 0.0)
    now = [0.0]
    w = HostWatch(Target(), Failed(), "h", None, clock=lambda: now[0])
    tries: list[float] = []

    def down() -> str:
        tries.append(now[0])
        now[0] += 10
        if len(tries) < 3:
            raise EnvironmentProblem("no Docker engine answers")
        return "3 container(s)"

    said: list[str] = []
    with pytest.raises(EnvironmentProblem):  # no nodes lost: no reason to wait
        w.retried(down, said.append)
    tries.clear()
    w.fault = HostFault("lost", ("n1",))
    assert w.retried(down, said.append) == "3 container(s)"
    assert len(tries) == 3
    assert said == ["waiting for the Docker engine to answer, to remove the cluster"]
