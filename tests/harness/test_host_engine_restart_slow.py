"""The Docker engine restarted under a running ``insync run``: one line, ``unknown``, no residue.

Slow, not in CI: restarting the engine stops every container on the machine,
not only this test's (an engine shared with other jobs, or another module's
cluster of the same CI run, would lose theirs), and it needs root and a
``dockerd`` that insync started itself (no systemd to restart it). Run it alone:
``pytest -m slow tests/harness/test_host_engine_restart_slow.py``.

The run's main phase is under way when ``dockerd`` gets SIGTERM (it stops the
containers, as a restart does) and is started again (``ensure_engine``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.docker.client import reset_client
from cluster.docker.containers import labelled_ids
from cluster.docker.engine import ensure_engine

pytestmark = [pytest.mark.slow, pytest.mark.integration]

CLUSTER = "engine-it"
INSYNC = str(Path(sys.executable).with_name("insync"))


@pytest.fixture(autouse=True)
def _close_the_shared_client() -> Iterator[None]:
    """The engine's restart drops the shared client's pooled connection; close it."""
    yield
    reset_client()


def dockerd_pid() -> int | None:
    found = subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True,
                           check=False).stdout.split()
    return int(found[0]) if found else None


def restart_engine() -> None:
    pid = dockerd_pid()
    assert pid is not None, "no dockerd to restart"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 120
    while dockerd_pid() == pid and time.monotonic() < deadline:
        time.sleep(0.5)
    assert dockerd_pid() != pid, "dockerd did not stop"
    time.sleep(2)  # down for a moment, as a restart is
    # A fresh client knocks before connecting; the old one would leave the SDK's
    # socket of its failed reconnect unclosed (a ResourceWarning, an error here).
    reset_client()
    ensure_engine()


@pytest.mark.skipif(os.geteuid() != 0, reason="restarting dockerd needs root")
def test_the_engine_restarted_mid_run(tmp_path: Path) -> None:
    ensure_engine()
    results = tmp_path / "results"
    argv = [INSYNC, "run", "--cluster-name", CLUSTER, "--results-dir", str(results),
            "--time-limit", "150", "--concurrency", "6", "--seed", "5",
            "--nemesis", "partition", "--teardown"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        history = None
        while time.monotonic() < deadline and proc.poll() is None:
            found = sorted(results.glob("*/*/history.jsonl"))
            if found and found[-1].read_bytes().count(b"\n") >= 200:
                history = found[-1]
                break
            time.sleep(0.5)
        assert history is not None, f"the run never got going: {proc.poll()}"
        restart_engine()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        ensure_engine()  # whatever happened, the machine keeps an engine
    assert "Traceback" not in err, err
    assert proc.returncode == 2, (out, err)
    stopped = [line for line in err.splitlines() if "run stopped" in line]
    assert len(stopped) == 1 and "lost node(s) outside insync's faults" in stopped[0], err
    assert "verdict: UNKNOWN" in out
    check = subprocess.run([INSYNC, "check", str(history.parent)], capture_output=True,
                           text=True, check=False)
    assert check.returncode == 2, check.stdout + check.stderr
    assert labelled_ids("container", CLUSTER) == [], "containers left behind"
    assert labelled_ids("network", CLUSTER) == [], "network left behind"
