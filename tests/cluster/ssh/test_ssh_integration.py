"""Deliverable 2: insync's own node containers, with their sshd, treated as SSH hosts.

Docker only makes the "machines" (containers on a network insync creates,
labelled ``insync``) and plays their administrator (host keys, authorized_keys,
starting sshd). Everything insync does on them goes over SSH: the jars over
SFTP, configs, daemons, faults, logs, down. The run uses partition, kill, pause
and clock faults; afterwards the history must be valid and nothing be left
behind (no JVM, no insync iptables chain, nothing under base_dir but the jars and
the emptied manifest), and a second ``down`` passes over the cleared hosts.
A second test shows that a host presenting another key than known_hosts holds
is refused.

Not run by its author (no Docker engine for them); run with::

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
INSYNC = [str(Path(sys.executable).parent / "insync")]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """Three node containers running sshd, their host keys NOT handed over yet; the
    inventory and the client key."""
    with ssh_lab(HOSTS.name, HOSTS.nodes, tmp_path_factory.mktemp("ssh-it"),
                 known=False) as lab:
        yield lab.inventory, lab.key_file


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
    run = _insync("run", "--cluster-name", "sshk", *where, "--time-limit", "40",
                  "--nemesis", "partition,kill,pause,clock", "--nemesis-interval", "5",
                  "--partition-clients", "--results-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (history,) = tmp_path.rglob("history.jsonl")
    check = _insync("check", str(history))
    assert check.returncode == 0, check.stdout + check.stderr
    down = _insync("cluster", "down", "--cluster-name", "sshk", *where)
    assert down.returncode == 0, down.stderr
    for c in containers.cluster_nodes(HOSTS.name):
        left = DockerRemote(c.node, c.container).exec(
            ["sh", "-c", f"pgrep -a java; iptables -S | grep INSYNC; ls -A {BASE}; true"],
            timeout=120).stdout
        assert left.split() == [".insync-created.json", "kafka"], f"{c.node} keeps: {left!r}"
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
