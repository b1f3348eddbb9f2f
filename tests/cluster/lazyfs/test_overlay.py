"""The power-loss model against a path-level reference: after ``lose``, the backing directory
holds every file as it was at its last fsync, under the names last made durable."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from cluster.lazyfs.overlay import Overlay
from cluster.lazyfs.state import PAGE, ROOT, FsError

DIRS = ("", "d1", "d2")
PATHS = ("a", "d1/a", "d1/b", "d2/a")
OFFSETS = st.sampled_from([0, 1, PAGE - 3, PAGE, 2 * PAGE + 5, 3 * PAGE])
#: Whole pages (what the kernel's writeback sends), from a short pattern: Hypothesis
#: draws at most a few KiB of entropy per example, too little for pages of random bytes.
PAGES = st.builds(lambda pattern, n: (pattern * (n * PAGE))[:n * PAGE],
                  st.binary(min_size=1, max_size=7), st.integers(1, 2))
#: Small writes, and whole pages at the offsets (of OFFSETS) that are aligned.
DATA = st.binary(min_size=1, max_size=PAGE + 10) | PAGES


def backing_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path -> content)."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in root.rglob("*") if p.is_file()}


def parent_ino(fs: Overlay, path: str) -> tuple[int, str]:
    head, _, name = path.rpartition("/")
    return (fs.lookup(ROOT, head).ino if head else ROOT), name


class PowerLoss(RuleBasedStateMachine):
    """Files by id: ``view``/``durable`` map paths to ids, ``data``/``synced`` ids to bytes."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="lazyfs-test-"))
        self.backing = self.tmp / "backing"
        for d in DIRS:
            (self.backing / d).mkdir(parents=True, exist_ok=True)
        self.fs = Overlay(str(self.backing))
        self.view: dict[str, int] = {}
        self.durable: dict[str, int] = {}
        self.data: dict[int, bytes] = {}
        self.synced: dict[int, bytes] = {}
        self.ino: dict[int, int] = {}  # file id -> overlay inode
        self.next_id = 0

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- the reference's operations, each applied to both --------------------
    @rule(path=st.sampled_from(PATHS))
    def create(self, path: str) -> None:
        if path in self.view:
            return
        parent, name = parent_ino(self.fs, path)
        self.ino[self.next_id] = self.fs.create(parent, name, 0o644).ino
        self.fs.remember(self.ino[self.next_id])
        self.view[path] = self.next_id
        self.data[self.next_id] = b""
        self.next_id += 1

    @precondition(lambda self: self.data)
    @rule(pick=st.integers(0, 50), offset=OFFSETS, data=DATA)
    def write(self, pick: int, offset: int, data: bytes) -> None:
        fid = sorted(self.data)[pick % len(self.data)]  # also files unlinked but open
        old = self.data[fid]
        padded = old.ljust(offset, b"\0")
        self.data[fid] = padded[:offset] + data + padded[offset + len(data):]
        assert self.fs.write(self.ino[fid], offset, data) == len(data)

    @precondition(lambda self: self.data)
    @rule(pick=st.integers(0, 50), size=OFFSETS)
    def truncate(self, pick: int, size: int) -> None:
        fid = sorted(self.data)[pick % len(self.data)]
        self.data[fid] = self.data[fid][:size].ljust(size, b"\0")
        self.fs.truncate(self.ino[fid], size)

    @precondition(lambda self: self.data)
    @rule(pick=st.integers(0, 50))
    def fsync(self, pick: int) -> None:
        fid = sorted(self.data)[pick % len(self.data)]
        self.synced[fid] = self.data[fid]
        self._persist_name(fid)
        self.fs.fsync(self.ino[fid])

    def _persist_name(self, fid: int) -> None:
        """The file's one durable name becomes its view name (or none), in one step."""
        self.durable = {p: f for p, f in self.durable.items() if f != fid}
        self.durable.update({p: f for p, f in self.view.items() if f == fid})
        self.synced.setdefault(fid, b"")

    @rule(directory=st.sampled_from(DIRS))
    def fsync_dir(self, directory: str) -> None:
        def inside(path: str) -> bool:
            return path.rpartition("/")[0] == directory

        touched = {f for p, f in [*self.view.items(), *self.durable.items()] if inside(p)}
        for fid in sorted(touched):
            self._persist_name(fid)
        ino = self.fs.lookup(ROOT, directory).ino if directory else ROOT
        self.fs.fsync_dir(ino)

    @rule(src=st.sampled_from(PATHS), dst=st.sampled_from(PATHS))
    def rename(self, src: str, dst: str) -> None:
        if src not in self.view or src == dst:
            return
        replaced = self.view.get(dst)
        self.view[dst] = self.view.pop(src)
        self._forget_if_gone(replaced)
        self.fs.rename(*parent_ino(self.fs, src), *parent_ino(self.fs, dst))

    @rule(path=st.sampled_from(PATHS))
    def unlink(self, path: str) -> None:
        if path not in self.view:
            return
        fid = self.view.pop(path)
        self.fs.unlink(*parent_ino(self.fs, path))
        self._keep_open_sometimes(fid)

    def _keep_open_sometimes(self, fid: int) -> None:
        """An unlinked file stays open (writable, fsyncable) when its id is even."""
        if fid % 2:
            self._forget_if_gone(fid)

    def _forget_if_gone(self, fid: int | None) -> None:
        if fid is None or fid in self.view.values():
            return
        del self.data[fid]
        self.fs.forget(self.ino.pop(fid))

    @rule()
    def lose(self) -> None:
        """The power cut, then a remount over what the disk kept."""
        self.fs.lose()
        want = {p: self.synced.get(f, b"") for p, f in self.durable.items()}
        assert backing_tree(self.backing) == want
        self.fs = Overlay(str(self.backing))
        self.view = dict(self.durable)
        self.data = {f: self.synced.get(f, b"") for f in self.view.values()}
        self.ino = {f: self.fs.lookup(*parent_ino(self.fs, p)).ino for p, f in self.view.items()}
        for ino in self.ino.values():
            self.fs.remember(ino)

    @invariant()
    def view_reads_back(self) -> None:
        for path, fid in self.view.items():
            node = self.fs.lookup(*parent_ino(self.fs, path))
            assert node.size == len(self.data[fid])
            assert self.fs.read(node.ino, 0, node.size + 7) == self.data[fid], path

    @invariant()
    def nothing_unsynced_on_disk(self) -> None:
        """The backing store never runs ahead of the reference's durable state."""
        tree = backing_tree(self.backing)
        assert set(tree) == set(self.durable)
        for path, content in tree.items():
            assert content == self.synced.get(self.durable[path], b""), path


TestPowerLoss = PowerLoss.TestCase
TestPowerLoss.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)


@pytest.fixture
def fs(tmp_path: Path) -> Overlay:
    (tmp_path / "backing").mkdir()
    return Overlay(str(tmp_path / "backing"))


def test_a_directory_is_made_and_removed_at_once(fs: Overlay, tmp_path: Path) -> None:
    d = fs.mkdir(ROOT, "topic-0", 0o755)
    assert (tmp_path / "backing" / "topic-0").is_dir()
    fs.rename(ROOT, "topic-0", ROOT, "topic-0.x-delete")
    assert (tmp_path / "backing" / "topic-0.x-delete").is_dir()
    f = fs.create(d.ino, "00.log", 0o644)
    fs.fsync(f.ino)
    fs.unlink(d.ino, "00.log")
    fs.rmdir(ROOT, "topic-0.x-delete")  # its pending unlink becomes durable first
    assert list((tmp_path / "backing").iterdir()) == []


@pytest.mark.parametrize(("call", "code"), [
    pytest.param(lambda fs: fs.lookup(ROOT, "nope"), "ENOENT", id="lookup-missing"),
    pytest.param(lambda fs: fs.create(ROOT, "d", 0o644), "EEXIST", id="create-over-dir"),
    pytest.param(lambda fs: fs.rmdir(ROOT, "f"), "ENOTDIR", id="rmdir-file"),
    pytest.param(lambda fs: fs.unlink(ROOT, "d"), "EISDIR", id="unlink-dir"),
    pytest.param(lambda fs: fs.rename(ROOT, "f", ROOT, "d"), "EISDIR", id="file-over-dir"),
    pytest.param(lambda fs: fs.rename(ROOT, "d", fs.lookup(ROOT, "d").ino, "x"), "EINVAL",
                 id="dir-into-itself"),
])
def test_bad_calls_get_the_errno_posix_gives(fs: Overlay, call: object, code: str) -> None:
    fs.mkdir(ROOT, "d", 0o755)
    fs.create(ROOT, "f", 0o644)
    with pytest.raises(FsError) as err:
        call(fs)  # type: ignore[operator]
    assert os.strerror(err.value.errno) == os.strerror(getattr(__import__("errno"), code))


def test_after_lose_every_call_fails_and_the_loss_is_counted(fs: Overlay) -> None:
    f = fs.create(ROOT, "seg.log", 0o644)
    fs.write(f.ino, 0, b"x" * 100)
    fs.fsync(f.ino)
    fs.write(f.ino, 100, b"y" * 5000)
    loss = fs.lose()
    assert loss.as_dict() == {"files": 1, "bytes": 5100, "entries": 0}  # pages, to the size
    with pytest.raises(FsError):
        fs.read(f.ino, 0, 10)


def test_a_truncate_then_extend_does_not_bring_old_bytes_back(fs: Overlay, tmp_path: Path) -> None:
    f = fs.create(ROOT, "idx", 0o644)
    fs.write(f.ino, 0, b"abcdefghij")
    fs.fsync(f.ino)
    fs.truncate(f.ino, 1)
    fs.truncate(f.ino, 20)  # as Kafka preallocates an index
    assert fs.read(f.ino, 0, 20) == b"a" + bytes(19)
    fs.fsync(f.ino)
    assert (tmp_path / "backing" / "idx").read_bytes() == b"a" + bytes(19)


def test_sync_all_makes_every_change_durable(fs: Overlay, tmp_path: Path) -> None:
    d = fs.mkdir(ROOT, "t-0", 0o755)
    f = fs.create(d.ino, "meta.properties", 0o644)
    fs.write(f.ino, 0, b"cluster.id=x\n")
    g = fs.create(ROOT, "gone", 0o644)
    fs.fsync(g.ino)
    fs.unlink(ROOT, "gone")
    fs.sync_all()
    fs.lose()
    assert backing_tree(tmp_path / "backing") == {"t-0/meta.properties": b"cluster.id=x\n"}
