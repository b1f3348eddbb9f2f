"""Another process that holds a cluster lock (``cluster.lock``), for as long as a test wants.

The lock is a real ``flock`` and the kernel ties it to a process, so the only
honest "other command" is another process: :func:`hold` starts a Python that
takes the lock (a cluster name, or every name with ``None``) with an argv the
test chooses, says ``held`` once it holds it, and sleeps until it is killed.
It inherits the test's environment, so it locks in the same ``XDG_STATE_HOME``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import sys, time
from cluster.lock import cluster_lock, every_cluster_lock
name, argv = sys.argv[1], sys.argv[2:]
with every_cluster_lock(argv) if name == "" else cluster_lock(name, argv):
    print("held", flush=True)
    time.sleep(600)
"""


def hold(name: str | None, argv: Sequence[str]) -> subprocess.Popen[str]:
    """A process holding ``name``'s lock (``None``: every name's), once this returns."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, name or "", *argv],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "held":
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"the lock holder did not start: {line!r} {err}")
    return proc


def kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL: the holder gets no chance to release anything itself."""
    proc.kill()
    proc.communicate(timeout=30)
