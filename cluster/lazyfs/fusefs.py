"""The FUSE glue: serve an ``Overlay`` at a mountpoint with pyfuse3, plus a control file.

Every request maps onto one ``Overlay`` call; ``FsError`` becomes the errno.
File handles are inode numbers (a file has no per-open state), and the page
cache is left on (no ``direct_io``), so Kafka's shared writable mmaps of its
index files work: the kernel writes dirty pages back as ordinary writes, and
``msync`` arrives as an fsync.

The kernel's writeback cache is on (``enable_writeback_cache``): a ``write(2)``
lands in the page cache and returns, and the kernel sends the dirty pages later
in large writes (when it writes back, at fsync, at close). Without it every
``write(2)`` of a broker is one request answered by this one Python process,
which cut a 3-node cluster's throughput ceiling by more than half. It changes
nothing for power loss (a page the daemon has not seen is as unsynced as one it
holds, and a ``lose`` drops both); it moves write faults to writeback, as on a
real disk (``faults``' docstring says what each fault means with it). A
``sync`` on the control file makes durable only what reached the daemon, so
callers run ``sync -f`` on the mount first (``cluster.power_loss_fs.sync_all``).

The control file ``CONTROL`` at the mount's root (not listed, found by name):
writing ``sync`` makes everything durable (as ``sync(1)``); writing ``lose``
cuts the power (``Overlay.lose``), after which every other request fails
with EIO until a fresh daemon mounts again. Reading it returns JSON,
``{"lost": false, "pending": {...}, "disk": {...}}`` before and ``{"lost": true,
"dropped": {...}}`` after (files, bytes, entries).

The same file takes the disk faults (``faults``): ``disk {json}`` starts one
(EINVAL if the JSON is not a fault, with ``refused`` in the JSON saying why),
``heal`` ends them all; ``disk`` in the JSON lists those in force and those
last healed, with what each did.

Run as ``python3 -m lazyfs BACKING MOUNTPOINT`` on a node (Debian's python3-pyfuse3).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import stat
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pyfuse3

from . import ATTR_TIMEOUT_S, CONTROL
from .faults import Disk
from .overlay import Overlay
from .state import ROOT, FsError, Loss, Node

CONTROL_INO = 2**62
T = TypeVar("T")


def _errno(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Turn the model's ``OSError`` (``FsError`` included) into the FUSE reply's errno."""

    @functools.wraps(fn)
    async def wrapped(*args: Any) -> T:
        try:
            return await fn(*args)
        except OSError as err:
            raise pyfuse3.FUSEError(err.errno or errno.EIO) from None

    return wrapped


class LazyFs(pyfuse3.Operations):  # type: ignore[misc]
    """pyfuse3's operations over ``fs``."""

    supports_dot_lookup = False
    #: Small appends gathered by the kernel into page-sized writes (see the docstring).
    enable_writeback_cache = True

    def __init__(self, fs: Overlay) -> None:
        super().__init__()
        self.fs = fs
        self.disk = Disk()
        self.dropped: Loss | None = None
        self._control_out = b""
        #: Why the last control command was refused (shown in the control file's JSON).
        self._control_error = ""
        # After a ``lose`` the mountpoint itself must still answer getattr: the
        # kernel revalidates it (every ATTR_TIMEOUT_S) on each path walk to CONTROL,
        # and an EIO there would make the control file unreadable after the cut.
        self._root_after_loss: Any = None

    # -- attributes -----------------------------------------------------------
    def _attr(self, node: Node) -> Any:
        attr = pyfuse3.EntryAttributes()
        attr.st_ino = node.ino
        attr.st_mode = node.mode
        attr.st_nlink = 2 if node.is_dir else (1 if node.parent is not None else 0)
        attr.st_size = 0 if node.is_dir else node.size
        attr.st_blksize = 4096
        attr.st_blocks = (attr.st_size + 511) // 512
        attr.st_uid, attr.st_gid = os.getuid(), os.getgid()
        attr.st_atime_ns = attr.st_mtime_ns = attr.st_ctime_ns = node.mtime_ns
        attr.entry_timeout = attr.attr_timeout = ATTR_TIMEOUT_S
        return attr

    def _control_attr(self) -> Any:
        attr = pyfuse3.EntryAttributes()
        attr.st_ino = CONTROL_INO
        attr.st_mode = stat.S_IFREG | 0o600
        attr.st_nlink = 1
        attr.st_size = 4096  # reads stop at the JSON's end
        attr.entry_timeout = attr.attr_timeout = 0
        return attr

    def _entry(self, node: Node) -> Any:
        self.fs.remember(node.ino)
        return self._attr(node)

    @_errno
    async def lookup(self, parent_inode: int, name: bytes, ctx: Any = None) -> Any:
        if parent_inode == ROOT and name.decode() == CONTROL:
            return self._control_attr()
        return self._entry(self.fs.lookup(parent_inode, os.fsdecode(name)))

    @_errno
    async def getattr(self, inode: int, ctx: Any = None) -> Any:
        if inode == CONTROL_INO:
            return self._control_attr()
        if inode == ROOT and self._root_after_loss is not None:
            return self._root_after_loss
        return self._attr(self.fs.node(inode))

    @_errno
    async def setattr(self, inode: int, attr: Any, fields: Any, fh: Any, ctx: Any) -> Any:
        if inode == CONTROL_INO:
            return self._control_attr()
        if fields.update_size:
            self.disk.freed(self.fs, inode, attr.st_size)
            self.fs.truncate(inode, attr.st_size)
        if fields.update_mode:
            self.fs.chmod(inode, attr.st_mode)
        if fields.update_mtime:
            self.fs.touch(inode, attr.st_mtime_ns)
        return self._attr(self.fs.node(inode))

    async def forget(self, inode_list: list[tuple[int, int]]) -> None:
        if self.fs.lost:
            return
        for inode, count in inode_list:
            self.fs.forget(inode, count)

    @_errno
    async def statfs(self, ctx: Any) -> Any:
        st = os.statvfs(self.fs.backing)
        out = pyfuse3.StatvfsData()
        for key in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files",
                    "f_ffree", "f_favail", "f_namemax"):
            setattr(out, key, getattr(st, key))
        return out

    # -- names ------------------------------------------------------------------
    @_errno
    async def create(self, parent_inode: int, name: bytes, mode: int, flags: int,
                     ctx: Any) -> tuple[Any, Any]:
        node = self.fs.create(parent_inode, os.fsdecode(name), mode)
        return pyfuse3.FileInfo(fh=node.ino), self._entry(node)

    @_errno
    async def mkdir(self, parent_inode: int, name: bytes, mode: int, ctx: Any) -> Any:
        return self._entry(self.fs.mkdir(parent_inode, os.fsdecode(name), mode))

    @_errno
    async def unlink(self, parent_inode: int, name: bytes, ctx: Any) -> None:
        if self.disk.active:
            self.disk.freed(self.fs, self.fs.lookup(parent_inode, os.fsdecode(name)).ino)
        self.fs.unlink(parent_inode, os.fsdecode(name))

    @_errno
    async def rmdir(self, parent_inode: int, name: bytes, ctx: Any) -> None:
        self.fs.rmdir(parent_inode, os.fsdecode(name))

    @_errno
    async def rename(  # noqa: PLR0917 (pyfuse3 calls it positionally)
        self, parent_inode_old: int, name_old: bytes, parent_inode_new: int, name_new: bytes,
        flags: int, ctx: Any,
    ) -> None:
        if flags:  # RENAME_NOREPLACE / RENAME_EXCHANGE: Kafka uses neither
            raise FsError(errno.EINVAL)
        self.fs.rename(parent_inode_old, os.fsdecode(name_old),
                       parent_inode_new, os.fsdecode(name_new))

    # -- directories ---------------------------------------------------------------
    @_errno
    async def opendir(self, inode: int, ctx: Any) -> int:
        self.fs.listdir(inode)  # ENOTDIR, EIO
        return inode

    @_errno
    async def readdir(self, fh: int, start_id: int, token: Any) -> None:
        entries = self.fs.listdir(fh)
        for i, (name, node) in enumerate(entries[start_id:], start=start_id + 1):
            if not pyfuse3.readdir_reply(token, os.fsencode(name), self._entry(node), i):
                self.fs.forget(node.ino)  # not sent: the kernel took no reference
                return

    @_errno
    async def fsyncdir(self, fh: int, datasync: bool) -> None:
        self.fs.fsync_dir(fh)

    async def releasedir(self, fh: int) -> None:
        return None

    # -- files ------------------------------------------------------------------------
    @_errno
    async def open(self, inode: int, flags: int, ctx: Any) -> Any:
        if inode == CONTROL_INO:  # its answer changes under the same size: never cached
            return pyfuse3.FileInfo(fh=inode, direct_io=True)
        node = self.fs.node(inode)
        if node.is_dir:
            raise FsError(errno.EISDIR)
        if flags & os.O_TRUNC:
            self.fs.truncate(inode, 0)
        return pyfuse3.FileInfo(fh=inode)

    @_errno
    async def read(self, fh: int, off: int, size: int) -> bytes:
        if fh == CONTROL_INO:
            # One answer per read-through: ``cat`` reads it in several requests, and the
            # state (pending bytes) changes between them, so a text made afresh for each
            # request returned the head of one answer and the tail of another.
            if off == 0 or not self._control_out:
                self._control_out = self._control_text()
            return self._control_out[off:off + size]
        if not self.disk.active:
            return self.fs.read(fh, off, size)
        await self._suffer("read", fh, off, size)
        return self.disk.after_read(self.fs, fh, self.fs.read(fh, off, size))

    @_errno
    async def write(self, fh: int, off: int, buf: bytes) -> int:
        if fh == CONTROL_INO:
            return await self._control(buf)
        if self.disk.active:
            await self._suffer("write", fh, off, len(buf))
        return self.fs.write(fh, off, buf)

    @_errno
    async def fsync(self, fh: int, datasync: bool) -> None:
        if fh != CONTROL_INO:
            if self.disk.active:
                await self._suffer("fsync", fh)
            self.fs.fsync(fh)

    async def flush(self, fh: int) -> None:
        return None

    async def release(self, fh: int) -> None:
        return None

    # -- disk faults (``faults``) -----------------------------------------------------------
    async def _suffer(self, op: str, ino: int, offset: int = 0, length: int = 0) -> None:
        """What the disk faults in force do to a request before it is served."""
        import trio

        delay = self.disk.before(self.fs, op, ino, offset, length)
        if delay > 0:
            await trio.sleep(delay)

    async def _drop_cached_pages(self) -> None:
        """Make reads reach the daemon (a fault on reads starts) or fetch good bytes again
        (it ends), or forget pages whose writeback was refused (a fault on writes is
        healed, ``Disk.refused_writeback``): drop the kernel's cached pages of every
        file. From a worker thread, as the kernel may ask the daemon to write dirty mmap
        pages back first."""
        import trio

        def drop() -> None:
            for node in list(self.fs.nodes.values()):
                if not node.is_dir and node.refs:
                    with contextlib.suppress(OSError):  # the kernel forgot it meanwhile
                        pyfuse3.invalidate_inode(node.ino)

        await trio.to_thread.run_sync(drop)

    # -- the control file ---------------------------------------------------------------
    async def _control(self, buf: bytes) -> int:
        command = buf.decode(errors="replace").strip()
        if self.dropped is None and command.startswith(("disk ", "heal")):
            return await self._disk_control(command, len(buf))
        if command == "sync" and self.dropped is None:
            self.fs.sync_all()
        elif command == "lose":
            if self.dropped is None:
                self._root_after_loss = self._attr(self.fs.node(ROOT))
                self.dropped = self.fs.lose()
        else:
            raise FsError(errno.EINVAL if command != "sync" else errno.EIO)
        return len(buf)

    def _control_text(self) -> bytes:
        if self.dropped is not None:
            state = {"lost": True, "dropped": self.dropped.as_dict()}
        else:
            try:  # a failure here must not hide the disk faults' state
                pending: dict[str, Any] = self.fs.pending().as_dict()
            except OSError as err:
                pending = {"error": f"{type(err).__name__}: {err}"}
            state = {"lost": False, "pending": pending, "disk": self.disk.state()}
            if self._control_error:
                state["refused"] = self._control_error
        return (json.dumps(state, sort_keys=True) + "\n").encode()

    async def _disk_control(self, command: str, size: int) -> int:
        """``disk {json}`` starts a fault (``faults.parse``), ``heal`` ends them all."""
        reads = self.disk.read_faults()
        refused = False  # a healed fault refused writebacks: evict what the disk never got
        if command == "heal":
            self.disk.heal()
            refused = self.disk.refused_writeback()
        else:
            try:
                self.disk.start(json.loads(command[len("disk "):]))
            except (ValueError, TypeError) as err:
                self._control_error = str(err)
                raise FsError(errno.EINVAL) from None
        self._control_error = ""
        if reads or refused or self.disk.read_faults():
            await self._drop_cached_pages()
        return size


def serve(backing: str, mountpoint: str) -> None:
    """Mount, serve until unmounted (or killed), unmount."""
    import trio

    ops = LazyFs(Overlay(backing))
    options = set(pyfuse3.default_options)
    options |= {"fsname=insync-lazyfs", "subtype=lazyfs"}
    pyfuse3.init(ops, mountpoint, options)
    try:
        trio.run(pyfuse3.main)
    finally:
        pyfuse3.close(unmount=True)
