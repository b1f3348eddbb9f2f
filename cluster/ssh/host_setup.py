"""What a host must have before Kafka goes on it, and the jars copied only when they changed.

``missing`` asks one shell script per host for everything the broker and the
faults use (Java 17+ for the broker, ``iptables`` that works for partitions,
libfaketime for clock faults, ``ps``/``setsid``/``kill`` for the daemons and
process faults, ``sha256sum`` for the jar manifest, ``python3`` for the ZooKeeper
readiness check), so a user learns every
gap of every host from one error, not one per attempt.

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

from cluster.kafka_node import FAKETIME_LIB
from cluster.remote import Remote, read_if_there, sh, write_file

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
MANIFEST = ".insync-manifest.json"

_PROBE = f"""
for c in {' '.join(COMMANDS)}; do command -v "$c" >/dev/null 2>&1 || echo "missing $c"; done
[ -e {FAKETIME_LIB} ] || echo "missing libfaketime"
command -v java >/dev/null 2>&1 && java -version 2>&1 | head -n 1 | sed 's/^/java /'
command -v iptables >/dev/null 2>&1 && {{
  iptables -w 10 -S >/dev/null 2>&1 || echo "iptables-denied"; }}
true
"""


def java_major(line: str) -> int | None:
    """The major version in ``java -version``'s first line.

    ``"17.0.9"`` -> 17, ``"1.8.0"`` -> 8; ``None`` if the line names no version.
    """
    found = re.search(r'version "(\d+)(?:\.(\d+))?', line)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def missing(remote: Remote) -> list[str]:
    """What the host lacks, one phrase each (empty: nothing)."""
    lines = sh(remote, _PROBE, check=False).stdout.splitlines()
    gaps = []
    for line in lines:
        if line.startswith("missing "):
            what = line.removeprefix("missing ")
            if what == "libfaketime":
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
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        out[path.relative_to(root).as_posix()] = digest.hexdigest()
    return out


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
    size = 0
    for rel in changed:
        remote.upload(root / rel, f"{home}/{rel}")
        size += (root / rel).stat().st_size
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
