"""A ZooKeeper-mode broker restarted after a SIGKILL waits for its old session to expire.

Measured on 0.11.0 (and the cause of 2.8 runs whose restarted broker vanished): started
before the killed broker's registration expired, a broker dies at startup ("A broker is
already registered on the path /brokers/ids/2"). The start command's prelude is run by
a real shell here, on a node whose root is a temporary directory.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from fake_remote import FakeRemote

from cluster.broker_config import zk_reregister_wait_s
from cluster.daemon import SIGNAL_SCRIPT
from cluster.kafka_node import KILLED_AT, KafkaNode
from cluster.spec import ClusterSpec
from cluster.versions import resolve_version


@pytest.mark.parametrize(
    ("version", "overrides", "wait"),
    [((0, 10, 2, 2), {}, 9), ((2, 4, 1), {}, 9), ((2, 8, 2), {}, 21), ((3, 9, 1), {}, 21),
     ((2, 8, 2), {"zookeeper.session.timeout.ms": "6500"}, 10),
     ((2, 8, 2), {"zookeeper.session.timeout.ms": "soon"}, 21)],
    ids=["0.10-default", "2.4-default", "2.5+-default", "3.9-default", "configured",
         "unparsable-falls-back"],
)
def test_the_wait_is_the_session_timeout_and_a_tick(
    version: tuple[int, ...], overrides: dict[str, str], wait: int
) -> None:
    assert zk_reregister_wait_s(version, overrides) == wait


def node(mode: str, root: str, scripts: list[tuple[str, ...]]) -> KafkaNode:
    def handler(argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
        scripts.append(argv)
        return 0, "running 77\n", ""

    spec = ClusterSpec(name="zk", nodes=3, mode=mode,  # type: ignore[arg-type]
                       controllers=3 if mode == "kraft" else 1)
    version = resolve_version("2.8.x" if mode == "zookeeper" else "4.1.x")
    return KafkaNode("n1", "10.0.0.1", FakeRemote("n1", handler), spec, version,
                     kafka_home="/opt/kafka", client_source="10.0.0.254", root=root)


def test_a_kill_notes_its_time_in_zookeeper_mode_only(tmp_path: Path) -> None:
    scripts: list[tuple[str, ...]] = []
    assert node("zookeeper", "/base", scripts).kill_if_up() == ("running", 77)
    assert len(scripts) == 1 and scripts[0][-1] == f"/base{KILLED_AT}", "one command"
    scripts.clear()
    node("kraft", "/base", scripts).kill_if_up()
    assert len(scripts) == 1 and scripts[0][-1] == ""
    assert KILLED_AT not in node("kraft", "", []).broker.prelude
    assert node("zookeeper", "", []).broker.launch_timeout_s == 60 + 21


def run_prelude(n: KafkaNode) -> float:
    started = time.monotonic()
    # the variables the start script (cluster.daemon.LAUNCH_SCRIPT) gives its prelude
    script = f"set -e\nroot=$1 log=$2\n{n.broker.prelude}"
    subprocess.run(["sh", "-c", script, "sh", n.root, n.broker.stdout_log], check=True,
                   timeout=30)
    return time.monotonic() - started


def test_the_start_waits_out_the_old_session_then_forgets_the_kill(tmp_path: Path) -> None:
    n = node("zookeeper", str(tmp_path), [])
    marker = Path(f"{tmp_path}{KILLED_AT}")
    log = tmp_path / "var/log/kafka/stdout.log"
    marker.parent.mkdir(parents=True)
    log.parent.mkdir(parents=True)
    assert run_prelude(n) < 1, "no kill noted: no wait"
    marker.write_text(f"{int(time.time()) - 19}\n")  # killed 19 s ago: ~2 s of 21 left
    took = run_prelude(n)
    assert 0.9 < took < 4, took
    assert not marker.exists()
    assert "waiting" in log.read_text() and "ZooKeeper session" in log.read_text()
    marker.write_text(f"{int(time.time()) - 60}\n")  # long expired: no wait
    assert run_prelude(n) < 1 and not marker.exists()


def test_the_kill_command_stamps_the_time_only_when_it_killed(tmp_path: Path) -> None:
    child = subprocess.Popen(["sleep", "60"])
    pidfile, stamp = tmp_path / "kafka.pid", tmp_path / "run" / "kafka.killed-at"
    pidfile.write_text(f"{child.pid}\n")

    def kill() -> str:
        return subprocess.run(["sh", "-c", SIGNAL_SCRIPT, "insync-signal", str(pidfile), "KILL",
                               "running paused", "0", str(stamp)],
                              capture_output=True, text=True, check=True).stdout.strip()

    try:
        assert kill() == f"running {child.pid}"
    finally:
        child.wait()
    assert abs(int(stamp.read_text()) - time.time()) < 5
    stamp.unlink()
    assert kill() == "stopped" and not stamp.exists(), "nothing killed: nothing stamped"
