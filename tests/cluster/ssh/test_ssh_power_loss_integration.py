"""Power-loss and disk faults on SSH hosts: the filesystem shipped, mounted, faulted, removed.

The hosts are insync's node containers running sshd (``harness.bench._ssh_lab``), given
``/dev/fuse`` as a host that can run FUSE has it. Everything goes over SSH: ``run``
copies the power-loss filesystem's package under base_dir, mounts it once to prove
FUSE works, then serves each broker's data through it. The catalogue's ``fsync-error``
scenario runs there: a leader's fsync fails once, the broker halts, the disk is healed,
and every node's power is cut and restored. ``down`` stops the daemons and takes every
mount away. The scenario must end as the catalogue expects (valid), its disk fault and
power cuts must have landed (no ``error``), and nothing may be left but the jars, the
package and the emptied manifest. A whole catalogue scenario (about five minutes), so
``slow``: ``test_ssh_integration`` puts one disk fault and one power cut on SSH hosts
in the default run.

Run with::

    .venv/bin/python -m pytest -m slow tests/cluster/ssh/test_ssh_power_loss_integration.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.docker import containers
from cluster.docker.docker_remote import DockerRemote
from harness.bench._ssh_lab import BASE_DIR as BASE
from harness.bench._ssh_lab import Lab, ssh_lab

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LAB = "ssh-fuse-it"
INSYNC = [str(Path(sys.executable).parent / "insync")]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with ssh_lab(LAB, 3, tmp_path_factory.mktemp("ssh-fuse"), fuse=True) as made:
        yield made


def _insync(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INSYNC, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


def test_power_loss_and_disk_faults_run_on_ssh_hosts_and_leave_nothing(
        lab: Lab, tmp_path: Path) -> None:
    where = ["--hosts", str(lab.inventory)]
    run = _insync("scenario", "run", "fsync-error", "--kafka-version", "4.1.2",
                  "--cluster-name", "sshfs", *where, "--results-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    said = run.stdout + run.stderr
    assert "power-loss filesystem mounted on 3 host(s)" in said, said[-2000:]
    (history,) = tmp_path.rglob("history.jsonl")
    ops = [json.loads(line) for line in history.read_text().splitlines() if line.strip()]
    faults = [op for op in ops if op.get("process") == "nemesis" and op.get("type") != "invoke"]
    for f in ("power-loss", "start-disk"):
        landed = [op for op in faults if op["f"] == f]
        assert landed, f"no {f} in the run"
        assert all("error" not in op for op in landed), [op for op in landed if "error" in op]
    down = _insync("cluster", "down", "--cluster-name", "sshfs", *where)
    assert down.returncode == 0, down.stderr
    for c in containers.cluster_nodes(LAB):
        left = DockerRemote(c.node, c.container).exec(
            ["sh", "-c", f"pgrep -af 'jav[a]|lazyf[s]'; grep fuse /proc/mounts; "
                         f"ls -A {BASE}; true"],
            timeout=120).stdout
        assert left.split() == [".insync-created.json", "kafka", "lib"], f"{c.node}: {left!r}"
