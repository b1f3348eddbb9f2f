"""The power-loss filesystem's model: what the files look like now, and what a power cut leaves.

A real disk keeps only what was fsynced; Docker's SIGKILL keeps everything,
because the host's page cache survives the container. This model sits between
the broker and a backing directory and keeps the difference in memory, so a
``lose`` can throw exactly the unsynced part away.

* The **backing directory is the durable state**, always: after ``lose`` it
  shows what a power cut would have left (plus ``<backing>.orphans``, files no
  directory names durably any more, which ``clean_orphans`` removes on mount).
* **File data** (contents and size) reaches the backing file only when that
  file is fsynced. Until then it is held in 4 KiB pages (``PAGE``) over the
  durable bytes; a truncate hides the durable bytes past it (``Node.base``).
* **File names** (create, rename, unlink) reach the backing directory when a
  directory they touch is fsynced, or when the file they name is fsynced. A
  file has one durable name at most, and persisting its name moves it there
  in one step (a rename is atomic, as in a journal), so no file comes back
  twice. The file-fsync rule is ext4's behaviour in practice (an fsync commits
  the journal, entries included); without it every segment an old broker ever
  created (Kafka did not fsync directories before 2.8) would vanish in a power
  cut, which real disks do not do.
* **Directories** themselves (mkdir, rmdir, a directory's rename) are applied
  at once: Kafka makes them rarely (a topic's creation or deletion), and
  tracking them would need directory hard links, which no filesystem has.
* Hard links and symlinks are not offered: Kafka makes neither.

It is pure Python (the standard library only) and knows nothing of FUSE: the
FUSE glue (``fusefs``) maps requests onto it, the Hypothesis tests drive it
directly against a path-level reference model, and it is copied into the node
image together with the glue.
"""

from __future__ import annotations

import errno
import os
import stat
import time

from .state import PAGE, FsError, FsState, Node


class Overlay(FsState):
    """The view's operations: names and data held in memory until fsync (see above)."""

    # -- names --------------------------------------------------------------
    def create(self, parent: int, name: str, mode: int) -> Node:
        """A new empty file, named in the view only (durable at an fsync)."""
        if name in self._dir(parent):
            raise FsError(errno.EEXIST)
        return self._new(stat.S_IFREG | (mode & 0o7777), parent, name)

    def mkdir(self, parent: int, name: str, mode: int) -> Node:
        """A new directory, made in the backing directory at once."""
        if name in self._dir(parent):
            raise FsError(errno.EEXIST)
        if name in self.durable_in[parent]:  # a file's unlink not yet durable: make it so
            self._unlink_durable(parent, name)
        os.mkdir(self.path(parent, name), mode & 0o7777)
        self._fsync_path(self.path(parent))
        return self._new(stat.S_IFDIR | (mode & 0o7777), parent, name)

    def unlink(self, parent: int, name: str) -> None:
        node = self.lookup(parent, name)
        if node.is_dir:
            raise FsError(errno.EISDIR)
        del self.children[parent][name]
        node.parent = node.name = None
        self._drop_if_done(node)

    def rmdir(self, parent: int, name: str) -> None:
        node = self.lookup(parent, name)
        if not node.is_dir:
            raise FsError(errno.ENOTDIR)
        if self.children[node.ino]:
            raise FsError(errno.ENOTEMPTY)
        self.fsync_dir(node.ino)  # pending unlinks in it become durable, so it is empty
        os.rmdir(self.path(node.ino))
        self._fsync_path(self.path(parent))
        del self.children[parent][name]
        node.parent = node.name = None

    def rename(self, old_parent: int, old: str, new_parent: int, new: str) -> None:
        """Move a name; a file's move is durable at an fsync, a directory's at once."""
        node = self.lookup(old_parent, old)
        target = self._dir(new_parent).get(new)
        if target == node.ino:
            return
        if target is not None:
            replaced = self.nodes[target]
            if replaced.is_dir != node.is_dir:
                raise FsError(errno.EISDIR if replaced.is_dir else errno.ENOTDIR)
            if replaced.is_dir:
                self.rmdir(new_parent, new)
            else:
                self.unlink(new_parent, new)
        if node.is_dir:
            if self._inside(new_parent, node.ino):
                raise FsError(errno.EINVAL)
            if new in self.durable_in[new_parent]:
                self._unlink_durable(new_parent, new)
            os.rename(self.path(old_parent, old), self.path(new_parent, new))
            self._fsync_path(self.path(old_parent))
            self._fsync_path(self.path(new_parent))
        del self.children[old_parent][old]
        self.children[new_parent][new] = node.ino
        node.parent, node.name = new_parent, new

    def _inside(self, ino: int, ancestor: int) -> bool:
        node: int | None = ino
        while node is not None:
            if node == ancestor:
                return True
            node = self.nodes[node].parent
        return False


    # -- data ---------------------------------------------------------------
    def read(self, ino: int, offset: int, length: int) -> bytes:
        node = self._file(ino)
        end = min(node.size, offset + length)
        out = bytearray()
        pos = offset
        while pos < end:
            page, skip = divmod(pos, PAGE)
            take = min(PAGE - skip, end - pos)
            buf = node.dirty.get(page)
            if buf is not None:
                out += buf[skip:skip + take]
            else:
                out += self._durable_bytes(node, pos, take)
            pos += take
        return bytes(out)

    def _durable_bytes(self, node: Node, offset: int, length: int) -> bytes:
        """The durable bytes still visible at ``offset`` (zeros past ``base``)."""
        visible = max(0, min(length, node.base - offset))
        data = os.pread(self._fd(node), visible, offset) if visible else b""
        return data + bytes(length - len(data))

    def write(self, ino: int, offset: int, data: bytes) -> int:
        node = self._file(ino)
        pos, view = offset, memoryview(data)
        while view:
            page, skip = divmod(pos, PAGE)
            take = min(PAGE - skip, len(view))
            buf = node.dirty.get(page)
            if buf is None and take == PAGE:  # a whole page (the kernel's writeback)
                node.dirty[page] = bytearray(view[:take])
            else:
                if buf is None:
                    old = self.read(ino, page * PAGE, PAGE)  # copy-on-write of the page
                    buf = node.dirty[page] = bytearray(old.ljust(PAGE, b"\0"))
                buf[skip:skip + take] = view[:take]
            pos, view = pos + take, view[take:]
        node.size = max(node.size, offset + len(data))
        node.mtime_ns = time.time_ns()
        return len(data)

    def truncate(self, ino: int, size: int) -> None:
        node = self._file(ino)
        if size < node.size:
            for page in [p for p in node.dirty if p * PAGE >= size]:
                del node.dirty[page]
            last = node.dirty.get(size // PAGE)
            if last is not None:
                last[size % PAGE:] = bytes(PAGE - size % PAGE)
            node.base = min(node.base, size)
        node.size = size
        node.mtime_ns = time.time_ns()

    def chmod(self, ino: int, mode: int) -> None:
        """Metadata is not modelled: applied to the backing file (if any) at once."""
        node = self.node(ino)
        node.mode = stat.S_IFMT(node.mode) | (mode & 0o7777)
        if node.is_dir:
            os.chmod(self.path(ino), mode & 0o7777)
        elif node.fd is not None or node.durable or node.orphan:
            os.fchmod(self._fd(node), mode & 0o7777)

    def touch(self, ino: int, mtime_ns: int) -> None:
        """The view's mtime (Kafka's retention reads it); written to the backing at fsync."""
        self.node(ino).mtime_ns = mtime_ns

