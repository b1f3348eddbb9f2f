"""A long-running process inside a node, tracked by a pidfile.

Brokers and ZooKeeper servers run as daemons *inside* their node (whose PID 1
is an init that reaps them), not as the node's main process. That is what
lets a nemesis SIGKILL, SIGSTOP and restart the JVM while the node, its
network identity and its data directory stay.

A fault must land within a fraction of a second, so every action a fault takes
is ONE command on the node: a script that reads the pidfile, judges the
process's state, acts only if that state calls for it, and (for SIGKILL) polls
tightly until the process is reaped, reporting the state it found and the pid
it acted on. Probing first and acting in a second round trip would double the
latency and leave a window in which the state changes.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cluster.remote import SH_NAME, Remote, sh
from harness.base.errors import ClusterError

State = Literal["running", "paused", "stopped"]

RUN_DIR = "/var/run/insync"
#: The process states a signal can reach (a zombie or no process is "stopped").
UP: tuple[State, ...] = ("running", "paused")
RUNNING: tuple[State, ...] = ("running",)
PAUSED: tuple[State, ...] = ("paused",)
_STATES: dict[str, State] = {"running": "running", "paused": "paused", "stopped": "stopped"}
#: How often the SIGKILL script checks whether the process is reaped.
REAP_POLL_S = 0.01

#: ``sh -c`` script, run with $0 = ``insync-signal``: $1 pidfile, $2 signal, $3 the states
#: that get the signal (space separated), $4 how many REAP_POLL_S polls to wait for the
#: process to be reaped (0: do not wait), $5 (optional) a file to write the time (epoch
#: seconds) the signal was sent to. Prints the state found, then the pid signalled if it
#: was signalled, then ``alive`` if it outlived the wait.
SIGNAL_SCRIPT = f"""
p=$(cat "$1" 2>/dev/null) || {{ echo stopped; exit 0; }}
case "$(ps -o stat= -p "$p" 2>/dev/null)" in
  ""|Z*) echo stopped; exit 0 ;;
  T*) st=paused ;;
  *) st=running ;;
esac
case " $3 " in *" $st "*) ;; *) echo "$st"; exit 0 ;; esac
kill -"$2" "$p" 2>/dev/null || {{ echo stopped; exit 0; }}
if [ -n "$5" ]; then mkdir -p "$(dirname "$5")" && date +%s > "$5"; fi
n=$4
# kill -0 succeeds on a zombie: wait until init has reaped it, so a start that
# follows at once cannot take the dead JVM for a live one.
while [ "$n" -gt 0 ] && kill -0 "$p" 2>/dev/null; do
  n=$((n - 1)); sleep {REAP_POLL_S}
done
if [ "$4" -gt 0 ] && kill -0 "$p" 2>/dev/null; then echo "$st $p alive"; else echo "$st $p"; fi
"""


#: The start script (``Daemon.launch``): $1 the pidfile directory, $2 the stdout log, $3
#: the working directory, $4 the pidfile, $5 the daemon's name, $6 the node's root; the
#: rest is ``env``'s argv (``K=V``..., ``setsid``, the command). ``{prelude}`` is replaced
#: by ``Daemon.prelude``.
LAUNCH_SCRIPT = """
set -e
run_dir=$1 log=$2 workdir=$3 pidfile=$4 name=$5 root=$6
shift 6
{prelude}
mkdir -p "$run_dir" "$(dirname "$log")"
if [ -f "$pidfile" ]; then
  # kill -0 succeeds on a zombie: only a live (or stopped) process counts.
  case "$(ps -o stat= -p "$(cat "$pidfile")" 2>/dev/null)" in
    ""|Z*) ;;
    T*) echo "paused $(cat "$pidfile")"; exit 0 ;;
    *) echo "running $(cat "$pidfile")"; exit 0 ;;
  esac
fi
cd "$workdir"
echo "=== insync: starting $name at $(date -u +%FT%TZ)" >> "$log"
env "$@" >> "$log" 2>&1 < /dev/null &
echo $! > "$pidfile"
echo "stopped $(cat "$pidfile")"
"""


@dataclass(frozen=True)
class Daemon:
    """``argv`` run under ``env`` on ``remote``, its output appended to ``stdout_log``."""

    remote: Remote
    name: str
    argv: Sequence[str]
    stdout_log: str
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str = "/"
    #: Shell run first in the start script (the broker's faketime control file), so a
    #: restart stays one command: insync's own text, which names paths only through
    #: ``"$root"`` (never a value interpolated into it).
    prelude: str = ""
    #: Where the pidfile lives (under an SSH host's base directory, there).
    run_dir: str = RUN_DIR
    #: The node's root (``KafkaNode.root``), ``$root`` in ``prelude``.
    root: str = ""
    #: How long the start command may take (its prelude may wait first).
    launch_timeout_s: float = 60.0

    @property
    def pidfile(self) -> str:
        return f"{self.run_dir}/{self.name}.pid"

    def start(self) -> int:
        """Start the process unless it already runs; return its pid."""
        return self.launch()[1]

    def launch(self) -> tuple[State, int]:
        """Start the process unless it already runs, in one command on the node:
        (the state it was in, ``stopped`` meaning started now; its pid).

        ``LAUNCH_SCRIPT`` is constant; every path, name, variable and argument
        goes as a separate argv entry, so the ``Remote`` quotes each once."""
        envs = [f"{k}={v}" for k, v in sorted(self.env.items())]
        script = LAUNCH_SCRIPT.replace("{prelude}", self.prelude)
        argv = ["sh", "-c", script, SH_NAME, self.run_dir, self.stdout_log, self.workdir,
                self.pidfile, self.name, self.root, *envs, "setsid", *self.argv]
        out = self.remote.exec(argv, timeout=self.launch_timeout_s).stdout.strip()
        words = out.splitlines()[-1].split() if out else []
        if len(words) == 1:  # a bare pid: started now
            words = ["stopped", *words]
        try:
            return _STATES[words[0]], int(words[1])
        except (KeyError, ValueError, IndexError) as err:
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
        script = ('p=$(cat -- "$1" 2>/dev/null) || exit 0; '
                  'echo "$p $(ps -o stat= -p "$p" 2>/dev/null)"')
        out = sh(self.remote, script, self.pidfile).stdout.split()
        if len(out) < 2:
            return "stopped", None
        pid, stat = int(out[0]), out[1]
        if stat.startswith("Z"):
            return "stopped", None
        return ("paused" if stat.startswith("T") else "running"), pid

    def signal_if(
        self, sig: str, when: Collection[State] = UP, *, reap_s: float = 0.0,
        stamp: str = "",
    ) -> tuple[State, int | None]:
        """One command: send ``sig`` if the process is in one of the states ``when``;
        with ``reap_s``, also wait (polling every REAP_POLL_S) until it is reaped; with
        ``stamp``, write the time it was sent to that file. Returns the state found and
        the pid signalled (``None``: not signalled)."""
        polls = max(0, round(reap_s / REAP_POLL_S))
        argv = ["sh", "-c", SIGNAL_SCRIPT, "insync-signal", self.pidfile, sig,
                " ".join(sorted(when)), str(polls), stamp]  # fmt: skip
        words = self.remote.exec(argv, timeout=60 + reap_s).stdout.split()
        if not words or words[0] not in _STATES:
            raise ClusterError(f"on {self.remote.name}: cannot signal {self.name}: {words}")
        state = _STATES[words[0]]
        if len(words) < 2:
            return state, None
        pid = int(words[1])
        if words[2:] == ["alive"]:
            raise ClusterError(
                f"on {self.remote.name}: {self.name} (pid {pid}) still alive "
                f"{reap_s:.0f}s after SIG{sig}"
            )
        return state, pid

    def signal(self, sig: str) -> int | None:
        """Send ``sig`` (e.g. ``KILL``, ``STOP``) to the process; return the pid hit."""
        return self.signal_if(sig)[1]

    def kill(self, timeout_s: float = 30.0) -> int | None:
        """SIGKILL and wait until the process is reaped: one command on the node."""
        return self.signal_if("KILL", reap_s=timeout_s)[1]

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """SIGTERM (after SIGCONT, in case it is paused); SIGKILL if it lingers."""
        pid = self.pid()
        if pid is None:
            return None
        sh(self.remote, 'kill -CONT "$1"; kill -TERM "$1"', str(pid), check=False)
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
