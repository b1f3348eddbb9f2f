"""Deliverable 2: insync's own node containers, with their sshd, treated as SSH hosts.

Docker only makes the "machines" (containers on a network insync creates,
labelled ``insync``, given ``/dev/fuse`` as a host that can run FUSE has it) and
plays their administrator (host keys, authorized_keys, starting sshd). Everything
insync does on them goes over SSH: the jars and the power-loss filesystem over
SFTP, configs, daemons, faults, logs, down. The run scripts one fault of each kind
that acts on a host (a partition that cuts the clients off too, a kill, a pause, a
clock bump, a slow disk, a power cut), so each is shown to land over SSH, not left
to a random draw; afterwards the history must be valid, every fault must have
landed without an ``error``, and nothing be left behind (no JVM, no filesystem
daemon or mount, no insync iptables chain, nothing under base_dir but the jars, the
filesystem's package and the emptied manifest), and a second ``down`` passes over
the cleared hosts. Further tests show that a host presenting another key than
known_hosts holds is refused, and that hosts without FUSE are refused a run with
disk faults in one line before anything starts.

Run with::

    .venv/bin/python -m pytest -m integration -q tests/cluster/ssh/test_ssh_integration.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from cluster.docker import containers
from cluster.docker.docker_remote import DockerRemote
from cluster.spec import ClusterSpec
from harness.bench._ssh_lab import BASE_DIR as BASE
from harness.bench._ssh_lab import ssh_lab

pytestmark = pytest.mark.integration

HOSTS = ClusterSpec(name="ssh-it", nodes=3)  # the containers playing hosts
NO_FUSE = "ssh-it-nofuse"  # hosts that cannot mount FUSE
INSYNC = [str(Path(sys.executable).parent / "insync")]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """Three node containers running sshd, their host keys NOT handed over yet; the
    inventory and the client key."""
    with ssh_lab(HOSTS.name, HOSTS.nodes, tmp_path_factory.mktemp("ssh-it"),
                 known=False, fuse=True) as lab:
        yield lab.inventory, lab.key_file


#: One fault of each kind that acts on a host, each healed before the next; those that take
#: a broker away are held 8 s, long enough for the clients to write around it. The power cut
#: comes first, while every replica is in sync: Kafka does not fsync its appends, so a
#: broker that loses its power as the last in-sync replica of a partition (after the
#: faults below shrank the ISR) comes back with an empty log and may be elected, losing
#: acknowledged writes (the catalogue's last-replica-standing) - not what this test is for.
SCHEDULE = """
[[step]]
at = 12
f = "power-loss"
value = "n3"
[[step]]
after = 8
f = "power-on"
value = "all"
[[step]]
wait = "recovered"
timeout = 90
[[step]]
after = 2
f = "start-partition"
value = { isolate = "n1" }
[[step]]
after = 8
f = "stop-partition"
[[step]]
after = 2
f = "kill"
value = "n2"
[[step]]
after = 3
f = "start"
value = "all"
[[step]]
after = 3
f = "pause"
value = "n3"
[[step]]
after = 8
f = "resume"
value = "all"
[[step]]
after = 2
f = "bump-clock"
value = { target = "n1", delta-ms = 60000 }
[[step]]
after = 3
f = "reset-clock"
[[step]]
after = 2
f = "start-disk"
value = { target = "n2", kind = "slow", ms = 50, ops = ["write", "fsync"] }
[[step]]
after = 4
f = "stop-disk"
"""
KINDS = ("start-partition", "kill", "pause", "bump-clock", "start-disk", "power-loss")


def _insync(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INSYNC, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


def test_kafka_over_ssh_survives_faults_and_leaves_nothing(
        hosts: tuple[Path, Path], tmp_path: Path) -> None:
    inventory, _ = hosts
    where = ["--hosts", str(inventory)]
    refused = _insync("cluster", "up", "--cluster-name", "sshk", *where)
    assert refused.returncode == 70 and "unknown host key" in refused.stderr
    up = _insync("cluster", "up", "--cluster-name", "sshk", *where, "--accept-new-host-keys")
    assert up.returncode == 0, up.stderr
    assert "jars synced" in up.stderr and "(cold)" in up.stderr
    warm = _insync("cluster", "up", "--cluster-name", "sshk", *where, "--fresh")
    assert warm.returncode == 0 and "(warm)" in warm.stderr, warm.stderr
    schedule = tmp_path / "faults.toml"
    schedule.write_text(SCHEDULE)
    run = _insync("run", "--cluster-name", "sshk", *where, "--time-limit", "150",
                  "--nemesis-schedule", str(schedule), "--script-tail", "5",
                  "--partition-clients", "--results-dir", str(tmp_path / "runs"))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "power-loss filesystem mounted on 3 host(s)" in run.stderr, run.stderr[-2000:]
    (history,) = tmp_path.rglob("history.jsonl")
    ops = [json.loads(line) for line in history.read_text().splitlines() if line.strip()]
    faults = {op["f"]: op for op in ops
              if op.get("process") == "nemesis" and op.get("type") != "invoke"}
    for kind in KINDS:
        assert kind in faults and "error" not in faults[kind], (kind, faults.get(kind))
    check = _insync("check", str(history))
    assert check.returncode == 0, check.stdout + check.stderr
    down = _insync("cluster", "down", "--cluster-name", "sshk", *where)
    assert down.returncode == 0, down.stderr
    for c in containers.cluster_nodes(HOSTS.name):
        left = DockerRemote(c.node, c.container).exec(
            ["sh", "-c", f"pgrep -af 'jav[a]|lazyf[s]'; grep fuse /proc/mounts; "
                         f"iptables -S | grep INSYNC; ls -A {BASE}; true"],
            timeout=120).stdout
        assert left.split() == [".insync-created.json", "kafka", "lib"], f"{c.node}: {left!r}"
    again = _insync("cluster", "down", "--cluster-name", "sshk", *where)
    assert again.returncode == 0, again.stderr


def test_a_host_with_another_key_than_known_hosts_is_refused(
        hosts: tuple[Path, Path], tmp_path: Path) -> None:
    inventory, _ = hosts
    text = inventory.read_text()
    known = tmp_path / "known_hosts"
    first = containers.cluster_nodes(HOSTS.name)[0]
    other = paramiko.RSAKey.generate(2048)
    known.write_text(f"{first.address} {other.get_name()} {other.get_base64()}\n")
    lines = [f"known_hosts = {json.dumps(str(known))}" if ln.startswith("known_hosts") else ln
             for ln in text.splitlines()]
    forged = tmp_path / "hosts.toml"
    forged.write_text("\n".join(lines) + "\n")
    out = _insync("cluster", "up", "--cluster-name", "sshk2", "--hosts", str(forged),
                  "--accept-new-host-keys")
    assert out.returncode == 70
    assert "n1" in out.stderr and "host key CHANGED" in out.stderr
    # the stage lines before it (jars ready) are progress; the refusal is one line
    errors = [ln for ln in out.stderr.splitlines() if "host key" in ln]
    assert len(errors) == 1 and "Traceback" not in out.stderr


def test_hosts_without_fuse_are_refused_disk_faults_in_one_line(tmp_path: Path) -> None:
    with ssh_lab(NO_FUSE, 3, tmp_path / "lab") as lab:
        out = _insync("run", "--cluster-name", "sshd3", "--hosts", str(lab.inventory),
                      "--nemesis", "disk", "--time-limit", "30",
                      "--results-dir", str(tmp_path / "runs"))
        states = [DockerRemote(c.node, c.container).exec(
            ["sh", "-c", f"ls -A {BASE} 2>/dev/null; true"], timeout=60).stdout
            for c in containers.cluster_nodes(NO_FUSE)]
    assert out.returncode == 69, out.stdout[-2000:] + out.stderr[-2000:]
    errors = [ln for ln in out.stderr.splitlines() if "lack" in ln]
    assert len(errors) == 1 and "Traceback" not in out.stderr
    assert all(f"n{i}: a readable and writable /dev/fuse" in errors[0] for i in (1, 2, 3))
    assert states == ["", "", ""]  # refused before anything was copied or created
