"""Writing small histories by hand, in the format of docs/HISTORY.md.

``Hist`` numbers ops and stamps times so a test spells out only what matters::

    h = Hist()
    h.op(0, "send", [["send", "x", 1]], [["send", "x", [0, 1]]])
    h.op(1, "poll", [["poll"]], [["poll", {"x": [[0, 1]]}]])
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

POLL = [["poll"]]


class Hist:
    """An append-only list of ops with dense ``index`` and increasing ``time``."""

    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []

    def add(self, process: Any, type_: str, f: str, value: Any = None, **extra: Any) -> int:
        """Append one line; returns its index."""
        index = len(self.ops)
        op: dict[str, Any] = {
            "index": index,
            "time": 1000 * index,
            "process": process,
            "type": type_,
            "f": f,
            "value": value,
        }
        op.update(extra)
        self.ops.append(op)
        return index

    def invoke(self, process: int, f: str, value: Any) -> int:
        """An invoke line."""
        return self.add(process, "invoke", f, value)

    def done(self, process: int, type_: str, f: str, value: Any = None, **extra: Any) -> int:
        """A completion line (``value`` None: the field is left out)."""
        index = self.add(process, type_, f, value, **extra)
        if value is None:
            del self.ops[index]["value"]
        return index

    def op(
        self, process: int, f: str, invoke: Any, result: Any = None, type_: str = "ok"
    ) -> int:
        """Invoke immediately followed by its completion; returns the completion's index."""
        self.invoke(process, f, invoke)
        return self.done(process, type_, f, result)

    def send(
        self, process: int, key: str, offset: int | None, value: int, type_: str = "ok"
    ) -> int:
        """A one-record send op."""
        result = [["send", key, value if offset is None else [offset, value]]]
        if type_ != "ok":
            result = None  # type: ignore[assignment]
        return self.op(process, "send", [["send", key, value]], result, type_)

    def poll(self, process: int, records: dict[str, list[list[int]]], type_: str = "ok") -> int:
        """A one-poll op returning ``records``."""
        return self.op(process, "poll", POLL, [["poll", records]], type_)

    def nemesis(self, f: str, value: Any = None) -> int:
        """A nemesis line."""
        return self.add("nemesis", "info", f, value)

    def write(self, path: Path) -> Path:
        """Write as JSON Lines."""
        path.write_bytes(b"".join(orjson.dumps(op) + b"\n" for op in self.ops))
        return path
