"""The power-loss filesystem's state: the inodes of the view over the backing directory.

``FsState`` holds what the view is made of (its nodes, the names the view gives
them, the names the backing directory gives them) and everything that moves it
to or from disk: loading the backing directory, fsync (what makes a change
durable), the kernel's references (when an unlinked file can go) and the power
cut. ``overlay.Overlay`` adds the operations a broker asks for; the rules both
follow are in ``overlay``'s docstring. It lives apart from them because the
durable half is what a power cut tests: it reads alone, against the rules.

Pure Python, the standard library only, copied into the node image with the
rest of the package.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from dataclasses import dataclass, field

ROOT = 1
PAGE = 4096


class FsError(OSError):
    """An errno for the filesystem caller (the FUSE glue turns it into its reply)."""

    def __init__(self, code: int) -> None:
        super().__init__(code, os.strerror(code))


@dataclass
class Node:
    """One file or directory as the broker sees it now."""

    ino: int
    mode: int
    #: The directory holding it now, and its name there (``None``: unlinked, still open).
    parent: int | None
    name: str | None
    mtime_ns: int = field(default_factory=time.time_ns)
    # -- files only --------------------------------------------------------
    size: int = 0
    #: Bytes of the durable file below this offset are visible (a truncate lowers it).
    base: int = 0
    #: Page number -> the page's bytes as written since the last fsync.
    dirty: dict[int, bytearray] = field(default_factory=dict)
    #: The (directory, name) naming this file in the backing directory, if any.
    durable: tuple[int, str] | None = None
    #: Its backing file has no durable name any more and sits in the orphans directory.
    orphan: bool = False
    #: An fd on its backing file (valid across renames and unlinks of the backing names).
    fd: int | None = None
    #: The kernel's references (FUSE lookups not yet forgotten): an unlinked file is
    #: dropped for good only when none is left.
    refs: int = 0

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


@dataclass(frozen=True)
class Loss:
    """What a ``lose`` threw away: files whose data or names had unsynced changes."""

    files: int
    bytes: int
    entries: int

    def as_dict(self) -> dict[str, int]:
        return {"files": self.files, "bytes": self.bytes, "entries": self.entries}



class FsState:
    """Inodes over ``backing``, numbered as FUSE asks, and how they become durable or lost."""

    def __init__(self, backing: str) -> None:
        self.backing = os.path.abspath(backing)
        self.orphans = self.backing.rstrip("/") + ".orphans"
        self.nodes: dict[int, Node] = {}
        self.children: dict[int, dict[str, int]] = {}
        self.durable_in: dict[int, dict[str, int]] = {}
        self._next = ROOT
        self.lost = False
        clean_orphans(self.backing)
        os.makedirs(self.orphans, exist_ok=True)
        root = self._new(os.stat(self.backing).st_mode, None, None)
        self._scan(root)


    # -- loading -----------------------------------------------------------
    def _new(self, mode: int, parent: int | None, name: str | None) -> Node:
        node = Node(self._next, mode, parent, name)
        self._next += 1
        self.nodes[node.ino] = node
        if node.is_dir:
            self.children[node.ino] = {}
            self.durable_in[node.ino] = {}
        if parent is not None and name is not None:
            self.children[parent][name] = node.ino
        return node

    def _scan(self, directory: Node) -> None:
        with os.scandir(self.path(directory.ino)) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                st = entry.stat(follow_symlinks=False)
                if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                    continue  # nothing Kafka makes; not offered
                node = self._new(st.st_mode, directory.ino, entry.name)
                node.mtime_ns = st.st_mtime_ns
                if node.is_dir:
                    self._scan(node)
                else:
                    node.size = node.base = st.st_size
                    self._record(node, directory.ino, entry.name)


    # -- paths in the backing directory ------------------------------------
    def path(self, ino: int, name: str | None = None) -> str:
        """The backing path of directory ``ino`` (joined with ``name``)."""
        parts: list[str] = [] if name is None else [name]
        node = self.nodes[ino]
        while node.parent is not None:
            parts.append(node.name or "")
            node = self.nodes[node.parent]
        return os.path.join(self.backing, *reversed(parts))

    def _orphan_path(self, node: Node) -> str:
        return os.path.join(self.orphans, str(node.ino))


    # -- looking ----------------------------------------------------------
    def node(self, ino: int) -> Node:
        self._alive()
        try:
            return self.nodes[ino]
        except KeyError:
            raise FsError(errno.ENOENT) from None

    def lookup(self, parent: int, name: str) -> Node:
        ino = self._dir(parent).get(name)
        if ino is None:
            raise FsError(errno.ENOENT)
        return self.nodes[ino]

    def listdir(self, parent: int) -> list[tuple[str, Node]]:
        return [(n, self.nodes[i]) for n, i in sorted(self._dir(parent).items())]

    def _dir(self, ino: int) -> dict[str, int]:
        if not self.node(ino).is_dir:
            raise FsError(errno.ENOTDIR)
        return self.children[ino]

    def _file(self, ino: int) -> Node:
        node = self.node(ino)
        if node.is_dir:
            raise FsError(errno.EISDIR)
        return node

    def _alive(self) -> None:
        if self.lost:  # the power is off: nothing reads or writes until a remount
            raise FsError(errno.EIO)


    # -- durability ---------------------------------------------------------
    def fsync(self, ino: int) -> None:
        """Make the file's data and its own names durable (see the module docstring)."""
        node = self.node(ino)
        if node.is_dir:
            self.fsync_dir(ino)
            return
        self._persist_name(node)
        if node.ino not in self.nodes or not (node.durable or node.orphan):
            return  # unlinked and never durable: a power cut leaves nothing of it anyway
        fd = self._fd(node)
        os.ftruncate(fd, node.base)  # bytes a truncate hid must not come back
        for page in sorted(node.dirty):
            start = page * PAGE
            os.pwrite(fd, bytes(node.dirty[page][: max(0, node.size - start)]), start)
        os.ftruncate(fd, node.size)
        os.utime(fd, ns=(node.mtime_ns, node.mtime_ns))
        os.fsync(fd)
        node.dirty.clear()
        node.base = node.size

    def fsync_dir(self, ino: int) -> None:
        """Persist every name change that touches directory ``ino`` (in or out of it)."""
        touched = {i for i in self._dir(ino).values() if not self.nodes[i].is_dir}
        touched |= set(self.durable_in[ino].values())
        for file in sorted(touched):
            if file in self.nodes:  # not dropped by an earlier one losing its name
                self._persist_name(self.nodes[file])
        self._fsync_path(self.path(ino))

    def sync_all(self) -> None:
        """Make everything durable (as ``sync``): every file, then every directory."""
        for node in [n for n in self.nodes.values() if not n.is_dir]:
            if node.ino in self.nodes:
                self.fsync(node.ino)
        for ino in [n.ino for n in self.nodes.values() if n.is_dir and n.ino in self.children]:
            if self.nodes[ino].parent is not None or ino == ROOT:
                self.fsync_dir(ino)

    def _persist_name(self, node: Node) -> None:
        """Give ``node`` its view name on disk, in one rename (or none, if unlinked)."""
        want = (node.parent, node.name) if node.parent is not None and node.name else None
        if node.durable == want:
            return
        old = node.durable
        if want is None:
            assert old is not None
            self._unlink_durable(*old)
        else:
            parent, name = want
            if name in self.durable_in[parent]:  # what had the name loses it
                self._unlink_durable(parent, name)
            dest = self.path(parent, name)
            if old is not None:
                os.rename(self.path(*old), dest)
                del self.durable_in[old[0]][old[1]]
            elif node.orphan:
                os.rename(self._orphan_path(node), dest)
                node.orphan = False
            else:  # first time on disk: empty until the file's own fsync
                node.fd = os.open(dest, os.O_RDWR | os.O_CREAT | os.O_EXCL, node.mode & 0o7777)
            self._record(node, parent, name)
        for directory in {d for d, _ in filter(None, (old, want))}:
            self._fsync_path(self.path(directory))

    def _record(self, node: Node, parent: int, name: str) -> None:
        node.durable = (parent, name)
        self.durable_in[parent][name] = node.ino

    def _unlink_durable(self, parent: int, name: str) -> None:
        """Drop the durable name; the file becomes an orphan, so that its durable data can
        be named again by a later fsync while the broker still uses it."""
        node = self.nodes[self.durable_in[parent].pop(name)]
        node.durable = None
        os.rename(self.path(parent, name), self._orphan_path(node))
        node.orphan = True
        self._drop_if_done(node)

    def _fd(self, node: Node) -> int:
        if node.fd is None:
            if node.durable:
                path = self.path(*node.durable)
            elif node.orphan:
                path = self._orphan_path(node)
            else:
                raise FsError(errno.EIO)  # a bug: durable bytes asked of a file without any
            node.fd = os.open(path, os.O_RDWR)
        return node.fd

    def _fsync_path(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def remember(self, ino: int) -> None:
        """The kernel took a reference (a lookup, create or mkdir answered)."""
        self.nodes[ino].refs += 1

    def forget(self, ino: int, count: int = 1) -> None:
        """The kernel dropped ``count`` references."""
        node = self.nodes.get(ino)
        if node is not None:
            node.refs = max(0, node.refs - count)
            self._drop_if_done(node)

    def _drop_if_done(self, node: Node) -> None:
        """Drop a file nothing names (view or disk) and nothing uses; its orphan too."""
        if node.refs or node.parent is not None or node.durable or node.ino == ROOT:
            return
        if node.fd is not None:
            os.close(node.fd)
            node.fd = None
        if node.orphan:
            os.unlink(self._orphan_path(node))
            node.orphan = False
        self.nodes.pop(node.ino, None)


    # -- power ----------------------------------------------------------------
    def pending(self) -> Loss:
        """What a power cut now would lose."""
        files = lost = entries = 0
        for node in self.nodes.values():
            if node.is_dir:
                continue
            names = {(node.parent, node.name)} if node.parent is not None and node.name else set()
            moved = len(names ^ ({node.durable} if node.durable else set()))
            entries += moved
            stored = os.fstat(self._fd(node)).st_size if node.durable or node.orphan else 0
            data = sum(min(PAGE, max(0, node.size - p * PAGE)) for p in node.dirty)
            if node.dirty or node.size != stored or node.base != stored or moved:
                files += 1
                lost += data
        return Loss(files, lost, entries)

    def lose(self) -> Loss:
        """The power cut: forget every unsynced change; every later call fails with EIO."""
        loss = self.pending()
        for node in self.nodes.values():
            if node.fd is not None:
                os.close(node.fd)
        self.nodes.clear()
        self.children.clear()
        self.durable_in.clear()
        self.lost = True
        clean_orphans(self.backing)
        return loss


def clean_orphans(backing: str) -> None:
    """Remove the backing files no durable name reaches (what fsck does after a crash)."""
    shutil.rmtree(os.path.abspath(backing).rstrip("/") + ".orphans", ignore_errors=True)
