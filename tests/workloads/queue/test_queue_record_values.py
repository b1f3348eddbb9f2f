"""A read record's bytes become a history value: what a send wrote, or a garbage-read."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from checkers import check_file
from workloads.queue.shape import UNREADABLE_VALUE, record_value


@given(st.integers(0, UNREADABLE_VALUE - 1))
def test_every_value_a_send_writes_reads_back_as_itself(value: int) -> None:
    assert record_value(str(value).encode()) == value


@given(st.binary(max_size=24))
def test_bytes_that_spell_no_value_below_the_reserved_one_are_unreadable(raw: bytes) -> None:
    spelt = raw.isdigit() and len(raw) <= 19 and int(raw) < UNREADABLE_VALUE
    # a number with leading zeros (a flipped bit may make one) reads as the number it spells
    assert record_value(raw) == (int(raw) if spelt else UNREADABLE_VALUE)


def test_empty_none_and_flipped_bytes_are_unreadable() -> None:
    for raw in (None, b"", b"-1", b"12#4", b" 7", b"1_0", b"9" * 20):
        assert record_value(raw) == UNREADABLE_VALUE


def test_a_corrupt_record_read_is_a_garbage_read_not_a_malformed_history(tmp_path: Path) -> None:
    """A value a flipped bit made unreadable is recorded as one no send wrote, and the
    checker judges the history (invalid) instead of refusing it."""
    ops = [
        {"process": 0, "type": "invoke", "f": "send", "value": [["send", "t0-0", 5]]},
        {"process": 0, "type": "ok", "f": "send", "value": [["send", "t0-0", [0, 5]]]},
        {"process": 1, "type": "invoke", "f": "poll", "value": [["poll"]]},
        {"process": 1, "type": "ok", "f": "poll", "value": [
            ["poll", {"t0-0": [[0, 5], [1, record_value(b"1\x004")]]}]]},
    ]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps({"index": i, "time": i, **op}) + "\n"
                            for i, op in enumerate(ops)))
    verdict = check_file(path, jobs=1)
    assert verdict["valid"] is False
    assert verdict["anomalies"]["garbage-read"] == [
        {"key": "t0-0", "value": UNREADABLE_VALUE, "op": 3}]
