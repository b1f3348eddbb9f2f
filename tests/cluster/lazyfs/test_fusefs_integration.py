"""The power-loss filesystem mounted for real on this host: what a ``lose`` leaves behind.

Needs FUSE (``/dev/fuse``, ``fusermount3``) and a system ``python3`` with pyfuse3
(Debian: ``apt-get install fuse3 python3-pyfuse3``), as the node image has;
installed when missing and the tests run as root (as on CI), skipped with the
reason otherwise. It needs no Docker, but it is marked
``integration`` because it mounts a filesystem.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cluster.lazyfs
from cluster.lazyfs import ATTR_TIMEOUT_S, CONTROL

pytestmark = pytest.mark.integration

SYSTEM_PYTHON = "/usr/bin/python3"
PACKAGE_ROOT = Path(cluster.lazyfs.__file__).parent.parent  # holds lazyfs/


def _why_not() -> str | None:
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this host"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (apt-get install fuse3)"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import pyfuse3, trio"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        return f"{SYSTEM_PYTHON} cannot import pyfuse3 (apt-get install python3-pyfuse3)"
    return None


#: What Debian ships the daemon's needs in (the node image installs the same).
FUSE_PACKAGES = ("fuse3", "python3-pyfuse3")


@pytest.fixture(scope="module", autouse=True)
def fuse_on_this_host() -> None:
    """FUSE's tools and pyfuse3, installed with apt when missing (needs root, as on CI);
    skipped with the reason on a host without ``/dev/fuse`` or where installing is not
    possible."""
    why = _why_not()
    if why is None or not os.path.exists("/dev/fuse"):
        if why is not None:
            pytest.skip(why)
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(f"{why}; installing it needs root and apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *FUSE_PACKAGES], check=True, env=env)
    still = _why_not()
    assert still is None, f"apt-get installed {' '.join(FUSE_PACKAGES)}, yet: {still}"


class Mount:
    """A running daemon serving ``backing`` at ``point``."""

    def __init__(self, backing: Path, point: Path) -> None:
        self.backing, self.point = backing, point
        self.log = backing.parent / "lazyfs.log"
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [SYSTEM_PYTHON, "-m", "lazyfs", str(backing), str(point)],
                cwd=PACKAGE_ROOT, stdout=out, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 20
        while not os.path.ismount(point):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"lazyfs did not mount: {self.log.read_text()}")
            time.sleep(0.05)

    def lose(self) -> dict[str, int]:
        (self.point / CONTROL).write_text("lose\n")
        state = json.loads((self.point / CONTROL).read_text())
        assert state["lost"] is True
        return dict(state["dropped"])

    def unmount(self) -> None:
        subprocess.run(["fusermount3", "-u", "-z", str(self.point)], check=False)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def dirs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    backing, point = tmp_path / "backing", tmp_path / "mnt"
    backing.mkdir()
    point.mkdir()
    yield backing, point
    subprocess.run(["fusermount3", "-u", "-z", str(point)], check=False, capture_output=True)


def _append_sync(path: Path, data: bytes, *, fsync: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def test_lose_keeps_what_was_fsynced_and_drops_the_rest(dirs: tuple[Path, Path]) -> None:
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        (point / "topic-0").mkdir()
        log = point / "topic-0" / "00000000000000000000.log"
        _append_sync(log, b"A" * 10_000, fsync=True)
        _append_sync(log, b"B" * 5_000, fsync=False)
        never = point / "topic-0" / "never-synced.log"
        _append_sync(never, b"C" * 100, fsync=False)

        # A shared writable mmap (Kafka's index files): msync reaches the disk,
        # a later store that is never synced does not.
        index = point / "topic-0" / "00000000000000000000.index"
        with index.open("w+b") as f:
            f.truncate(8192)
            os.fsync(f.fileno())  # its name and size are durable
            with mmap.mmap(f.fileno(), 8192) as m:
                m[0:4] = b"IDX1"
                m.flush()  # msync(MS_SYNC): an fsync through FUSE
                m[4:8] = b"IDX2"  # dirty in the page cache only

        # Kafka's atomic checkpoint: write a temp file, fsync it, rename it over the old one.
        ckpt = point / "recovery-point-offset-checkpoint"
        _append_sync(ckpt, b"old\n", fsync=True)
        _append_sync(point / "ckpt.tmp", b"new\n", fsync=True)
        os.rename(point / "ckpt.tmp", ckpt)
        fd = os.open(point, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(fd)  # the directory's fsync makes the rename durable
        os.close(fd)
        _append_sync(point / "ckpt.tmp", b"newer\n", fsync=True)
        os.rename(point / "ckpt.tmp", ckpt)  # this rename never becomes durable

        assert log.read_bytes() == b"A" * 10_000 + b"B" * 5_000  # before the cut: all of it
        dropped = fs.lose()
        # What the disk kept, read straight from the backing directory.
        assert (backing / "topic-0" / log.name).read_bytes() == b"A" * 10_000
        assert not (backing / "topic-0" / never.name).exists()
        assert (backing / "topic-0" / index.name).read_bytes()[:8] == b"IDX1\0\0\0\0"
        assert (backing / ckpt.name).read_bytes() == b"new\n"
        assert (backing / "ckpt.tmp").read_bytes() == b"newer\n"
        assert dropped["files"] >= 3 and dropped["bytes"] >= 5_000
        with pytest.raises(OSError):
            log.read_bytes()  # the power is off
    finally:
        fs.unmount()

    fs = Mount(backing, point)  # power back on: the broker sees what the disk kept
    try:
        assert log.read_bytes() == b"A" * 10_000
        assert sorted(p.name for p in (point / "topic-0").iterdir()) == [index.name, log.name]
        assert ckpt.read_bytes() == b"new\n"
        _append_sync(log, b"D" * 10, fsync=True)  # and it writes on from there
        assert (backing / "topic-0" / log.name).read_bytes() == b"A" * 10_000 + b"D" * 10
    finally:
        fs.unmount()


def test_a_truncate_and_a_delete_without_fsync_come_back(dirs: tuple[Path, Path]) -> None:
    """Kafka truncates a log on recovery and deletes old segments: unsynced, both undo."""
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        seg = point / "seg.log"
        _append_sync(seg, b"x" * 9000, fsync=True)
        with seg.open("r+b") as f:
            f.truncate(100)
        _append_sync(point / "old.log", b"o" * 10, fsync=True)
        (point / "old.log").unlink()
        assert seg.stat().st_size == 100
        fs.lose()
        assert (backing / "seg.log").stat().st_size == 9000
        assert (backing / "old.log").read_bytes() == b"o" * 10
    finally:
        fs.unmount()


def test_the_control_file_still_answers_once_the_kernel_forgot_the_root(
    dirs: tuple[Path, Path],
) -> None:
    """After the cut, a path walk revalidates the mountpoint: its getattr must not be EIO.

    CI once failed here: the nemesis reads the control file right after ``lose``,
    and when the root's attributes had expired the read got EIO.
    """
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        _append_sync(point / "a.log", b"a" * 10, fsync=False)
        fs.lose()
        time.sleep(ATTR_TIMEOUT_S + 0.5)  # the kernel's cached root attributes expire
        state = json.loads((point / CONTROL).read_text())
        assert state["lost"] is True and state["dropped"]["files"] == 1
        with pytest.raises(OSError):
            (point / "a.log").read_bytes()
    finally:
        fs.unmount()


def _control(point: Path, command: str) -> dict[str, Any]:
    (point / CONTROL).write_text(command + "\n")
    state: dict[str, Any] = json.loads((point / CONTROL).read_text())
    return state


def test_disk_faults_through_the_mount_do_what_they_say(dirs: tuple[Path, Path]) -> None:
    """Each fault as a broker meets it: through the kernel, started by the control file."""
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        log = point / "0.log"
        _append_sync(log, b"k" * 8192, fsync=True)
        assert log.read_bytes() == b"k" * 8192  # now in the kernel's page cache

        state = _control(point, 'disk {"kind": "corrupt", "files": "*.log", "seed": 1}')
        assert [f["kind"] for f in state["disk"]["faults"]] == ["corrupt"]
        seen = log.read_bytes()  # the cached pages were dropped: the read reaches the daemon
        assert len(seen) == 8192 and seen != b"k" * 8192
        _control(point, "heal")
        assert log.read_bytes() == b"k" * 8192  # and the good bytes are fetched again

        _control(point, 'disk {"kind": "slow", "ms": 300, "ops": ["fsync"]}')
        started = time.monotonic()
        _append_sync(log, b"s", fsync=True)
        assert time.monotonic() - started >= 0.3
        started = time.monotonic()
        assert _control(point, "heal")["disk"]["healed"][0]["hits"] >= 1
        assert time.monotonic() - started < 0.3  # the control file does not queue behind it

        # A full disk behind the writeback cache: the append is taken by the page cache,
        # its writeback fails, and the broker hears ENOSPC at its next fsync.
        _control(point, 'disk {"kind": "full", "bytes": 100}')
        _append_sync(log, b"f" * 100, fsync=True)  # fits
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"g")
            with pytest.raises(OSError) as full:
                os.fsync(fd)
            assert full.value.errno == errno.ENOSPC
        finally:
            os.close(fd)
        assert _control(point, "heal")["disk"]["healed"][0]["hits"] >= 1
        assert (backing / "0.log").read_bytes().endswith(b"f" * 100)  # "g" never reached it
        _append_sync(log, b"g", fsync=True)  # the disk has room again

        _control(point, 'disk {"kind": "error", "ops": ["fsync"], "once": true}')
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"e")
            with pytest.raises(OSError) as failed:
                os.fsync(fd)
            assert failed.value.errno == errno.EIO
            os.fsync(fd)  # once: the retry succeeds
        finally:
            os.close(fd)
        assert (backing / "0.log").read_bytes().endswith(b"ge")

        with pytest.raises(OSError) as refused:
            (point / CONTROL).write_text('disk {"kind": "melt"}\n')
        assert refused.value.errno == errno.EINVAL
        assert "melt" in json.loads((point / CONTROL).read_text())["refused"]
    finally:
        fs.unmount()


def test_an_append_under_corrupt_writes_the_flipped_bit_of_its_page_back(
    dirs: tuple[Path, Path],
) -> None:
    """An append into a partly written page whose cached copy the fault dropped: the
    kernel reads the page first (corrupted) and writes it back whole, so the flipped
    bit reaches the disk and stays after the heal (``faults``' docstring)."""
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        log = point / "0.log"
        _append_sync(log, b"k" * 100, fsync=True)
        _control(point, 'disk {"kind": "corrupt", "files": "*.log", "seed": 1}')
        _append_sync(log, b"x" * 10, fsync=True)
        assert _control(point, "heal")["disk"]["healed"][0]["hits"] >= 1
        kept = (backing / "0.log").read_bytes()
        assert len(kept) == 110 and kept.endswith(b"x" * 10)
        assert kept[:100] != b"k" * 100  # the page's old bytes, one bit flipped
        assert log.read_bytes() == kept  # and the mount reads what the disk holds
    finally:
        fs.unmount()


def test_a_failed_writeback_is_reported_once_and_its_data_is_not_durable(
    dirs: tuple[Path, Path],
) -> None:
    """EIO on writes behind the page cache is Linux's "fsyncgate": the failed pages are
    dropped from writeback, the next fsync reports the error, the one after succeeds,
    and a power cut then shows the data never reached the disk."""
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        log = point / "0.log"
        _append_sync(log, b"a" * 4096, fsync=True)
        _control(point, 'disk {"kind": "error", "ops": ["write"], "once": true}')
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            assert os.write(fd, b"b" * 4096) == 4096  # the page cache takes it
            with pytest.raises(OSError) as failed:
                os.fsync(fd)
            assert failed.value.errno == errno.EIO
            os.fsync(fd)  # reported once: this fsync succeeds, and trusts nothing
        finally:
            os.close(fd)
        state = json.loads((point / CONTROL).read_text())["disk"]
        assert state["faults"] == [] and state["healed"][0]["hits"] == 1  # once: it ended
        assert log.read_bytes() == b"a" * 4096 + b"b" * 4096  # the page cache still shows it
        assert (backing / "0.log").read_bytes() == b"a" * 4096  # the disk never had it
        fs.lose()
    finally:
        fs.unmount()
    fs = Mount(backing, point)
    try:
        assert log.read_bytes() == b"a" * 4096  # after the power cut: gone
    finally:
        fs.unmount()


def test_sync_f_then_the_control_files_sync_makes_cached_writes_durable(
    dirs: tuple[Path, Path],
) -> None:
    """What ``power_loss_fs.sync_all`` runs: written pages still in the kernel's
    writeback cache reach the daemon, then the disk."""
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        _append_sync(point / "meta.properties", b"m" * 300, fsync=False)
        subprocess.run(["sync", "-f", str(point)], check=True)
        _control(point, "sync")
        fs.lose()
        assert (backing / "meta.properties").read_bytes() == b"m" * 300
    finally:
        fs.unmount()


def test_a_heal_after_a_refused_writeback_reads_what_the_disk_holds(
    dirs: tuple[Path, Path],
) -> None:
    """The page whose writeback the full disk refused stays in the kernel's cache until
    the heal, which evicts it (``Disk.refused_writeback``): a broker restarted after the
    heal reads what the disk holds (the file's length, zeros where the refused bytes
    were), and reads the same bytes after it truncates the segment. Left cached, the
    refused bytes read back until the truncate and zeros after it, as FUSE drops a
    file's every cached page when it is truncated."""
    backing, point = dirs
    fs = Mount(backing, point)
    try:
        log = point / "0.log"
        _append_sync(log, b"a" * 4096, fsync=True)
        _control(point, 'disk {"kind": "full", "bytes": 0}')
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"b" * 4096)
            with pytest.raises(OSError) as full:
                os.fsync(fd)
            assert full.value.errno == errno.ENOSPC
        finally:
            os.close(fd)
        assert log.read_bytes() == b"a" * 4096 + b"b" * 4096  # cached, not on the disk
        assert (backing / "0.log").read_bytes() == b"a" * 4096
        _control(point, "heal")
        seen = log.read_bytes()  # the disk's: the file's length, not the refused bytes
        assert seen == b"a" * 4096 + bytes(len(seen) - 4096)
        os.truncate(log, 6144)  # as a recovery that keeps what it validated
        assert log.read_bytes() == seen[:6144]  # the same bytes after the truncate
    finally:
        fs.unmount()
