"""A long-running process inside a node, tracked by a pidfile.

Brokers and ZooKeeper servers run as daemons *inside* their node (whose PID 1
is an init that reaps them), not as the node's main process. That is what
lets a nemesis SIGKILL, SIGSTOP and restart the JVM while the node, its
network identity and its data directory stay.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cluster.remote import Remote
from harness.base.errors import ClusterError

State = Literal["running", "paused", "stopped"]

RUN_DIR = "/var/run/insync"


@dataclass(frozen=True)
class Daemon:
    """``argv`` run under ``env`` on ``remote``, its output appended to ``stdout_log``."""

    remote: Remote
    name: str
    argv: Sequence[str]
    stdout_log: str
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str = "/"
    #: Where the pidfile lives (under an SSH host's base directory, there).
    run_dir: str = RUN_DIR

    @property
    def pidfile(self) -> str:
        return f"{self.run_dir}/{self.name}.pid"

    def start(self) -> int:
        """Start the process unless it already runs; return its pid."""
        envs = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(self.env.items()))
        script = f"""
set -e
mkdir -p {shlex.quote(self.run_dir)} "$(dirname {shlex.quote(self.stdout_log)})"
if [ -f {self.pidfile} ]; then
  # kill -0 succeeds on a zombie: only a live (or stopped) process counts.
  case "$(ps -o stat= -p "$(cat {self.pidfile})" 2>/dev/null)" in
    ""|Z*) ;;
    *) cat {self.pidfile}; exit 0 ;;
  esac
fi
cd {shlex.quote(self.workdir)}
echo "=== insync: starting {self.name} at $(date -u +%FT%TZ)" >> {shlex.quote(self.stdout_log)}
env {envs} setsid {shlex.join(self.argv)} >> {shlex.quote(self.stdout_log)} 2>&1 < /dev/null &
echo $! > {self.pidfile}
cat {self.pidfile}
"""
        out = self.remote.exec(["sh", "-c", script]).stdout.strip()
        try:
            return int(out.splitlines()[-1])
        except (ValueError, IndexError) as err:
            raise ClusterError(
                f"on {self.remote.name}: {self.name} did not start: {out!r}"
            ) from err

    def pid(self) -> int | None:
        """The pid if the process exists (running or paused), else ``None``."""
        state, pid = self._probe()
        return pid if state != "stopped" else None

    def state(self) -> State:
        return self._probe()[0]

    def _probe(self) -> tuple[State, int | None]:
        script = (
            f"p=$(cat {self.pidfile} 2>/dev/null) || exit 0; "
            'echo "$p $(ps -o stat= -p "$p" 2>/dev/null)"'
        )
        out = self.remote.exec(["sh", "-c", script]).stdout.split()
        if len(out) < 2:
            return "stopped", None
        pid, stat = int(out[0]), out[1]
        if stat.startswith("Z"):
            return "stopped", None
        return ("paused" if stat.startswith("T") else "running"), pid

    def signal(self, sig: str) -> int | None:
        """Send ``sig`` (e.g. ``KILL``, ``STOP``) to the process; return the pid hit."""
        pid = self.pid()
        if pid is not None:
            self.remote.exec(["kill", f"-{sig}", str(pid)], check=False)
        return pid

    def kill(self, timeout_s: float = 30.0) -> int | None:
        """SIGKILL and wait until the process is gone."""
        pid = self.signal("KILL")
        self._wait_gone(timeout_s)
        return pid

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """SIGTERM (after SIGCONT, in case it is paused); SIGKILL if it lingers."""
        pid = self.pid()
        if pid is None:
            return None
        self.remote.exec(["sh", "-c", f"kill -CONT {pid}; kill -TERM {pid}"], check=False)
        try:
            self._wait_gone(timeout_s)
        except ClusterError:
            self.kill()
        return pid

    def pause(self) -> int | None:
        return self.signal("STOP")

    def resume(self) -> int | None:
        return self.signal("CONT")

    def _wait_gone(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.state() != "stopped":
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"on {self.remote.name}: {self.name} still alive "
                    f"{timeout_s:.0f}s after a signal"
                )
            time.sleep(0.1)
