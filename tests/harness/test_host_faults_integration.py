"""The harness under its own host's faults, on ONE real 3-node cluster.

Each run is ``insync run`` as a subprocess, as a user would start it; the host
fault comes from outside while its main phase goes on:

- the results directory's disk fills up (a 96 KiB tmpfs as ``--results-dir``;
  needs root to mount, skipped otherwise);
- a node's container is removed (``docker rm -f``), with a partition nemesis
  and ``--teardown``, which also removes the shared cluster.

Each must end within seconds of the fault with one line saying what happened,
exit 2 (``unknown``: the drain never ran), no traceback, a history that
``insync check`` judges the same, and nothing of the cluster left behind.
The Docker engine restarted mid-run is ``test_host_engine_restart_slow.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from real_cluster import three_nodes

from cluster.docker.client import docker_client
from cluster.docker.containers import container_name, labelled_ids

pytestmark = pytest.mark.integration

CLUSTER = "host-it"
INSYNC = str(Path(sys.executable).with_name("insync"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with three_nodes(CLUSTER) as name:
        yield name


def start(results: Path, *extra: str) -> subprocess.Popen[str]:
    argv = [INSYNC, "run", "--cluster-name", CLUSTER, "--results-dir", str(results),
            "--time-limit", "150", "--concurrency", "6", "--seed", "5", *extra]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_dir(results: Path) -> Path:
    found = sorted(results.glob("*/*/history.jsonl"))  # <name>/<timestamp>/
    return found[-1].parent if found else results / "none"


def wait_for_ops(results: Path, lines: int, proc: subprocess.Popen[str]) -> None:
    """Until the running history holds ``lines`` lines (the main phase is under way)."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        history = run_dir(results) / "history.jsonl"
        if history.exists() and history.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.5)
    raise AssertionError(f"the run never reached {lines} ops: {proc.poll()}")


def check(path: Path) -> int:
    proc = subprocess.run([INSYNC, "check", str(path)], capture_output=True, text=True,
                          check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode


def stopped_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "run stopped" in line]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_the_results_disk_filling_up_mid_run(cluster: str, tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(full)], check=True)
    try:
        proc = start(full)
        out, err = proc.communicate(timeout=420)
        assert "Traceback" not in err, err
        assert proc.returncode == 2, (out, err)
        assert len(stopped_lines(err)) == 1, err
        assert "the history can no longer be written (No space left on device" in err
        where = run_dir(full)
        lines = (where / "history.jsonl").read_bytes().splitlines()
        assert len(lines) > 50 and all(isinstance(orjson.loads(x), dict) for x in lines)
        assert check(where) == 2
    finally:
        subprocess.run(["umount", str(full)], check=False)


def test_a_node_container_removed_mid_run(cluster: str, tmp_path: Path) -> None:
    results = tmp_path / "results"
    proc = start(results, "--nemesis", "partition", "--teardown")
    try:
        wait_for_ops(results, 200, proc)
        removed_at = time.monotonic()
        docker_client().api.remove_container(container_name(CLUSTER, "n2"), force=True)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # closes the pipes: an open one warns in a later test
    assert "Traceback" not in err, err
    assert proc.returncode == 2, (out, err)
    assert stopped_lines(err) == [
        "insync: run stopped: lost node(s) outside insync's faults: "
        f"n2: its container {container_name(CLUSTER, 'n2')} was removed"], err
    assert time.monotonic() - removed_at < 150  # stopped, not run to its time limit
    assert "verdict: UNKNOWN" in out
    assert check(run_dir(results)) == 2
    assert labelled_ids("container", CLUSTER) == []
