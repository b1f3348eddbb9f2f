"""Histories that break docs/HISTORY.md, one per rule, for the memory and the Spark engine.

Each case is the bytes of a file, the line its error must name (None: the
file as a whole) and a piece of the message. Every line is stamped with its
position and a rising time unless the case is about exactly that, so each
history breaks one rule only.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from typing import Any

import orjson

DROP = object()  #: a field value that removes the field
SEND = [["send", "x", 1]]
POLL = [["poll"]]


def line(i: int, process: Any = 0, type_: str = "invoke", f: str = "send", value: Any = None,
         **fields: Any) -> bytes:
    """Line ``i + 1`` (index ``i``, time ``1000 * i``); ``fields`` override or DROP fields."""
    if value is None and type_ == "invoke":
        value = SEND
    op = {"index": i, "time": 1000 * i, "process": process, "type": type_, "f": f, "value": value}
    op.update(fields)
    return orjson.dumps({k: v for k, v in op.items() if v is not DROP}) + b"\n"


def sent(i: int, result: Any, **fields: Any) -> bytes:
    """An ok send completion by process 0 at line ``i + 1``."""
    return line(i, 0, "ok", "send", result, **fields)


def polled(i: int, records: Any) -> bytes:
    """An ok poll completion by process 0 at line ``i + 1``."""
    return line(i, 0, "ok", "poll", [["poll", records]])


def _raw(text: str) -> bytes:
    return text.encode() + b"\n"


@dataclass(frozen=True)
class Bad:
    """A malformed history: what the file holds, the line to name, a piece of the message."""

    id: str
    content: bytes
    line: int | None
    message: str


INVOKE = line(0)
OK = sent(1, [["send", "x", [0, 1]]])
VALID = INVOKE + OK + line(2, 1, f="poll", value=POLL) + line(3, 1, "ok", "poll",
                                                           [["poll", {"x": [[0, 1]]}]])
BIG = 2**63

CASES = [
    # not JSON at all
    Bad("not-json-in-the-middle", INVOKE + b'{"index": 1, "time": 10\n' + OK, 2, "not JSON"),
    Bad("cut-line-with-newline-at-the-end", INVOKE + b'{"index": 1, "ti\n', 2, "not JSON"),
    Bad("blank-line", INVOKE + b"\n" + OK, 2, "an empty line"),
    Bad("not-utf8", INVOKE + OK.replace(b'"x"', b'"\xff"'), 2, "not UTF-8"),
    Bad("not-an-object", b"[1, 2]\n", 1, "expected a JSON object"),
    Bad("only-line-cut-short", b'{"index": 0, "ti', 1, "only line is cut short"),
    # fields
    Bad("missing-field", line(0, type=DROP), 1, "missing field 'type'"),
    Bad("process-not-an-integer", line(0, "p0"), 1, "process must be"),
    Bad("negative-process", line(0, -1), 1, "negative client process -1"),
    Bad("index-gap", INVOKE + sent(1, [["send", "x", [0, 1]]], index=2), 2,
        "index 2 is not the line's position 1"),
    Bad("index-repeat", INVOKE + sent(1, [["send", "x", [0, 1]]], index=0), 2,
        "index 0 is not the line's position 1"),
    Bad("index-boolean", line(0, index=False), 1, "index must be an integer, got false"),
    Bad("nemesis-index-wrong", INVOKE + line(5, "nemesis", "info", "kill", None, time=1000), 2,
        "index 5 is not the line's position 1"),
    Bad("time-negative", line(0, time=-1), 1, "time must be a non-negative integer"),
    Bad("time-not-an-integer", line(0, time=1.5), 1, "time must be a non-negative integer"),
    Bad("time-boolean", line(0, time=True), 1, "time must be a non-negative integer"),
    Bad("time-too-large", line(0, time=BIG), 1, "time must be a non-negative integer"),
    Bad("time-backwards", INVOKE + sent(1, [["send", "x", [0, 1]]], time=5) + line(2, 1, time=4),
        3, "time 4 goes backwards (the time before it is 5)"),
    Bad("time-backwards-after-nemesis",
        INVOKE + line(1, "nemesis", "info", "kill", {}) + sent(2, [["send", "x", [0, 1]]], time=30),
        3, "time 30 goes backwards (the time before it is 1000)"),
    Bad("unknown-type", INVOKE + line(1, 0, "done", "send", []), 2, "type must be"),
    Bad("unknown-client-f", line(0, f="f") + line(1, 0, "ok", "f", [["send", "x", [0, 1]]]), 1,
        "unknown client f \"f\""),
    Bad("f-not-a-string", line(0, f=7), 1, "f must be a string"),
    # pairing
    Bad("completion-without-invoke", sent(0, [["send", "x", [0, 1]]]), 1, "no pending invoke"),
    Bad("second-invoke-while-pending", INVOKE + line(1), 2, "second invoke"),
    Bad("completion-f-differs", INVOKE + line(1, 0, "ok", "poll", [["poll", {}]]), 2,
        "differs from its invoke"),
    Bad("ok-without-value", INVOKE + line(1, 0, "ok", "send", DROP), 2, "missing field 'value'"),
    # micro-ops
    Bad("short-send-in-invoke", line(0, value=[["send", "x"]]), 1, "malformed micro-op"),
    Bad("assign-keys-not-strings", line(0, f="assign", value=[1]), 1, "list of keys"),
    Bad("send-value-not-an-integer", INVOKE + sent(1, [["send", "x", "one"]]), 2,
        "malformed micro-op"),
    Bad("send-pair-too-short", INVOKE + sent(1, [["send", "x", [0]]]), 2, "malformed micro-op"),
    Bad("process-as-a-string", line(0, "3"), 1, "process must be"),
    Bad("value-as-a-string", line(0, f="poll", value='[["poll"]]'), 1,
        "poll value must be a list of micro-ops"),
    Bad("micro-op-as-a-string", line(0, f="poll", value=POLL) + line(1, 0, "ok", "poll",
        ['["poll",{"x":[[0,1]]}]']), 2, "malformed micro-op"),
    Bad("records-as-a-string", line(0, f="poll", value=POLL) + line(1, 0, "ok", "poll",
        [["poll", '{"x":[[0,1]]}']]), 2, "malformed micro-op"),
    Bad("poll-result-not-a-map", INVOKE + sent(1, [["poll", [[0, 1]]]]), 2,
        "malformed micro-op"),
    Bad("ok-value-null", INVOKE + sent(1, None), 2, "malformed micro-op"),
    Bad("record-value-boolean", line(0, f="poll", value=POLL) + polled(1, {"x": [[0, True]]}), 2,
        "malformed micro-op"),
    # offsets and values: 0 .. 2**63-1
    Bad("send-offset-negative", INVOKE + sent(1, [["send", "x", [-1, 1]]]), 2,
        "offset -1 is negative"),
    Bad("send-value-too-large", line(0, value=[["send", "x", 1]]) + sent(1, [["send", "x", BIG]]),
        2, f"value {BIG} does not fit in a signed 64-bit integer"),
    Bad("invoke-value-negative", line(0, value=[["send", "x", -1]]), 1, "value -1 is negative"),
    Bad("read-value-negative", line(0, f="poll", value=POLL) + polled(1, {"x": [[0, -5]]}), 2,
        "value -5 is negative"),
    Bad("read-offset-too-large", line(0, f="poll", value=POLL) + polled(1, {"x": [[BIG, 1]]}), 2,
        f"offset {BIG} does not fit in a signed 64-bit integer"),
    Bad("read-value-beyond-u64", line(0, f="poll", value=POLL)
        + polled(1, {"x": [[0, 7]]}).replace(b"[0,7]", b"[0,18446744073709551616]"), 2,
        "does not fit in a signed 64-bit integer"),
    # the file as a whole
    Bad("empty-file", b"", None, "the history is empty"),
    Bad("gzip-file", gzip.compress(VALID), None, "looks like a gzip file"),
]

# docs/HISTORY-GROUPS.md: its micro-ops and fields (both engines, like the cases above)
COMMITTED_INVOKE = [["committed", ["x"]]]
GROUP_CASES = [
    Bad("group-f-unknown", line(0, f="seek", value=[]), 1, "unknown client f"),
    Bad("commit-in-a-send", line(0, value=[["send", "x", 1], ["commit"]]), 1,
        "not allowed in a send"),
    Bad("commit-in-a-send-completion", INVOKE + sent(1, [["send", "x", [0, 1]], ["commit"]]),
        2, "not allowed in a send"),
    Bad("assigned-in-an-invoke", line(0, f="poll", value=[["assigned", ["x"]]]), 1,
        "completions, not invokes"),
    Bad("committed-offsets-in-an-invoke", line(0, f="committed", value=[["committed", {"x": 1}]]),
        1, "names keys, not offsets"),
    Bad("ok-commit-without-offsets", line(0, f="commit", value=[["commit"]])
        + line(1, 0, "ok", "commit", [["commit"]]), 2, "must hold its offsets"),
    Bad("ok-committed-without-result", line(0, f="committed", value=COMMITTED_INVOKE)
        + line(1, 0, "ok", "committed", COMMITTED_INVOKE), 2, "must hold its result"),
    Bad("commit-offset-negative", line(0, f="commit", value=[["commit", {"x": -1}]]), 1,
        "is not an integer from 0"),
    Bad("commit-offset-too-large", line(0, f="commit", value=[["commit", {"x": BIG}]]), 1,
        "is not an integer from 0"),
    Bad("committed-result-not-an-offset", line(0, f="committed", value=COMMITTED_INVOKE)
        + line(1, 0, "ok", "committed", [["committed", {"x": "1"}]]), 2,
        "is not an integer from 0"),
    Bad("rebalance-keys-not-a-list", line(0, f="poll", value=POLL)
        + line(1, 0, "ok", "poll", [["revoked", "x"]]), 2, "malformed micro-op"),
    Bad("commit-op-holding-a-poll", line(0, f="commit", value=POLL), 1, "holds only commit"),
    Bad("group-a-number", line(0, f="poll", value=POLL, group=7), 1, "group must be a string"),
    Bad("auto-commit-not-a-boolean", line(0, f="subscribe", value=["x"], **{"auto-commit": 1}),
        1, "auto-commit must be"),
    Bad("reset-unknown", line(0, f="subscribe", value=["x"], reset="none"), 1, "reset must be"),
    Bad("seek-unknown", line(0, f="assign", value=["x"], seek="end"), 1, "seek must be"),
    Bad("committed-field-a-list", line(0, f="assign", value=["x"])
        + line(1, 0, "ok", "assign", ["x"], committed=[1]), 2, "committed must map"),
    Bad("committed-field-negative", line(0, f="assign", value=["x"])
        + line(1, 0, "ok", "assign", ["x"], committed={"x": -2}), 2, "committed must map"),
]
CASES += GROUP_CASES
