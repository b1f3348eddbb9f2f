"""Disk faults over the power-loss model: each does what it says, with no FUSE and no Docker.

``served`` plays the glue's part (``fusefs``): ask ``Disk.before``, wait what it
says, serve the request from the ``Overlay``, pass reads through ``after_read``.
The real glue is exercised through a mount in ``test_fusefs_integration``.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.lazyfs.faults import Disk, parse
from cluster.lazyfs.overlay import Overlay
from cluster.lazyfs.state import ROOT, FsError


class Served:
    """An overlay behind a disk, requests served as the glue serves them."""

    def __init__(self, backing: Path) -> None:
        self.fs = Overlay(str(backing))
        self.disk = Disk()

    def read(self, ino: int, offset: int, length: int) -> bytes:
        time.sleep(self.disk.before(self.fs, "read", ino, offset, length))
        return self.disk.after_read(self.fs, ino, self.fs.read(ino, offset, length))

    def write(self, ino: int, offset: int, data: bytes) -> int:
        time.sleep(self.disk.before(self.fs, "write", ino, offset, len(data)))
        return self.fs.write(ino, offset, data)

    def fsync(self, ino: int) -> None:
        time.sleep(self.disk.before(self.fs, "fsync", ino))
        self.fs.fsync(ino)

    def truncate(self, ino: int, size: int) -> None:
        self.disk.freed(self.fs, ino, size)
        self.fs.truncate(ino, size)

    def file(self, name: str) -> int:
        return self.fs.create(ROOT, name, 0o644).ino


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    backing = tmp_path / "backing"
    backing.mkdir()
    yield Served(backing)


def _errno_of(call: object) -> int:
    assert callable(call)
    with pytest.raises(FsError) as raised:
        call()
    return raised.value.errno or 0


def test_a_write_after_full_fails_with_enospc_until_space_is_freed(served: Served) -> None:
    log = served.file("0.log")
    served.write(log, 0, b"a" * 1000)
    served.disk.start({"kind": "full", "bytes": 600})
    assert served.write(log, 1000, b"b" * 500) == 500  # 500 of the 600 left
    assert _errno_of(lambda: served.write(log, 1500, b"c" * 101)) == errno.ENOSPC
    assert served.write(log, 0, b"z" * 1500) == 1500  # in place: the files do not grow
    assert served.write(log, 1500, b"c" * 100) == 100  # exactly full
    assert _errno_of(lambda: served.write(log, 1600, b"d")) == errno.ENOSPC
    served.truncate(log, 1000)  # retention deletes: 600 bytes come back
    assert served.write(log, 1000, b"e" * 600) == 600
    assert _errno_of(lambda: served.write(log, 1600, b"f")) == errno.ENOSPC
    assert served.fs.read(log, 1000, 600) == b"e" * 600  # the refused writes left nothing
    served.disk.heal()  # the operator frees the disk
    assert served.write(log, 1600, b"g" * 10_000) == 10_000
    assert served.disk.healed[0]["kind"] == "full" and served.disk.healed[0]["hits"] == 3


def test_a_read_under_corrupt_returns_other_bytes_and_the_file_stays_whole(
    served: Served,
) -> None:
    log = served.file("0.log")
    data = bytes(range(256)) * 40
    served.write(log, 0, data)
    served.fsync(log)
    served.disk.start({"kind": "corrupt", "bits": 3, "seed": 7})
    seen = served.read(log, 0, len(data))
    assert seen != data
    assert _bits_apart(seen, data) == 3
    assert served.fs.read(log, 0, len(data)) == data  # the model's bytes are untouched
    served.disk.heal()
    assert served.read(log, 0, len(data)) == data


def test_corrupt_reaches_only_the_files_it_names(served: Served) -> None:
    log, index = served.file("0.log"), served.file("0.index")
    for ino in (log, index):
        served.write(ino, 0, b"x" * 100)
    served.disk.start({"kind": "corrupt", "files": "*.log"})
    assert served.read(index, 0, 100) == b"x" * 100
    assert served.read(log, 0, 100) != b"x" * 100


def test_a_glob_with_a_slash_names_files_by_their_path(served: Served) -> None:
    """``[!_]*/*.log``: the partitions' segments, not KRaft's metadata log (same names)."""
    topic = served.fs.mkdir(ROOT, "run-t0-0", 0o755).ino
    meta = served.fs.mkdir(ROOT, "__cluster_metadata-0", 0o755).ino
    segment = served.fs.create(topic, "00000000000000000000.log", 0o644).ino
    metadata = served.fs.create(meta, "00000000000000000000.log", 0o644).ino
    top = served.file("00000000000000000000.log")
    served.disk.start({"kind": "error", "ops": ["write"], "files": "[!_]*/*.log"})
    assert _errno_of(lambda: served.write(segment, 0, b"s")) == errno.EIO
    assert served.write(metadata, 0, b"m") == 1
    assert served.write(top, 0, b"t") == 1  # no directory: the path has no "/"
    served.disk.start({"kind": "error", "ops": ["write"], "files": "*.log"})
    for ino in (segment, metadata, top):  # without a "/": the name alone, in any directory
        assert _errno_of(lambda ino=ino: served.write(ino, 0, b"x")) == errno.EIO


@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=1, max_size=600), bits=st.integers(1, 40),
       seed=st.integers(0, 2**32))
def test_corrupt_flips_exactly_the_bits_asked(data: bytes, bits: int, seed: int) -> None:
    disk = Disk()
    disk.start({"kind": "corrupt", "bits": bits, "seed": seed})
    fs = _NamedOnly()
    out = disk.after_read(fs, 5, data)  # type: ignore[arg-type]
    assert len(out) == len(data)
    assert _bits_apart(out, data) == min(bits, 8 * len(data))


def test_fsync_under_slow_takes_the_time_asked(served: Served) -> None:
    log = served.file("0.log")
    served.write(log, 0, b"a" * 100)
    served.disk.start({"kind": "slow", "ms": 150, "ops": ["fsync"]})
    started = time.monotonic()
    served.fsync(log)
    assert 0.15 <= time.monotonic() - started < 1.0
    started = time.monotonic()
    served.write(log, 100, b"b")  # writes are not asked to wait
    assert time.monotonic() - started < 0.1
    served.disk.heal()
    started = time.monotonic()
    served.fsync(log)
    assert time.monotonic() - started < 0.1


def test_slow_draws_from_the_distribution_asked(served: Served) -> None:
    log = served.file("0.log")
    for dist, low, high in (("exp", 0.08, 0.12), ("uniform", 0.09, 0.11)):
        served.disk.start({"kind": "slow", "ms": 100, "dist": dist, "seed": 3})
        delays = [served.disk.before(served.fs, "read", log) for _ in range(2000)]
        assert low < sum(delays) / len(delays) < high
        assert len(set(delays)) > 1000  # drawn, not fixed
    served.disk.start({"kind": "slow", "ms": 40})
    assert served.disk.before(served.fs, "write", log, 0, 1) == pytest.approx(0.04)


def test_error_once_fails_one_request_then_the_disk_works(served: Served) -> None:
    log = served.file("0.log")
    served.write(log, 0, b"a" * 100)
    served.disk.start({"kind": "error", "ops": ["fsync"], "once": True})
    assert served.read(log, 0, 100) == b"a" * 100  # reads are not named
    assert _errno_of(lambda: served.fsync(log)) == errno.EIO
    assert not served.disk.active  # spent
    served.fsync(log)  # the retry succeeds, and makes the data durable
    assert served.fs.pending().bytes == 0
    assert served.disk.healed == [{"kind": "error", "ops": ["fsync"], "files": "*", "hits": 1,
                                   "once": True, "errno": "EIO"}]


def test_heal_reports_a_once_fault_that_fired_and_ended_before_it(served: Served) -> None:
    """A ``once`` error ends as it fires; the heal after it still reports it, with its
    hit, so the nemesis knows the disk failed (and starts the broker that died on it)."""
    log = served.file("0.log")
    served.disk.start({"kind": "error", "ops": ["fsync"], "once": True})
    assert _errno_of(lambda: served.fsync(log)) == errno.EIO
    assert [f["hits"] for f in served.disk.heal()] == [1]
    assert served.disk.heal() == []  # reported once


def test_error_until_healed_fails_every_request_it_names(served: Served) -> None:
    log, meta = served.file("0.log"), served.file("meta.properties")
    served.write(log, 0, b"a")
    served.write(meta, 0, b"m")
    served.disk.start({"kind": "error", "files": "*.log"})
    for _ in range(3):
        assert _errno_of(lambda: served.write(log, 1, b"b")) == errno.EIO
        assert _errno_of(lambda: served.read(log, 0, 1)) == errno.EIO
        assert _errno_of(lambda: served.fsync(log)) == errno.EIO
    served.write(meta, 1, b"n")  # other files are fine
    served.fsync(meta)
    assert served.fs.read(log, 0, 10) == b"a"  # the failed write changed nothing
    assert served.disk.heal()[0]["hits"] == 9
    served.write(log, 1, b"b")
    served.fsync(log)


def test_faults_of_different_kinds_hold_together_and_one_replaces_its_kind(
    served: Served,
) -> None:
    log = served.file("0.log")
    served.disk.start({"kind": "slow", "ms": 10})
    served.disk.start({"kind": "full", "bytes": 0})
    served.disk.start({"kind": "slow", "ms": 20})
    assert [f["kind"] for f in served.disk.state()["faults"]] == ["full", "slow"]
    assert served.disk.state()["faults"][1]["ms"] == 20
    assert _errno_of(lambda: served.write(log, 0, b"a")) == errno.ENOSPC
    assert served.disk.before(served.fs, "fsync", log) == pytest.approx(0.02)


@pytest.mark.parametrize(("spec", "says"), [
    ({"kind": "melt"}, "not one of slow, error, full, corrupt"),
    ({"kind": "slow", "ms": -1}, "ms >= 0"),
    ({"kind": "slow", "ms": 5, "dist": "pareto"}, "dist one of"),
    ({"kind": "error", "errno": "EPERM"}, "not one of EIO"),
    ({"kind": "error", "ops": ["stat"]}, "name some of read, write, fsync"),
    ({"kind": "full", "bytes": -5}, "bytes >= 0"),
    ({"kind": "corrupt", "ops": ["write"]}, "reads only"),
    ({"kind": "corrupt", "probability": 0}, "0 < probability"),
    ({"kind": "full", "ms": 3}, "not ['ms']"),
])
def test_a_bad_fault_is_refused_saying_why(spec: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse(spec)
    assert says in str(raised.value)


def test_with_no_fault_in_force_requests_pass_untouched(served: Served) -> None:
    log = served.file("0.log")
    assert not served.disk.active
    assert served.disk.before(served.fs, "write", log, 0, 10) == 0.0
    assert served.disk.after_read(served.fs, log, b"abc") == b"abc"


class _NamedOnly:
    """Just enough of an ``Overlay`` for ``after_read``: every inode is ``x.log``."""

    class _Node:
        name = "x.log"
        parent = None

    def node(self, ino: int) -> _Node:
        return self._Node()


def _bits_apart(a: bytes, b: bytes) -> int:
    return sum(bin(x ^ y).count("1") for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize(
    ("spec", "op", "refused"),
    [
        ({"kind": "full", "bytes": 0}, "write", True),
        ({"kind": "error", "ops": ["write"], "once": True}, "write", True),
        ({"kind": "error", "ops": ["fsync"]}, "fsync", False),
        ({"kind": "error", "ops": ["read"]}, "read", False),
    ],
)
def test_a_refused_write_is_told_once_so_the_glue_evicts_its_pages(
    served: Served, spec: dict[str, object], op: str, refused: bool
) -> None:
    log = served.file("0.log")
    served.disk.start(spec)
    call = {"write": lambda: served.write(log, 0, b"x"), "fsync": lambda: served.fsync(log),
            "read": lambda: served.read(log, 0, 1)}[op]
    _errno_of(call)
    served.disk.heal()
    assert served.disk.refused_writeback() is refused
    assert served.disk.refused_writeback() is False  # told once
