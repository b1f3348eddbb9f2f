"""The power-loss filesystem on a node: mount it under the broker's data directory, cut the power.

With ``ClusterSpec.power_loss_fs`` the broker's data directory is a FUSE mount
(``cluster.lazyfs``) over a backing directory that holds only what was fsynced.
``lose`` is the power cut: the daemon drops every unsynced change and answers
nothing but EIO from then on, so nothing the broker still has in flight reaches
the disk; ``unmount`` then takes the dead mount away, and ``mount`` (called by
``KafkaNode.start``) serves what the disk kept.

A ``Mount`` says where all of it lies on one node: a container has the package in
its image (``LAZYFS_HOME``) and needs ``/dev/fuse`` and ``SYS_ADMIN``
(``cluster.docker.containers``); an SSH host gets the package copied under its
base directory, and its paths are prefixed with it (``cluster.ssh.host_setup``).
Every command takes those paths as arguments, never as shell text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster import lazyfs
from cluster.broker_config import DATA_DIR
from cluster.daemon import RUN_DIR, Daemon
from cluster.lazyfs import CONTROL
from cluster.remote import Remote, sh
from cluster.wait import wait_until
from harness.base.errors import ClusterError

#: The durable side: what a power cut leaves of the broker's data.
BACKING = "/var/lib/kafka/durable"
#: Where a node image keeps the ``lazyfs`` package (``python3 -m lazyfs``).
LAZYFS_HOME = "/usr/local/lib/insync"
LAZYFS_LOG = "/var/log/kafka/lazyfs.log"
#: The package's source on this machine, which images and SSH hosts get a copy of.
PACKAGE = Path(lazyfs.__file__).parent


def package_files(directory: Path = PACKAGE) -> list[Path]:
    """The filesystem's modules, as a node gets them (no caches)."""
    return sorted(directory.glob("*.py"))


@dataclass(frozen=True)
class Mount:
    """The power-loss filesystem of one node: its ``Remote`` and where things lie there."""

    remote: Remote
    #: Prefix of every path (``KafkaNode.root``): "" in a container, an SSH host's base_dir.
    root: str = ""
    #: The directory holding the ``lazyfs`` package (its ``PYTHONPATH``).
    home: str = LAZYFS_HOME

    @property
    def name(self) -> str:
        return self.remote.name

    @property
    def data_dir(self) -> str:
        return self.root + DATA_DIR

    @property
    def backing(self) -> str:
        return self.root + BACKING

    @property
    def log(self) -> str:
        return self.root + LAZYFS_LOG

    @property
    def control(self) -> str:
        return f"{self.data_dir}/{CONTROL}"


def daemon(m: Mount) -> Daemon:
    """The FUSE daemon serving the backing directory at the data directory."""
    return Daemon(m.remote, "lazyfs", ["python3", "-m", "lazyfs", m.backing, m.data_dir],
                  m.log, {"PYTHONPATH": m.home}, run_dir=m.root + RUN_DIR, root=m.root)


#: $1: the data directory. A dead daemon's mount does not count (``stat`` fails on it).
_MOUNTED = 'grep -qF " $1 fuse.lazyfs " /proc/mounts && stat -- "$1" >/dev/null'
#: $1: the data directory, $2: the backing one. Data a plain directory holds moves onto it.
_PREPARE = ('mkdir -p -- "$1" "$2" && if [ -n "$(ls -A -- "$1")" ]; then '
            'cp -a -- "$1"/. "$2"/ && rm -rf -- "$1" && mkdir -p -- "$1"; fi && sync -- "$2"')


def is_mounted(m: Mount) -> bool:
    """Whether a live lazyfs serves the data directory."""
    return sh(m.remote, _MOUNTED, m.data_dir, check=False).ok


def mount(m: Mount, timeout_s: float = 30.0) -> None:
    """Serve the backing directory at the data directory (moving what it holds first).

    A daemon that exits before its mount appears (FUSE refused, pyfuse3 broken) ends
    the wait at once, with its log's last lines in the error."""
    if is_mounted(m):
        return
    unmount(m)  # a dead daemon's mount, or a daemon whose power was cut
    sh(m.remote, _PREPARE, m.data_dir, m.backing)
    served = daemon(m)
    served.start()

    def settled() -> str | None:
        if is_mounted(m):
            return "mounted"
        return "exited" if served.state() == "stopped" else None

    outcome = wait_until(settled, timeout_s=timeout_s, backoff_s=0.1,
                         message=f"on {m.name}: lazyfs mounted at {m.data_dir} (see {m.log})")
    if outcome == "exited":
        said = " | ".join(log_tail(m)) or f"see {m.log}"
        raise ClusterError(f"on {m.name}: lazyfs exited before mounting {m.data_dir}: {said}")


def log_tail(m: Mount, lines: int = 3) -> list[str]:
    """The daemon log's last non-blank lines, stripped (none if it cannot be read)."""
    out = m.remote.exec(["tail", "-n", str(lines), "--", m.log], check=False).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def sync_all(m: Mount) -> None:
    """Make everything durable now (after setup, so a power cut keeps the formatted storage).

    ``sync -f`` first: the kernel's writeback cache may still hold written pages the
    daemon has not seen, and only what reached the daemon can be made durable."""
    sh(m.remote, 'sync -f -- "$1" && echo sync > "$2"', m.data_dir, m.control)


def lose(m: Mount) -> dict[str, Any]:
    """Cut the power: drop every unsynced change; return what was dropped.

    ``sync -f`` first hands the daemon the pages the kernel's writeback cache still
    holds (a write back, not an fsync: they stay unsynced), so that the page cache's
    share of the loss is dropped and counted with the rest. Its status is ignored and
    its time bounded: a disk fault in force must not stop the power cut."""
    out = sh(m.remote, 'timeout 10 sync -f -- "$1" 2>/dev/null; echo lose > "$2" && cat -- "$2"',
             m.data_dir, m.control).stdout
    try:
        state = json.loads(out)
    except ValueError as err:
        raise ClusterError(f"on {m.name}: lazyfs answered {out[:200]!r} to lose") from err
    if not state.get("lost"):
        raise ClusterError(f"on {m.name}: lazyfs did not cut the power: {state}")
    dropped: dict[str, Any] = state["dropped"]
    return dropped


#: ``sh -c`` script, $0 = ``insync-lazyfs``: $1 the command, $2 the control file. A plain
#: directory (no filesystem mounted) has no control file: refused, so none is created there.
CONTROL_SCRIPT = ('[ -e "$2" ] || { echo "no power-loss filesystem is mounted there" >&2; '
                  'exit 3; }; printf \'%s\\n\' "$1" > "$2"; ok=$?; cat "$2" && exit $ok')


def _command(m: Mount, command: str) -> dict[str, Any]:
    """Send ``command`` to the control file; its JSON state after it."""
    result = m.remote.exec(["sh", "-c", CONTROL_SCRIPT, "insync-lazyfs", command, m.control],
                           check=False)
    try:
        state: dict[str, Any] = json.loads(result.stdout)
    except ValueError:
        state = {}
    if not result.ok or "disk" not in state:
        why = state.get("refused") or result.stderr.strip() or f"exit {result.exit_code}"
        raise ClusterError(f"on {m.name}: lazyfs refused {command!r}: {why} "
                           f"(answered {result.stdout[:200]!r})")
    return state


def disk_fault(m: Mount, fault: dict[str, Any]) -> list[dict[str, Any]]:
    """Start a disk fault (``cluster.lazyfs.faults``); the faults now in force."""
    faults: list[dict[str, Any]] = _command(m, "disk " + json.dumps(fault))["disk"]["faults"]
    return faults


def heal_disk(m: Mount) -> list[dict[str, Any]]:
    """End every disk fault; what each did (empty when none was in force)."""
    healed: list[dict[str, Any]] = _command(m, "heal")["disk"]["healed"]
    return healed


def disk_state(m: Mount) -> list[dict[str, Any]]:
    """The disk faults in force."""
    out = m.remote.exec(["cat", "--", m.control]).stdout
    faults: list[dict[str, Any]] = json.loads(out).get("disk", {}).get("faults", [])
    return faults


def unmount(m: Mount) -> None:
    """Kill the daemon and take its mount away (lazily: a killed broker may hold files)."""
    daemon(m).kill()
    sh(m.remote, 'grep -qF " $1 fuse" /proc/mounts && '
                 '(fusermount3 -u -z -- "$1" || umount -l -- "$1") || true', m.data_dir,
       check=False)
