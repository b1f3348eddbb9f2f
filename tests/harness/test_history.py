"""The history writer writes HISTORY.md's format, flushes each line, and refuses malformed pairs."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest

from harness.base.errors import HistoryError
from harness.base.history import ProcessTable, read_history
from harness.base.history_writer import HistoryWriter


class FakeClock:
    """A clock the test moves by hand, in nanoseconds."""

    def __init__(self, now: int = 1_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_ops_are_stamped_with_index_and_time_since_start(tmp_path: Path) -> None:
    clock = FakeClock(5_000)
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path, clock=clock) as history:
        clock.now = 6_200
        inv = history.invoke(0, "send", [["send", "t0-0", 1]])
        clock.now = 9_000
        ok = history.complete(inv, "ok", [["send", "t0-0", [17, 1]]])
        clock.now = 9_500
        history.nemesis("start-partition", {"isolated": [["n1"], ["n2", "n3"]]})
    assert lines(path) == [
        {"index": 0, "time": 1_200, "process": 0, "type": "invoke", "f": "send",
         "value": [["send", "t0-0", 1]]},
        {"index": 1, "time": 4_000, "process": 0, "type": "ok", "f": "send",
         "value": [["send", "t0-0", [17, 1]]]},
        {"index": 2, "time": 4_500, "process": "nemesis", "type": "info",
         "f": "start-partition", "value": {"isolated": [["n1"], ["n2", "n3"]]}},
    ]
    assert inv["index"] == 0 and ok["index"] == 1


@pytest.mark.parametrize(
    "stamps", [{}, {"index": 7, "time": 99}, {"time": 99}],
    ids=["no-stamps", "index-and-time", "time-only"])
def test_the_writers_stamps_win_and_lead_each_line(tmp_path: Path, stamps: dict[str, int]) -> None:
    path = tmp_path / "h.jsonl"
    with HistoryWriter(path, clock=FakeClock(), start_ns=0) as history:
        written = history.append({**stamps, "process": 0, "type": "invoke", "f": "poll",
                                  "value": [["poll"]], "seek": "beginning"})
    assert written == {"index": 0, "time": 1_000, "process": 0, "type": "invoke", "f": "poll",
                       "value": [["poll"]], "seek": "beginning"}
    assert path.read_text().startswith('{"index":0,"time":1000,"process":0,')


def test_error_is_written_only_when_given(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    with HistoryWriter(path, clock=FakeClock()) as history:
        a = history.invoke(0, "poll", [["poll"]])
        history.complete(a, "fail", [["poll"]], error={"code": "_TRANSPORT"})
        b = history.invoke(0, "poll", [["poll"]])
        history.complete(b, "ok", [["poll", {}]])
    ops = lines(path)
    assert ops[1]["error"] == {"code": "_TRANSPORT"}
    assert "error" not in ops[3]


def test_each_op_is_on_disk_before_the_call_returns(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = HistoryWriter(path, clock=FakeClock())
    history.invoke(3, "send", [["send", "t0-0", 1]])
    # Read through a separate handle while the writer is still open: a harness
    # killed right now leaves exactly this on disk.
    assert [op["process"] for op in read_history(path)] == [3]
    history.close()


def test_start_ns_shares_time_zero_with_the_runner() -> None:
    sink = io.BytesIO()
    history = HistoryWriter(sink, clock=FakeClock(50), start_ns=20)
    assert history.invoke(0, "poll", [["poll"]])["time"] == 30


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        pytest.param([(0, "invoke", "send"), (0, "invoke", "poll")], "while", id="double-invoke"),
        pytest.param([(0, "ok", "send")], "nothing pending", id="completion-without-invoke"),
        pytest.param([(0, "invoke", "send"), (0, "ok", "poll")], "invoked", id="f-mismatch"),
        pytest.param([(0, "bogus", "send")], "unknown op type", id="bad-type"),
        pytest.param([("0", "invoke", "send")], "is an int", id="string-process"),
    ],
)
def test_malformed_pairs_are_refused(ops: list[tuple[object, str, str]], message: str) -> None:
    history = HistoryWriter(io.BytesIO(), clock=FakeClock())
    with pytest.raises(ValueError, match=message):
        for process, type_, f in ops:
            history.append({"process": process, "type": type_, "f": f, "value": None})


def test_a_refused_op_is_not_written() -> None:
    sink = io.BytesIO()
    history = HistoryWriter(sink, clock=FakeClock())
    with pytest.raises(ValueError):
        history.append({"process": 0, "type": "ok", "f": "send", "value": None})
    history.invoke(0, "send", None)
    assert [json.loads(x)["index"] for x in sink.getvalue().splitlines()] == [0]


def test_nemesis_lines_are_not_paired() -> None:
    history = HistoryWriter(io.BytesIO(), clock=FakeClock())
    history.nemesis_invoke("kill", {"nodes": ["n1"]})
    history.nemesis_invoke("kill", {"nodes": ["n2"]})
    history.nemesis("kill", {"nodes": ["n1"]})
    assert history.pending == {}


def test_concurrent_writers_keep_file_order_index_order_and_time_order(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = HistoryWriter(path)  # the real monotonic clock
    threads, per_thread = 8, 200

    def worker(process: int) -> None:
        for i in range(per_thread):
            inv = history.invoke(process, "send", [["send", f"t0-{process}", i]])
            history.complete(inv, "ok", [["send", f"t0-{process}", [i, i]]])

    pool = [threading.Thread(target=worker, args=(p,)) for p in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    history.close()
    ops = list(read_history(path))
    assert [op["index"] for op in ops] == list(range(threads * per_thread * 2))
    times = [op["time"] for op in ops]
    assert times == sorted(times)
    for process in range(threads):
        mine = [op for op in ops if op["process"] == process]
        assert [op["type"] for op in mine] == ["invoke", "ok"] * per_thread


def test_read_history_drops_only_a_last_line_cut_short(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"index": 0}\n\n{"index": 1}\n{"index": 2, "val')
    assert [op["index"] for op in read_history(path)] == [0, 1]


@pytest.mark.parametrize(
    ("content", "line"),
    [
        pytest.param(b'{"index": 0}\nnot json\n{"index": 2}\n', 2, id="garbage-in-the-middle"),
        pytest.param(b'{"index": 0}\n{"index": 1\n', 2, id="bad-last-line-with-newline"),
        pytest.param(b'[1, 2]\n', 1, id="not-an-object"),
    ],
)
def test_read_history_names_the_bad_line(tmp_path: Path, content: bytes, line: int) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(content)
    with pytest.raises(HistoryError) as caught:
        list(read_history(path))
    assert caught.value.line == line


def test_process_table_retires_to_old_plus_concurrency() -> None:
    table = ProcessTable(3)
    assert table.snapshot() == {0: 0, 1: 1, 2: 2}
    assert table.retire(1) == 4
    assert table.retire(1) == 7
    assert table.process(1) == 7
    assert table.process(0) == 0
    assert table.thread_of(7) == 1


def test_process_numbers_never_repeat_across_threads() -> None:
    table = ProcessTable(4)
    seen = set(table.snapshot().values())
    for i in range(100):
        fresh = table.retire(i * 7 % 4)
        assert fresh not in seen
        seen.add(fresh)


def test_process_table_needs_a_thread() -> None:
    with pytest.raises(ValueError):
        ProcessTable(0)


def test_an_op_ending_after_the_history_closed_is_dropped_not_raised(tmp_path: Path) -> None:
    """An interrupted run closes its history after waiting 30 s for busy workers; a
    nemesis start still waiting out a ZooKeeper session ended later and its thread died
    with "write to closed file"."""
    path = tmp_path / "h.jsonl"
    writer = HistoryWriter(path)
    writer.append({"process": "nemesis", "type": "invoke", "f": "start", "value": "all"})
    writer.close()
    late = writer.append({"process": "nemesis", "type": "info", "f": "start", "value": {}})
    assert late["f"] == "start" and writer.dropped == 1
    writer.close()  # twice: harmless
    assert len(path.read_text().splitlines()) == 1
