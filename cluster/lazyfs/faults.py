"""Disk faults in the power-loss filesystem: a slow disk, I/O errors, a full disk, rotten reads.

A broker's disk fails in more ways than losing power. The FUSE glue
(``fusefs``) asks ``Disk`` before each read, write and fsync of a file
(``before``) and after each read (``after_read``); with no fault in force both
are one attribute test, so the fault-free filesystem pays nothing more.

Each fault is a JSON object the control file takes (``disk {...}``; ``heal``
ends them all), and at most one of each kind is in force (a new one replaces
its kind's):

* ``{"kind": "slow", "ms": 50, "dist": "fixed"|"exp"|"uniform", "ops": [...]}``:
  each matching request waits ``ms`` (fixed), an exponential draw of mean
  ``ms``, or a uniform draw in [0, 2 ms], before it is served. The glue waits
  asynchronously, so requests queue as on a slow device and the control file
  still answers at once.
* ``{"kind": "error", "ops": ["fsync"], "once": true, "errno": "EIO"}``: matching
  requests fail with the errno (EIO by default), every time until healed, or
  only the first (``once``). A failed fsync changes nothing: the data stays
  pending and a later fsync that succeeds makes it durable, as a filesystem
  that retries does. A failed write is a failed writeback (below): the data
  never reaches the disk, and the next fsync alone hears of it, as on Linux
  after "fsyncgate".
* ``{"kind": "full", "bytes": N}``: the disk has N more bytes; a write that would
  grow the files past them fails with ENOSPC (overwrites in place do not grow
  anything); truncating or unlinking files gives their bytes back, and ``heal``
  frees the disk.

The glue mounts with the kernel's writeback cache (``fusefs``), so the writes
the daemon sees are the kernel's writeback of dirty pages, not the broker's
``write(2)`` calls, and the faults on writes act where a real disk's errors do:
a ``write(2)`` lands in the page cache and succeeds; when its pages are written
back and the write fails (``error`` on writes, or ``full``), the kernel drops
them from writeback (clean in the cache, never on the disk) and reports the
errno once, to the next fsync (or close) of the file; the fsync after that
succeeds. That is what ext4 does with a device's I/O error. For ``full`` it
differs from ext4 and XFS, which reserve blocks at ``write(2)`` and answer
ENOSPC there; it is what a full disk does under a filesystem that allocates
at writeback (NFS, thin-provisioned volumes). Kafka meets both the same way:
an IOException on its log (the append's, or the flush's), the log directory
offline. It hears of it later, at the flush: its metadata log fsyncs every
append, its partition logs at a segment roll or a checkpoint. Passing every
write to the daemon instead (no writeback cache) would keep ENOSPC at the
append but more than halve the fault-free cluster's throughput, for every
run; and no per-file switch exists for files already open.
* ``{"kind": "corrupt", "bits": 1, "probability": 1.0}``: each matching read
  comes back with ``bits`` random bits flipped (with that probability). The
  daemon never changes the file, so after ``heal`` reads are right again, with
  one exception, which a real page cache over a disk returning bad data shares:
  an append into a partly written page whose cached copy was dropped makes the
  kernel read that page first (under the fault, with a flipped bit), and the
  page it writes back carries the flipped bit to the disk.

Every fault takes ``"files": GLOB`` (``fnmatch`` on the file's name, or on its
path under the mount when the glob has a ``/``; default every file), and
``"seed"`` for its draws. Only requests that reach the daemon are affected:
reads the kernel's page cache answers never do (the glue drops the cached
pages of the matching files when a fault on reads starts and when it is
healed), and ``slow`` on writes delays writeback, which
a broker feels at its fsyncs and, once the kernel's dirty-page limit for the
mount is reached, at its appends.

Pure Python, the standard library only, like ``overlay``: the tests drive it
with an ``Overlay`` directly.
"""

from __future__ import annotations

import errno
import fnmatch
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .overlay import Overlay
from .state import FsError, Node

KINDS = ("slow", "error", "full", "corrupt")
OPS = ("read", "write", "fsync")
DISTRIBUTIONS = ("fixed", "exp", "uniform")
#: The ops each kind acts on by default (``full`` on writes, ``corrupt`` on reads only).
DEFAULT_OPS = {"slow": OPS, "error": OPS, "full": ("write",), "corrupt": ("read",)}
ERRNOS = {"EIO": errno.EIO, "ENOSPC": errno.ENOSPC, "EROFS": errno.EROFS}


@dataclass
class Fault:
    """One fault in force (``parse`` builds it from the control file's JSON)."""

    kind: str
    ops: frozenset[str]
    files: str = "*"
    ms: float = 0.0
    dist: str = "fixed"
    once: bool = False
    errno: int = errno.EIO
    bytes: int = 0
    bits: int = 1
    probability: float = 1.0
    seed: int = 0
    #: Requests it acted on (failed, delayed, corrupted) since it started.
    hits: int = 0
    #: ``full``: bytes the files grew by since it started (less what was freed).
    used: int = 0
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def matches(self, op: str, fs: Overlay, node: Node) -> bool:
        if op not in self.ops:
            return False
        if self.files == "*":
            return True
        return fnmatch.fnmatchcase(_subject(fs, node, "/" in self.files) or "", self.files)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "ops": sorted(self.ops), "files": self.files,
                               "hits": self.hits}
        if self.kind == "slow":
            out |= {"ms": self.ms, "dist": self.dist}
        elif self.kind == "error":
            out |= {"once": self.once, "errno": errno.errorcode[self.errno]}
        elif self.kind == "full":
            out |= {"bytes": self.bytes, "used": self.used}
        else:
            out |= {"bits": self.bits, "probability": self.probability}
        return out


def _subject(fs: Overlay, node: Node, path: bool) -> str | None:
    """What a ``files`` glob is matched against: the file's name, or (a glob with a
    ``/``) its path under the mount, so that ``[!_]*/*.log`` names the partitions'
    segments but not KRaft's ``__cluster_metadata-0`` log."""
    if not path or node.name is None:
        return node.name
    parts = [node.name]
    parent = node.parent
    while parent is not None and parent in fs.nodes and fs.nodes[parent].parent is not None:
        parts.append(fs.nodes[parent].name or "")
        parent = fs.nodes[parent].parent
    return "/".join(reversed(parts))


def parse(spec: Mapping[str, Any]) -> Fault:
    """The fault ``spec`` describes; ``ValueError`` saying what is wrong otherwise."""
    kind = spec.get("kind")
    if kind not in KINDS:
        raise ValueError(f"disk fault kind {kind!r} is not one of {', '.join(KINDS)}")
    known = {"kind", "ops", "files", "seed", *{"slow": ("ms", "dist"), "error": ("once", "errno"),
                                              "full": ("bytes",),
                                              "corrupt": ("bits", "probability")}[kind]}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ValueError(f"disk fault {kind!r} takes {sorted(known)}, not {unknown}")
    ops = spec.get("ops", DEFAULT_OPS[kind])
    if isinstance(ops, str):
        ops = [ops]
    if not ops or not set(ops) <= set(OPS):
        raise ValueError(f"disk fault ops {ops!r}: name some of {', '.join(OPS)}")
    if kind == "corrupt" and set(ops) != {"read"}:
        raise ValueError("a corrupt disk fault acts on reads only")
    fault = Fault(kind, frozenset(ops), files=str(spec.get("files", "*")),
                  seed=int(spec.get("seed", 0)))
    fault.rng.seed(fault.seed)
    if kind == "slow":
        fault.ms, fault.dist = float(spec.get("ms", 0)), str(spec.get("dist", "fixed"))
        if not 0 <= fault.ms < math.inf or fault.dist not in DISTRIBUTIONS:
            raise ValueError(f"slow disk: ms >= 0 and dist one of {', '.join(DISTRIBUTIONS)}")
    elif kind == "error":
        fault.once = bool(spec.get("once", False))
        name = str(spec.get("errno", "EIO"))
        if name not in ERRNOS:
            raise ValueError(f"disk error errno {name!r} is not one of {', '.join(ERRNOS)}")
        fault.errno = ERRNOS[name]
    elif kind == "full":
        fault.bytes = int(spec.get("bytes", 0))
        if fault.bytes < 0:
            raise ValueError("full disk: bytes >= 0")
    else:
        fault.bits = int(spec.get("bits", 1))
        fault.probability = float(spec.get("probability", 1.0))
        if fault.bits < 1 or not 0 < fault.probability <= 1:
            raise ValueError("corrupt disk: bits >= 1 and 0 < probability <= 1")
    return fault


class Disk:
    """The faults in force on one filesystem, and what each request must suffer."""

    def __init__(self) -> None:
        self.faults: dict[str, Fault] = {}
        #: Faults that ended, with what they did (the control file reports them).
        self.healed: list[dict[str, Any]] = []
        #: Faults that ended since the last ``heal`` without it (a ``once`` error that
        #: fired, one replaced by a new fault of its kind): ``heal`` reports them too, so
        #: that a broker that died on a ``once`` fault is known to have met a fault.
        self.ended: list[dict[str, Any]] = []
        #: A write was refused since the last ``heal`` (``full``, or ``error`` on writes):
        #: the kernel holds pages the disk never got (``refused_writeback``).
        self.refused = False

    @property
    def active(self) -> bool:
        return bool(self.faults)

    def start(self, spec: Mapping[str, Any]) -> Fault:
        """Put ``spec``'s fault in force (replacing any of its kind)."""
        fault = parse(spec)
        old = self.faults.pop(fault.kind, None)
        if old is not None:
            self.healed.append(old.as_dict())
            self.ended.append(old.as_dict())
        self.faults[fault.kind] = fault
        return fault

    def heal(self) -> list[dict[str, Any]]:
        """End every fault (a full disk is freed); what each did."""
        ended = [*self.ended, *(f.as_dict() for f in self.faults.values())]
        self.faults.clear()
        self.ended = []
        self.healed = ended
        return ended

    def refused_writeback(self) -> bool:
        """Whether a write was refused since the last call, which forgets it.

        A page whose writeback failed stays in the kernel's cache, clean, until the
        kernel evicts it: until then reads return bytes the disk never got. The glue
        drops the cached pages when the fault is healed, as an eviction would, so that
        what a broker reads after the heal is what the disk holds. Left cached, the
        bytes change under the broker at an arbitrary later moment instead: FUSE drops
        a file's every cached page when the file is truncated, so a log recovery that
        validated the cached bytes, truncated the segment's invalid end and read the
        segment again met zeros (``test_fusefs_integration.py``)."""
        refused, self.refused = self.refused, False
        return refused

    def state(self) -> dict[str, Any]:
        return {"faults": [f.as_dict() for f in self.faults.values()], "healed": self.healed}

    # -- the hooks -------------------------------------------------------------------
    def before(self, fs: Overlay, op: str, ino: int, offset: int = 0, length: int = 0) -> float:
        """Judge a request before it is served: raise its ``FsError``, or return the
        seconds it must wait first (0.0 for none)."""
        if not self.faults:
            return 0.0
        node = fs.node(ino)
        error = self.faults.get("error")
        if error is not None and error.matches(op, fs, node):
            error.hits += 1
            self.refused = self.refused or op == "write"
            if error.once:
                del self.faults["error"]
                self.healed.append(error.as_dict())
                self.ended.append(error.as_dict())
            raise FsError(error.errno)
        full = self.faults.get("full")
        if full is not None and op == "write" and full.matches(op, fs, node):
            grow = max(0, offset + length - node.size)
            if full.used + grow > full.bytes:
                full.hits += 1
                self.refused = True
                raise FsError(errno.ENOSPC)
            full.used += grow
        slow = self.faults.get("slow")
        if slow is not None and slow.matches(op, fs, node):
            slow.hits += 1
            return self._delay(slow)
        return 0.0

    @staticmethod
    def _delay(slow: Fault) -> float:
        seconds = slow.ms / 1000
        if slow.dist == "exp":
            return slow.rng.expovariate(1 / seconds) if seconds else 0.0
        if slow.dist == "uniform":
            return slow.rng.uniform(0, 2 * seconds)
        return seconds

    def freed(self, fs: Overlay, ino: int, new_size: int = 0) -> None:
        """A file shrinks to ``new_size`` (a truncate; an unlink is 0): its bytes come back."""
        full = self.faults.get("full")
        if full is not None:
            node = fs.node(ino)
            full.used = max(0, full.used - max(0, node.size - new_size))

    def after_read(self, fs: Overlay, ino: int, data: bytes) -> bytes:
        """The bytes a read returns: ``data``, or ``data`` with bits flipped."""
        corrupt = self.faults.get("corrupt")
        if corrupt is None or not data or not corrupt.matches("read", fs, fs.node(ino)):
            return data
        if corrupt.probability < 1 and corrupt.rng.random() >= corrupt.probability:
            return data
        corrupt.hits += 1
        out = bytearray(data)
        for bit in corrupt.rng.sample(range(len(out) * 8), min(corrupt.bits, len(out) * 8)):
            out[bit // 8] ^= 1 << (bit % 8)
        return bytes(out)

    def read_faults(self) -> bool:
        """Whether a fault acts on reads (the glue then keeps reads out of the page cache)."""
        return any("read" in f.ops for f in self.faults.values())
