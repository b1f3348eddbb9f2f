"""Exactly-once consume-transform-produce: duplicate-output and missing-output.

The rules of docs/HISTORY-GROUPS.md's exactly-once section, over the facts the group
pass gathered (``checkers.groups._model``): each txn op's ``from`` derivations, the
required records, and the group's committed reads. An aborted transaction's output
read back needs no rule here: it is ``G1a``, judged with every other read.
"""

from __future__ import annotations

from checkers._verdict import Anomalies
from checkers.groups._model import GK, NEVER, GroupFacts, OpRef, Read

#: (group, input key, input value)
Input = tuple[str | None, str, int]


def _committed_outputs(facts: GroupFacts) -> dict[Input, list[tuple[OpRef, str, int]]]:
    """Every input -> its distinct committed outputs (op, ko, w), in order of completion."""
    out: dict[Input, list[tuple[OpRef, str, int]]] = {}
    for d in sorted(facts.derivations, key=lambda d: (d.op.end, d.op.inv)):
        if not facts.committed_op(d):
            continue
        for ko, w, ki, v in d.entries:
            outputs = out.setdefault((d.group, ki, v), [])
            if not any(o[1] == ko and o[2] == w for o in outputs):
                outputs.append((d.op, ko, w))
    return out


def duplicate_outputs(facts: GroupFacts, out: Anomalies) -> None:
    """duplicate-output: one input of a group with several committed outputs."""
    for (g, ki, v), outputs in _committed_outputs(facts).items():
        if len(outputs) > 1 and out.counted("duplicate-output"):
            out.keep("duplicate-output", {
                "key": ki, "group": g, "value": v,
                "outputs": [[ko, w] for _, ko, w in outputs],
                "writers": [op.index for op, _, _ in outputs],
                "count": len(outputs),
            })


def _final_reads(facts: GroupFacts) -> dict[GK, Read]:
    """(g, k) -> the committed read whose op completed last (ties: the later micro-op)."""
    final: dict[GK, Read] = {}
    for gk, reads in facts.reads.items():
        done = [r for r in reads if r.op.end < NEVER]
        if done:
            final[gk] = max(done, key=lambda r: (r.op.end, r.mi))
    return final


def missing_outputs(
    facts: GroupFacts, required: dict[str, list[tuple[int, int]]], out: Anomalies
) -> None:
    """missing-output: a required input below the group's final committed offset with no
    committed output derived from it in that group. Only groups whose ops derive count."""
    deriving = {d.group for d in facts.derivations}
    if not deriving:
        return
    outputs = _committed_outputs(facts)
    for (g, ki), r in sorted(_final_reads(facts).items(), key=lambda item: item[1].op.end):
        if g not in deriving or r.offset is None:
            continue
        missing = [v for o, v in required.get(ki, ()) if o < r.offset and (g, ki, v) not in outputs]
        if missing and out.counted("missing-output"):
            out.keep("missing-output", {
                "key": ki, "group": g, "offset": r.offset, "op": r.op.index,
                "missing": missing, "count": len(missing),
            })


__all__ = ["duplicate_outputs", "missing_outputs"]
