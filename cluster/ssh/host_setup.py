"""What a host must have before Kafka goes on it, and the jars copied only when they changed.

``missing`` asks one shell script per host for everything the broker and the
faults use (Java 17+ for the broker, ``iptables`` that works for partitions,
libfaketime for clock faults, ``ps``/``setsid``/``kill`` for the daemons and
process faults, ``sha256sum`` for the jar manifest, ``python3`` for the ZooKeeper
readiness check), so a user learns every
gap of every host from one error, not one per attempt. A cluster on the
power-loss filesystem (power-loss and disk faults) also needs FUSE: python3's
pyfuse3, ``fusermount3`` and a usable ``/dev/fuse``; ``sync_lazyfs`` copies the
filesystem's package under base_dir and ``try_fuse`` mounts it once on a scratch
directory there, so a host that has every file but may not mount (a container
without ``SYS_ADMIN``) is refused before the cluster starts, not at its first
fault.

``sync_jars`` keeps a manifest (relative path -> sha256) next to the copy of
the Kafka distribution on the host; only files whose hash differs (or that
the host lacks) go over SFTP, and files the local build no longer has are
removed. A warm ``up`` therefore copies nothing.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cluster import power_loss_fs
from cluster.kafka_node import FAKETIME_LIB
from cluster.remote import Remote, TreeUpload, read_if_there, sh, write_file
from harness.base.errors import ClusterError

MIN_JAVA = 17
#: Commands every host needs on PATH, and what each is for (said when it is missing).
COMMANDS: Mapping[str, str] = {
    "java": "the broker",
    "iptables": "partition faults",
    "ps": "daemon and pause checks",
    "python3": "asking ZooKeeper whether it serves (srvr), in zookeeper mode",
    "setsid": "starting daemons",
    "sha256sum": "the jar manifest",
    "tail": "log excerpts",
}
#: What the power-loss filesystem needs, and how to get it (said when it is missing).
FUSE_NEEDS: Mapping[str, str] = {
    "pyfuse3": "python3's pyfuse3 (the power-loss filesystem; Debian: python3-pyfuse3)",
    "fusermount3": "fusermount3 (the power-loss filesystem; Debian: fuse3)",
    "/dev/fuse": "a readable and writable /dev/fuse (the power-loss filesystem; a container "
                 "needs --device /dev/fuse and --cap-add SYS_ADMIN)",
}
MANIFEST = ".insync-manifest.json"

_PROBE = f"""
for c in {' '.join(COMMANDS)}; do command -v "$c" >/dev/null 2>&1 || echo "missing $c"; done
[ -e {FAKETIME_LIB} ] || echo "missing libfaketime"
command -v java >/dev/null 2>&1 && java -version 2>&1 | head -n 1 | sed 's/^/java /'
command -v iptables >/dev/null 2>&1 && {{
  iptables -w 10 -S >/dev/null 2>&1 || echo "iptables-denied"; }}
true
"""
_FUSE_PROBE = """
python3 -c 'import pyfuse3' >/dev/null 2>&1 || echo "missing pyfuse3"
command -v fusermount3 >/dev/null 2>&1 || echo "missing fusermount3"
[ -c /dev/fuse ] && [ -r /dev/fuse ] && [ -w /dev/fuse ] || echo "missing /dev/fuse"
true
"""
#: $1: a scratch directory (removed after), $2: the package's home. Mounts the filesystem
#: there, checks that it serves, unmounts; on failure prints the daemon's last words.


def java_major(line: str) -> int | None:
    """The major version in ``java -version``'s first line.

    ``"17.0.9"`` -> 17, ``"1.8.0"`` -> 8; ``None`` if the line names no version.
    """
    found = re.search(r'version "(\d+)(?:\.(\d+))?', line)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def missing(remote: Remote, *, fuse: bool = False) -> list[str]:
    """What the host lacks, one phrase each (empty: nothing); ``fuse``: also what the
    power-loss filesystem needs."""
    lines = sh(remote, _PROBE + (_FUSE_PROBE if fuse else ""), check=False).stdout.splitlines()
    gaps = []
    for line in lines:
        if line.startswith("missing "):
            what = line.removeprefix("missing ")
            if what in FUSE_NEEDS:
                gaps.append(FUSE_NEEDS[what])
            elif what == "libfaketime":
                gaps.append(f"libfaketime ({FAKETIME_LIB}, clock faults; Debian: libfaketime)")
            else:
                gaps.append(f"{what} ({COMMANDS.get(what, 'needed')})")
        elif line == "iptables-denied":
            gaps.append("permission to run iptables (set sudo = true, or run as root)")
        elif line.startswith("java "):
            major = java_major(line)
            if major is None or major < MIN_JAVA:
                gaps.append(f"Java {MIN_JAVA} or later (found: {line.removeprefix('java ')})")
    return gaps


def local_manifest(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative POSIX path) and its sha256."""
    return {path.relative_to(root).as_posix(): _sha256(path)
            for path in sorted(p for p in root.rglob("*") if p.is_file())}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def lazyfs_home(base_dir: str) -> str:
    """Where a host keeps the power-loss filesystem's package (kept by ``down``, as the
    jars are): the ``PYTHONPATH`` its daemon runs with (``KafkaNode.lazyfs_home``)."""
    return f"{base_dir}/lib"


def sync_lazyfs(remote: Remote, base_dir: str) -> Synced:
    """Copy the power-loss filesystem's package to the host, only what changed."""
    files = power_loss_fs.package_files()
    manifest = {p.name: _sha256(p) for p in files}
    return sync_jars(remote, power_loss_fs.PACKAGE, f"{lazyfs_home(base_dir)}/lazyfs", manifest)


def try_fuse(remote: Remote, base_dir: str, timeout_s: float = 10.0) -> str | None:
    """Mount the power-loss filesystem once on a scratch directory and take it away:
    ``None`` when it served, else why not (the daemon's last lines).

    The trial is a ``Mount`` rooted at the scratch directory, so it runs the very
    commands a broker's data directory is mounted and unmounted with."""
    home = lazyfs_home(base_dir)
    trial = power_loss_fs.Mount(remote, root=f"{home}/fuse-trial", home=home)
    remote.exec(["rm", "-rf", "--", trial.root], check=False)  # an interrupted trial's
    try:
        power_loss_fs.mount(trial, timeout_s=timeout_s)
    except ClusterError as err:
        said = " | ".join(power_loss_fs.log_tail(trial)) or err.message
        return f"mounting the power-loss filesystem failed: {said}"
    finally:
        power_loss_fs.unmount(trial)
        remote.exec(["rm", "-rf", "--", trial.root], check=False)
    return None


@dataclass(frozen=True)
class Synced:
    """What ``sync_jars`` did on one host."""

    copied: int
    removed: int
    bytes: int


def sync_jars(remote: Remote, root: Path, home: str, manifest: Mapping[str, str]) -> Synced:
    """Make ``home`` on the host hold exactly ``root``'s files, copying only changed ones.

    The manifest on the host is written last: an interrupted copy leaves the
    old manifest (or none), so the next ``up`` copies again what may be partial.
    """
    there = _remote_manifest(remote, home)
    changed = sorted(p for p, h in manifest.items() if there.get(p) != h)
    stale = sorted(set(there) - set(manifest))
    if changed or stale:
        remote.exec(["rm", "-f", "--", f"{home}/{MANIFEST}"])
    dirs = sorted({posixpath.dirname(f"{home}/{p}") for p in changed} | {home})
    remote.exec(["mkdir", "-p", "--", *dirs])
    if changed and isinstance(remote, TreeUpload):
        remote.upload_tree(root, changed, home)
    else:
        for rel in changed:
            remote.upload(root / rel, f"{home}/{rel}")
    size = sum((root / rel).stat().st_size for rel in changed)
    if stale:
        remote.exec(["rm", "-f", "--", *(f"{home}/{p}" for p in stale)])
    if changed or stale or not there:
        write_file(remote, f"{home}/{MANIFEST}", json.dumps(dict(manifest), sort_keys=True))
    return Synced(len(changed), len(stale), size)


def _remote_manifest(remote: Remote, home: str) -> dict[str, str]:
    text = read_if_there(remote, f"{home}/{MANIFEST}")
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
