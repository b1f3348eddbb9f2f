"""Reading a history in chunks (``checkers._parallel``) must give the single-pass verdict.

Every property here compares against ``check_file(path, jobs=1)``, the single
pass the rest of the checker tests pin down. Chunks are cut at random lines of
model histories, valid ones and ones with a planted fault, so edges fall inside
pending operations, between a process's polls and across divergent offsets.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import kafka_model as km
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import _parallel as parallel
from checkers import check_file
from checkers._check import _judge, _proven_info_ops, _proven_offsets, _reread
from checkers._collect import Collector
from checkers._fork import can_fork
from checkers._history import NeedsWholeFile, Scanner
from checkers._input import open_source
from checkers._key_parts import join, judge_keys, split
from checkers._parallel import chunk_count, plan, read_chunked
from checkers._verdict import Anomalies
from harness.base.errors import HistoryError
from harness.bench._synth import INJECTABLE, write_run

SETTINGS = st.builds(
    km.Settings,
    ops=st.integers(20, 150),
    clients=st.integers(1, 5),
    keys=st.integers(1, 3),
    p_txn=st.sampled_from([0.0, 0.5]),
    p_fail=st.sampled_from([0.0, 0.2]),
    p_info=st.sampled_from([0.0, 0.1]),
    p_assign=st.sampled_from([0.05, 0.3]),
    p_crash=st.sampled_from([0.0, 0.03]),
    max_batch=st.integers(1, 4),
)
INJECTORS = [
    None,
    km.inject_lost_write,
    km.inject_duplicate,
    km.inject_inconsistent_offsets,
    km.inject_int_reorder,
    km.inject_poll_reorder,
    km.inject_g1a,
    km.inject_send_reorder,
]


def _fill_values(ops: list[dict[str, Any]]) -> None:
    """Give value-less fail/info completions their invoke's value (what they mean)."""
    pending: dict[Any, Any] = {}
    for op in ops:
        if op["type"] == "invoke":
            pending[op["process"]] = op.get("value")
        elif "value" not in op or op["value"] is None:
            op["value"] = pending.get(op["process"])


def _history(seed: int, shape: km.Settings, inject: int, fill: bool) -> list[dict[str, Any]]:
    ops = km.generate(seed, shape)
    injector = INJECTORS[inject % len(INJECTORS)]
    if injector is not None:
        injector(ops, random.Random(seed))
    if fill:
        _fill_values(ops)
    return ops


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="insync-chunks-") as tmp:
        yield Path(tmp)


def _write(path: Path, lines: list[bytes]) -> list[int]:
    """Write the lines; returns the byte offset where each line starts."""
    starts = []
    at = 0
    for line in lines:
        starts.append(at)
        at += len(line)
    path.write_bytes(b"".join(lines))
    return starts


def _ranges(starts: list[int], size: int, cut_lines: list[int]) -> list[tuple[int, int]]:
    cuts = sorted({0, *(starts[i] for i in cut_lines if 0 < i < len(starts) and starts[i] < size)})
    return list(zip(cuts, [*cuts[1:], size], strict=True))


def _outcome(path: Path, read: Any) -> Any:
    """A verdict, or the error a history gets, or the request for one pass (the lines once
    more for the passes that need them, as ``check_file`` gives them)."""
    try:
        collector, scanner = read()
    except HistoryError as err:
        return ("error", str(err), err.hint)
    except NeedsWholeFile:
        return "one pass"
    return _judge(collector, scanner, Anomalies(1000), ww_deps=False, budget_s=60.0,
                  again=_reread(open_source(path)))


def _single(path: Path) -> Any:
    try:
        verdict = check_file(path, jobs=1)
    except HistoryError as err:
        return ("error", str(err), err.hint)
    verdict.pop("warnings", None)  # said by check_file, not by the reading compared here
    return verdict


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=SETTINGS,
    inject=st.integers(0, len(INJECTORS) - 1),
    cut_lines=st.lists(st.integers(1, 400), max_size=4),
)
def test_chunked_reading_gives_the_single_pass_verdict(
    scratch: Path, seed: int, shape: km.Settings, inject: int, cut_lines: list[int]
) -> None:
    ops = _history(seed, shape, inject, fill=True)
    path = scratch / "h.jsonl"
    starts = _write(path, [orjson.dumps(op) + b"\n" for op in ops])
    ranges = _ranges(starts, path.stat().st_size, cut_lines)
    expected = _single(path)
    assert _outcome(path, lambda: read_chunked(path, ranges)) == expected


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=SETTINGS,
    cut_lines=st.lists(st.integers(1, 400), max_size=3),
)
def test_value_less_completions_across_an_edge_ask_for_one_pass(
    scratch: Path, seed: int, shape: km.Settings, cut_lines: list[int]
) -> None:
    """The model leaves fail/info values out: a chunk may not know them, never guess."""
    ops = _history(seed, shape, 0, fill=False)
    path = scratch / "h.jsonl"
    starts = _write(path, [orjson.dumps(op) + b"\n" for op in ops])
    size = path.stat().st_size
    got = _outcome(path, lambda: read_chunked(path, _ranges(starts, size, cut_lines)))
    if got != "one pass":
        assert got == _single(path)


def _plant_number(value: Any, rng: random.Random, bad: Any) -> bool:
    """Replace one integer inside a micro-op list with ``bad``; False if there is none."""
    spots: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if type(v) is int:
                spots.append((node, k))
            elif isinstance(v, list | dict):
                walk(v)

    if isinstance(value, list):
        walk(value)
    if not spots:
        return False
    node, k = rng.choice(spots)
    node[k] = bad
    return True


#: offsets/values a micro-op may not hold (2**64 reads back as a float, as orjson parses it)
BAD_NUMBERS = [-1, 2**63, float(2**64), True]


def _corrupt(lines: list[bytes], rng: random.Random) -> None:
    """One way a history can break HISTORY.md, at a random line."""
    i = rng.randrange(len(lines))
    op = orjson.loads(lines[i])
    how = rng.randrange(14)
    if how == 0:
        lines[i] = b"{not json\n"
    elif how == 1:
        del lines[i]  # an invoke or a completion goes missing
    elif how == 2:
        lines.insert(i, lines[i])  # the same line twice
    elif how == 3:
        op.pop(rng.choice(["index", "time", "type", "f", "process"]), None)
        lines[i] = orjson.dumps(op) + b"\n"
    elif how == 4:
        op["f"] = "poll" if op.get("f") != "poll" else "send"
        lines[i] = orjson.dumps(op) + b"\n"
    elif how == 5:
        lines[i] = b"\n"
    elif how == 6:  # an index off its position: a gap or a repeat
        op["index"] += rng.choice([-1, 1, 2])
        lines[i] = orjson.dumps(op) + b"\n"
    elif how == 7:
        op["time"] = rng.choice([-1, 1.5, True, None, 2**63, str(op["time"])])
        lines[i] = orjson.dumps(op) + b"\n"
    elif how == 8 and i > 0:  # the line before jumps ahead: this one goes backwards
        before = orjson.loads(lines[i - 1])
        before["time"] = op["time"] + rng.choice([1, 10**9])
        lines[i - 1] = orjson.dumps(before) + b"\n"
    elif how == 9:
        op["f"] = rng.choice(["f", "read", "Send", ""])
        lines[i] = orjson.dumps(op) + b"\n"
    elif how == 10:
        op["process"] = rng.choice([-1, -(2**63), True, 2**60])
        lines[i] = orjson.dumps(op) + b"\n"
    elif how == 11 and _plant_number(op.get("value"), rng, rng.choice(BAD_NUMBERS)):
        lines[i] = orjson.dumps(op) + b"\n"
    elif how == 12:  # the harness died writing the last line
        lines[-1] = lines[-1][: rng.randrange(1, len(lines[-1]) - 1)]
    elif how == 13:
        lines[i] = lines[i].replace(b'"', b'"\xff', 1)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=SETTINGS,
    cut_lines=st.lists(st.integers(1, 400), max_size=4),
)
def test_chunked_reading_reports_the_single_pass_error(
    scratch: Path, seed: int, shape: km.Settings, cut_lines: list[int]
) -> None:
    ops = _history(seed, shape, 0, fill=True)
    lines = [orjson.dumps(op) + b"\n" for op in ops]
    _corrupt(lines, random.Random(seed))
    path = scratch / "h.jsonl"
    starts = _write(path, lines)
    end = open_source(path).end  # short of a last line cut by a crash
    got = _outcome(path, lambda: read_chunked(path, _ranges(starts, end, cut_lines)))
    if got != "one pass":
        assert got == _single(path)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        pytest.param("time", 3, "line 6: time 3 goes backwards", id="time-backwards"),
        pytest.param("index", 4, "line 6: index 4 is not", id="index-repeat"),
        pytest.param("index", 6, "line 6: index 6 is not", id="index-gap"),
        pytest.param("time", -3, "line 6: time must be", id="time-negative"),
    ],
)
def test_index_and_time_errors_are_found_at_every_chunk_edge(
    tmp_path: Path, field: str, value: int, message: str
) -> None:
    lines = [_op(i, i % 3, "invoke", "poll", [["poll"]]) for i in range(3)]
    lines += [_op(i, i % 3, "ok", "poll", [["poll", {}]]) for i in range(3, 9)]
    op = orjson.loads(lines[5])
    op[field] = value
    lines[5] = orjson.dumps(op) + b"\n"
    path = tmp_path / "h.jsonl"
    starts = _write(path, lines)
    single = _single(path)
    assert single[1].startswith(message)
    for cuts in [[c] for c in range(1, 9)] + [[2, 5], [5, 6], [3, 6, 7]]:
        ranges = _ranges(starts, path.stat().st_size, cuts)
        assert _outcome(path, lambda r=ranges: read_chunked(path, r)) == single, cuts


def test_a_time_error_at_an_edge_comes_before_that_lines_pairing_error(tmp_path: Path) -> None:
    """Line 3 both goes back in time and completes nothing: a single pass says time first."""
    lines = [
        _op(0, 0, "invoke", "poll", [["poll"]]),
        _op(1, 0, "ok", "poll", [["poll", {}]]).replace(b'"time":1', b'"time":50'),
        _op(2, 1, "ok", "poll", [["poll", {}]]),
    ]
    path = tmp_path / "h.jsonl"
    starts = _write(path, lines)
    single = _single(path)
    assert single[1].startswith("line 3: time 2 goes backwards")
    size = path.stat().st_size
    assert _outcome(path, lambda: read_chunked(path, _ranges(starts, size, [2]))) == single


def _model_file(tmp_path: Path, ops: int = 3000) -> Path:
    history = _history(7, km.Settings(ops=ops, clients=6, keys=3, p_txn=0.3), 0, fill=True)
    path = tmp_path / "history.jsonl"
    path.write_bytes(b"".join(orjson.dumps(op) + b"\n" for op in history))
    return path


_FORKED = """
import json, sys
from pathlib import Path
from checkers import check_file
from checkers._parallel import chunk_count
from harness.base.errors import HistoryError
path = Path(sys.argv[1])
chunks = chunk_count(path.stat().st_size, jobs=3)
def outcome(jobs):
    try:
        return check_file(path, jobs=jobs)
    except HistoryError as err:
        return str(err)
print(json.dumps({"chunks": chunks, "single": outcome(1), "forked": outcome(3)}))
"""


def _forked(path: Path) -> dict[str, Any]:
    """Both readings in a fresh, single-threaded interpreter: this one may run threads
    (a library imported by another test), and then ``check_file`` would not fork."""
    out = subprocess.run(
        [sys.executable, "-c", _FORKED, str(path)], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(out.stdout)
    assert result["chunks"] == 3, "the fresh interpreter should fork its readers"
    return result


def test_forked_readers_give_the_single_pass_verdict(tmp_path: Path) -> None:
    result = _forked(_model_file(tmp_path))
    assert result["single"]["valid"] is True
    assert result["forked"] == result["single"]


def test_forked_readers_report_the_first_error(tmp_path: Path) -> None:
    path = _model_file(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[len(lines) * 2 // 3] = b"[1, 2]\n"
    lines[len(lines) * 5 // 6] = b"not json\n"
    path.write_bytes(b"".join(lines))
    result = _forked(path)
    assert result["forked"] == result["single"]
    assert result["forked"].startswith(f"line {len(lines) * 2 // 3 + 1}:")


def test_a_value_less_completion_at_an_edge_falls_back_to_one_pass(tmp_path: Path) -> None:
    lines = [
        b'{"index":0,"time":0,"process":0,"type":"invoke","f":"send","value":[["send","x",1]]}\n',
        b'{"index":1,"time":1,"process":0,"type":"ok","f":"send","value":[["send","x",[0,1]]]}\n',
        b'{"index":2,"time":2,"process":0,"type":"invoke","f":"send","value":[["send","x",2]]}\n',
        b'{"index":3,"time":3,"process":0,"type":"fail","f":"send"}\n',
        b'{"index":4,"time":4,"process":1,"type":"invoke","f":"poll","value":[["poll"]]}\n',
        b'{"index":5,"time":5,"process":1,"type":"ok","f":"poll","value":[["poll",{"x":[[0,1]]}]]}\n',
    ]
    path = tmp_path / "h.jsonl"
    starts = _write(path, lines)
    with pytest.raises(NeedsWholeFile):
        read_chunked(path, _ranges(starts, path.stat().st_size, [3]))
    assert check_file(path, jobs=2) == check_file(path, jobs=1)


def test_a_failed_parallel_read_is_judged_in_one_pass_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not silent: a bug in the parallel read leaves the verdict whole and names itself."""
    path = _model_file(tmp_path, ops=500)
    expected = check_file(path, jobs=1)

    def broken(*_: Any) -> Any:
        raise RuntimeError("merge went wrong")

    monkeypatch.setattr("checkers._check.read_parallel", broken)
    monkeypatch.setattr("checkers._check.chunk_count", lambda *_, **__: 2)  # threads or not
    verdict = check_file(path, jobs=2)
    (warning,) = verdict.pop("warnings")
    assert "RuntimeError: merge went wrong" in warning and "one pass" in warning
    assert verdict == expected


def test_chunks_are_cut_at_line_starts(tmp_path: Path) -> None:
    path = _model_file(tmp_path, ops=500)
    data = path.read_bytes()
    ranges = plan(path, 4)
    assert ranges[0][0] == 0
    assert ranges[-1][1] == len(data)
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert end == start
        assert data[start - 1 : start] == b"\n"


def test_small_files_and_threaded_callers_read_in_one_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with monkeypatch.context() as alone:
        alone.setattr(parallel, "can_fork", lambda: True)
        assert chunk_count(1000, cores=8) == 1
        assert chunk_count(10 * 2**30, jobs=1, cores=8) == 1
        assert chunk_count(parallel.MIN_PARALLEL_BYTES * 3, cores=8) == 3
        assert chunk_count(10 * 2**30, cores=64) == 8
        assert chunk_count(10, jobs=2) == 2
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not can_fork()
        assert chunk_count(10 * 2**30, cores=8) == 1, "forking beside a thread is unsafe"
        assert chunk_count(10 * 2**30, jobs=4) == 1
    finally:
        stop.set()
        other.join()


def _op(index: int, process: int, type_: str, f: str, value: Any) -> bytes:
    return orjson.dumps(
        {"index": index, "time": index, "process": process, "type": type_, "f": f, "value": value}
    ) + b"\n"


def test_an_offset_that_diverges_across_an_edge_names_the_op_that_wrote_it(
    tmp_path: Path,
) -> None:
    poll = [["poll"]]
    lines = [
        _op(0, 0, "invoke", "send", [["send", "x", 1], ["send", "x", 2]]),
        _op(1, 0, "ok", "send", [["send", "x", [0, 1]], ["send", "x", [1, 2]]]),
        _op(2, 1, "invoke", "poll", poll),
        _op(3, 1, "ok", "poll", [["poll", {"x": [[0, 1], [1, 2]]}]]),
        _op(4, 2, "invoke", "send", [["send", "x", 3]]),
        _op(5, 2, "ok", "send", [["send", "x", [2, 3]]]),  # <- a cut may fall here
        _op(6, 3, "invoke", "poll", poll),
        _op(7, 3, "ok", "poll", [["poll", {"x": [[0, 1], [1, 3], [2, 3]]}]]),
        _op(8, 1, "invoke", "poll", poll),
        _op(9, 1, "ok", "poll", [["poll", {"x": [[1, 3]]}]]),
    ]
    path = tmp_path / "h.jsonl"
    starts = _write(path, lines)
    single = check_file(path, jobs=1)
    assert single["anomalies"]["inconsistent-offsets"][0]["witnesses"] == {"2": 1, "3": 7}
    for cut in range(1, len(lines)):
        ranges = _ranges(starts, path.stat().st_size, [cut])
        assert _outcome(path, lambda r=ranges: read_chunked(path, r)) == single, cut


def _collected(ops: list[dict[str, Any]]) -> tuple[Collector, set[int], dict[str, Any]]:
    collector = Collector()
    Scanner(collector).feed_all(ops)
    proven = _proven_info_ops(collector)
    return collector, proven, _proven_offsets(collector, proven)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=SETTINGS.map(lambda s: replace(s, keys=s.keys + 2)),
    inject=st.integers(0, len(INJECTORS) - 1),
    cap=st.integers(0, 3),
    parts=st.integers(2, 4),
)
def test_keys_judged_in_parts_join_into_the_single_pass_anomalies(
    seed: int, shape: km.Settings, inject: int, cap: int, parts: int
) -> None:
    ops = _history(seed, shape, inject, fill=False)
    collector, proven, offsets = _collected(ops)
    keys = sorted(collector.keys)
    single = judge_keys(collector, keys, proven, offsets, cap)
    collector, proven, offsets = _collected(ops)  # build() adds proven offsets: start afresh
    runs = split(collector, keys, parts)
    assert [k for run in runs for k in run] == keys
    assert len(runs) <= parts
    assert all(runs)
    joined = Anomalies(cap)
    for run in runs:
        join(joined, judge_keys(collector, run, proven, offsets, cap))
    assert (joined.examples, joined.counts) == single


@pytest.mark.parametrize("inject", [(), *((kind,) for kind in INJECTABLE)])
def test_simulated_runs_read_in_chunks_give_the_single_pass_verdict(
    tmp_path: Path, inject: tuple[str, ...]
) -> None:
    """Runs shaped like ``insync run`` writes them (nemesis lines, crashes, planted faults)."""
    run = write_run(tmp_path / "run", ops=6000, seed=3, interval_s=0.5, inject=inject)
    path = run / "history.jsonl"
    single = check_file(path, jobs=1)
    assert (single["valid"] is True) == (not inject)
    starts = _write(path, path.read_bytes().splitlines(keepends=True))
    size = path.stat().st_size
    for cuts in ([3000], [1, 2000, 2001], [1000, 2500, 4000, 5500]):
        assert _outcome(path, lambda c=cuts: read_chunked(path, _ranges(starts, size, c))) == single
