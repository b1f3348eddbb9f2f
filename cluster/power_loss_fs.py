"""The power-loss filesystem on a node: mount it under the broker's data directory, cut the power.

With ``ClusterSpec.power_loss_fs`` the broker's ``DATA_DIR`` is a FUSE mount
(``cluster.lazyfs``, shipped in the node image under ``LAZYFS_HOME``) over
``BACKING``, the directory that holds only what was fsynced. ``lose`` is the
power cut: the daemon drops every unsynced change and answers nothing but EIO
from then on, so nothing the broker still has in flight reaches the disk;
``unmount`` then takes the dead mount away, and ``mount`` (called by
``KafkaNode.start``) serves what the disk kept. The container needs
``/dev/fuse`` and ``SYS_ADMIN`` for it (``cluster.docker.containers``).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from cluster.broker_config import DATA_DIR
from cluster.daemon import Daemon
from cluster.lazyfs import CONTROL
from cluster.remote import Remote, sh
from cluster.wait import wait_until
from harness.base.errors import ClusterError

#: The durable side: what a power cut leaves of the broker's data.
BACKING = "/var/lib/kafka/durable"
#: Where the image keeps the ``lazyfs`` package (``python3 -m lazyfs``).
LAZYFS_HOME = "/usr/local/lib/insync"
LAZYFS_LOG = "/var/log/kafka/lazyfs.log"
CONTROL_PATH = f"{DATA_DIR}/{CONTROL}"


def daemon(remote: Remote) -> Daemon:
    """The FUSE daemon serving ``BACKING`` at ``DATA_DIR``."""
    return Daemon(remote, "lazyfs", ["python3", "-m", "lazyfs", BACKING, DATA_DIR], LAZYFS_LOG,
                  {"PYTHONPATH": LAZYFS_HOME})


def is_mounted(remote: Remote) -> bool:
    """Whether a live lazyfs serves ``DATA_DIR`` (a dead daemon's mount does not count)."""
    probe = f"grep -q ' {DATA_DIR} fuse.lazyfs ' /proc/mounts && stat {DATA_DIR} >/dev/null"
    return sh(remote, probe, check=False).ok


def mount(remote: Remote, timeout_s: float = 30.0) -> None:
    """Serve ``BACKING`` at ``DATA_DIR`` (moving data a plain directory holds onto it first)."""
    if is_mounted(remote):
        return
    unmount(remote)  # a dead daemon's mount, or a daemon whose power was cut
    quoted = shlex.quote
    sh(remote, f"mkdir -p {BACKING} {DATA_DIR} && "
               f"if [ -n \"$(ls -A {DATA_DIR})\" ]; then "
               f"cp -a {DATA_DIR}/. {BACKING}/ && rm -rf {DATA_DIR} && mkdir -p {DATA_DIR}; fi && "
               f"sync {quoted(BACKING)}")
    daemon(remote).start()
    wait_until(lambda: is_mounted(remote), timeout_s=timeout_s, backoff_s=0.1,
               message=f"on {remote.name}: lazyfs mounted at {DATA_DIR} "
                       f"(see {LAZYFS_LOG})")


def sync_all(remote: Remote) -> None:
    """Make everything durable now (after setup, so a power cut keeps the formatted storage).

    ``sync -f`` first: the kernel's writeback cache may still hold written pages the
    daemon has not seen, and only what reached the daemon can be made durable."""
    sh(remote, f"sync -f {DATA_DIR} && echo sync > {CONTROL_PATH}")


def lose(remote: Remote) -> dict[str, Any]:
    """Cut the power: drop every unsynced change; return what was dropped.

    ``sync -f`` first hands the daemon the pages the kernel's writeback cache still
    holds (a write back, not an fsync: they stay unsynced), so that the page cache's
    share of the loss is dropped and counted with the rest. Its status is ignored and
    its time bounded: a disk fault in force must not stop the power cut."""
    out = sh(remote, f"timeout 10 sync -f {DATA_DIR} 2>/dev/null; "
                     f"echo lose > {CONTROL_PATH} && cat {CONTROL_PATH}").stdout
    try:
        state = json.loads(out)
    except ValueError as err:
        raise ClusterError(f"on {remote.name}: lazyfs answered {out[:200]!r} to lose") from err
    if not state.get("lost"):
        raise ClusterError(f"on {remote.name}: lazyfs did not cut the power: {state}")
    dropped: dict[str, Any] = state["dropped"]
    return dropped


#: ``sh -c`` script, $0 = ``insync-lazyfs``: $1 the command, $2 the control file. A plain
#: directory (no filesystem mounted) has no control file: refused, so none is created there.
CONTROL_SCRIPT = ('[ -e "$2" ] || { echo "no power-loss filesystem is mounted there" >&2; '
                  'exit 3; }; printf \'%s\\n\' "$1" > "$2"; ok=$?; cat "$2" && exit $ok')


def _command(remote: Remote, command: str) -> dict[str, Any]:
    """Send ``command`` to the control file; its JSON state after it."""
    result = remote.exec(["sh", "-c", CONTROL_SCRIPT, "insync-lazyfs", command, CONTROL_PATH],
                         check=False)
    try:
        state: dict[str, Any] = json.loads(result.stdout)
    except ValueError:
        state = {}
    if not result.ok or "disk" not in state:
        why = state.get("refused") or result.stderr.strip() or f"exit {result.exit_code}"
        raise ClusterError(f"on {remote.name}: lazyfs refused {command!r}: {why} "
                           f"(answered {result.stdout[:200]!r})")
    return state


def disk_fault(remote: Remote, fault: dict[str, Any]) -> list[dict[str, Any]]:
    """Start a disk fault (``cluster.lazyfs.faults``); the faults now in force."""
    faults: list[dict[str, Any]] = _command(remote, "disk " + json.dumps(fault))["disk"]["faults"]
    return faults


def heal_disk(remote: Remote) -> list[dict[str, Any]]:
    """End every disk fault; what each did (empty when none was in force)."""
    healed: list[dict[str, Any]] = _command(remote, "heal")["disk"]["healed"]
    return healed


def disk_state(remote: Remote) -> list[dict[str, Any]]:
    """The disk faults in force."""
    out = remote.exec(["cat", CONTROL_PATH]).stdout
    faults: list[dict[str, Any]] = json.loads(out).get("disk", {}).get("faults", [])
    return faults


def unmount(remote: Remote) -> None:
    """Kill the daemon and take its mount away (lazily: a killed broker may hold files)."""
    daemon(remote).kill()
    sh(remote, f"grep -q ' {DATA_DIR} fuse' /proc/mounts && "
               f"(fusermount3 -u -z {DATA_DIR} || umount -l {DATA_DIR}) || true", check=False)
