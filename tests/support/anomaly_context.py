"""What an integration test prints when a real run it expected valid is not.

CI keeps only the test's output, not the run directory, so a flaky INVALID
would leave nothing to study: this renders, for each anomaly example that
names a key and ops, those ops and the same process's earlier ops on that key
(type, error and the offsets read or acknowledged), as compact lines.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

#: Earlier ops of the same process shown before each op an anomaly names.
BEFORE = 6


def anomaly_context(
    verdict: dict[str, Any], ops: list[dict[str, Any]], *, examples: int = 3
) -> str:
    """Lines describing the ops behind each bad anomaly's first ``examples`` examples."""
    by_index = {op["index"]: op for op in ops if op["type"] != "invoke"}
    lines: list[str] = []
    for kind in verdict.get("bad-anomaly-types", []):
        for a in verdict.get("anomalies", {}).get(kind, [])[:examples]:
            key = a.get("key")
            named = [a["op"]] if isinstance(a.get("op"), int) else list(a.get("ops", []))
            lines.append(f"{kind}: {_short(a)}")
            for index in named:
                op = by_index.get(index)
                if op is None or key is None:
                    continue
                earlier = [o for o in ops if o["type"] != "invoke" and o["index"] < index
                           and o["process"] == op["process"] and _touches(o, key)]
                for o in [*earlier[-BEFORE:], op]:
                    lines.append("    " + _describe(o, key))
    return "\n".join(lines)


def _short(a: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in a.items() if k != "skipped")


def _touches(op: dict[str, Any], key: str) -> bool:
    if op["f"] in ("assign", "subscribe"):
        return key in (op.get("value") or [])
    return op["f"] == "crash" or bool(_records(op, key))


def _records(op: dict[str, Any], key: str) -> list[str]:
    """The op's micro-ops on ``key``: ``poll[o1..o2]`` (n records) or ``send@o``."""
    out: list[str] = []
    for mop in op.get("value") or []:
        if not isinstance(mop, list) or not mop:
            continue
        if mop[0] == "poll" and len(mop) > 1 and isinstance(mop[1], dict):
            recs = mop[1].get(key) or []
            if recs:
                offsets = [r[0] for r in recs]
                jumps = sum(1 for a, b in pairwise(offsets) if b <= a)
                back = f", {jumps} backwards" if jumps else ""
                out.append(f"poll[{offsets[0]}..{offsets[-1]}] ({len(recs)}{back})")
        elif mop[0] == "send" and len(mop) > 1 and mop[1] == key:
            sent = mop[2] if len(mop) > 2 else None
            offset = sent[0] if isinstance(sent, list) and sent else "?"
            out.append(f"send@{offset}")
    return out


def _describe(op: dict[str, Any], key: str) -> str:
    joins = op["f"] in ("assign", "subscribe")
    what = str(op.get("seek", "")) if joins else " ".join(_records(op, key))
    error = f" error={op['error']}" if op.get("error") else ""
    return (f"op {op['index']} p{op['process']} t={op['time'] / 1e9:.3f}s "
            f"{op['f']} {op['type']}{error} {what}").rstrip()
