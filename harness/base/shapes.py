"""A run directory's JSON files, read defensively and shape-checked at the door.

``harness.base.rundir.RunDir`` reads ``test.json`` and ``results.json`` through
``read_object`` with the field tables below. A run directory is a plain folder
that people copy, hand-edit and fill with other tools' output, so a file may be
truncated, binary, a FIFO, a list instead of an object, or hold a string where
a count belongs. Checking the shape once, where the file is read, means every
reader (the report, the Spark ingestion, the ``insync serve`` index) fails the
same way: a ``HistoryError`` (exit 3) whose message names the file and the
field and whose hint says how to repair it, instead of a ``TypeError`` deep
inside whichever reader tripped first.

Only the fields some reader uses are checked (results/LAYOUT.md lists them);
every field is optional and may be ``null``, except the verdict's ``valid``.
The checks are pure functions of the JSON value: on the ground floor, so the
run directory can read its own files without importing a reader above it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from harness.base.errors import HistoryError
from harness.base.paths import Refused, resolve_within, shown, shown_path

#: Longest file a run directory's JSON may be (a verdict keeps at most ~1000 examples).
MAX_JSON_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Kind:
    """What a field must hold: ``words`` for the message, ``ok`` to test a value, and for
    containers what each value (of an object) or item (of a list) must be in turn."""

    words: str
    ok: Callable[[Any], bool]
    values: Kind | None = None
    items: Kind | None = None

    def problem(self, name: str, value: Any) -> str | None:
        """Why ``value`` (the field ``name``) is not of this kind; None when it is."""
        if not self.ok(value):
            return f"{name} must be {self.words}, got {got(value)}"
        if self.values is not None:
            inner = [(f"{name}.{shown(k)}", v, self.values) for k, v in value.items()]
        elif self.items is not None:
            inner = [(f"{name}[{i}]", v, self.items) for i, v in enumerate(value)]
        else:
            return None
        for inner_name, v, kind in inner:
            why = kind.problem(inner_name, v)
            if why:
                return why
        return None


def _is_dict(v: Any) -> bool:
    return type(v) is dict


def _is_list(v: Any) -> bool:
    return type(v) is list


STR = Kind("a string", lambda v: type(v) is str)
INT = Kind("an integer", lambda v: type(v) is int)
BOOL = Kind("true or false", lambda v: type(v) is bool)
NUMBER = Kind("a number", lambda v: type(v) in (int, float))
OBJECT = Kind("an object", _is_dict)
STRINGS = Kind("a list", _is_list, items=STR)
ACKS = Kind("a string or an integer", lambda v: type(v) in (str, int))
SPANS = Kind("an object", _is_dict, values=Kind(
    'a ["start f", "stop f"] pair',
    lambda p: _is_list(p) and len(p) == 2 and all(type(f) is str for f in p)))
VALID = Kind('true, false or "unknown"', lambda v: v is True or v is False or v == "unknown")
EXAMPLES = Kind("an object", _is_dict, values=Kind("a list", _is_list, items=OBJECT))
COUNTS = Kind("an object", _is_dict, values=INT)
OBJECTS = Kind("an object", _is_dict, values=OBJECT)
NUMBERS = Kind("an object", _is_dict, values=NUMBER)

#: test.json fields some reader uses (results/LAYOUT.md); a parent comes before its fields.
TEST_FIELDS: Mapping[str, Kind] = {
    "name": STR, "argv": STRINGS, "seed": INT, "started": STR, "synthetic": BOOL,
    "cluster": OBJECT, "cluster.nodes": INT, "cluster.kafka_version": STR,
    "cluster.kafka_version_exact": STR, "cluster.mode": STR,
    "workload": OBJECT, "workload.acks": ACKS, "workload.idempotence": BOOL,
    "workload.txn": BOOL, "workload.max_in_flight": INT, "workload.replication_factor": INT,
    "workload.min_insync": INT, "workload.unclean_leader_election": BOOL,
    "nemesis": OBJECT, "nemesis.faults": STRINGS, "nemesis.interval": NUMBER,
    "nemesis.fault_spans": SPANS, "drain_finished": BOOL,
}
#: results.json fields (the verdict of docs/HISTORY.md plus ``run``).
RESULTS_FIELDS: Mapping[str, Kind] = {
    "valid": VALID, "anomaly-types": STRINGS, "bad-anomaly-types": STRINGS,
    "anomalies": EXAMPLES, "anomaly-counts": COUNTS, "ops": OBJECTS,
    "stats": OBJECT, "stats.ops": INT, "not-judged": STRINGS,
    "run": OBJECT, "run.duration_s": NUMBER, "run.interrupted": BOOL, "run.signal": STR,
    # the coverage block (results/coverage.py), read by the report and insync analyze
    "run.coverage": OBJECT, "run.coverage.main_s": NUMBER, "run.coverage.acked_sends_main": INT,
    "run.coverage.acked_per_s": NUMBER, "run.coverage.seconds": INT,
    "run.coverage.live_seconds": INT, "run.coverage.live_share": NUMBER,
    "run.coverage.faults": Kind("an object", _is_dict, values=NUMBERS),
    "run.coverage.in_faults": NUMBERS, "run.coverage.commits": NUMBERS,
    "run.coverage.recoveries": Kind("a list", _is_list, items=OBJECT),
    "run.coverage.final_heal": Kind("an object or null", lambda v: v is None or _is_dict(v)),
}
RESULTS_REQUIRED = ("valid",)


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def got(value: Any) -> str:
    """A value as a message quotes it: short JSON, or just its kind for lists and objects."""
    if isinstance(value, dict | list):
        return _kind_of(value)
    return shown(orjson.dumps(value).decode())


def read_object(path: Path, fields: Mapping[str, Kind], required: tuple[str, ...], hint: str,
                within: Path | None = None) -> dict[str, Any] | None:
    """A JSON object file whose ``fields`` (dotted names) hold what they must.

    None when the file is absent. With ``within``, a file that resolves (symlinks
    followed) outside that directory is refused rather than read.
    """
    data = _read_bytes(path, hint, within)
    if data is None:
        return None
    if not data.strip():
        raise HistoryError(f"{path} is empty", hint=hint)
    if b"\0" in data:
        raise HistoryError(f"{path} is a binary file, not JSON", hint=hint)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise HistoryError(f"{path} is not UTF-8 text (byte {err.start})", hint=hint) from None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise HistoryError(f"{path} is not JSON: {err.msg} at line {err.lineno} "
                           f"column {err.colno}", hint=hint) from None
    if type(obj) is not dict:
        raise HistoryError(f"{path} must hold a JSON object, got {_kind_of(obj)}", hint=hint)
    for name in required:
        if name not in obj:
            raise HistoryError(f'{path} has no "{name}" field', hint=hint)
    for name, kind in fields.items():
        *parents, last = name.split(".")
        holder: Any = obj
        for p in parents:
            holder = holder.get(p) if type(holder) is dict else None
        if type(holder) is not dict or (holder.get(last) is None and name not in required):
            continue
        why = kind.problem(name, holder[last])
        if why:
            raise HistoryError(f"{path}: {why}", hint=hint)
    return obj


def _read_bytes(path: Path, hint: str, within: Path | None) -> bytes | None:
    """The file's bytes; None when absent (a dangling symlink counts as absent)."""
    if within is not None:
        try:
            path = resolve_within(within, path.relative_to(within))
        except ValueError:
            raise HistoryError(f"{path}: outside the results directory", hint=hint) from None
        except Refused as err:
            raise HistoryError(f"{shown_path(path)}: {err}", hint=hint) from None
    try:
        # O_NONBLOCK: a FIFO planted as test.json must not hang the reader
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise HistoryError(f"cannot read {shown_path(path)}: {err.strerror or err}",
                           hint=hint) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise HistoryError(f"{path} is a directory, not a file",
                               hint=f"move that directory out of {path.parent}")
        raise HistoryError(f"{path} is not a regular file", hint=hint)
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(MAX_JSON_BYTES + 1)
        except OSError as err:
            raise HistoryError(f"cannot read {path}: {err.strerror or err}", hint=hint) from None
    if len(data) > MAX_JSON_BYTES:
        raise HistoryError(f"{path} is larger than {MAX_JSON_BYTES >> 20} MiB", hint=hint)
    return data
