"""Replica divergence: do the replicas of one partition hold different records at one offset?

The history checker sees what clients were told and what they read, so an offset that
held one value for a reader and another later (``inconsistent-offsets``) is all it can
say, and that also happens when an unclean election truncates acknowledged records and
new ones take their offsets, on every Kafka version. What KIP-279 (Kafka 2.0) fixed is
narrower: replicas left *permanently* holding different records at the same offset. Only
the replicas' own logs tell that apart, so after a run insync reads each replica's log
of the partitions it is asked about (``cluster.replica_logs``) and compares them here.

A replica that is behind holds a prefix of the others, and one that never held the
partition holds nothing: neither is divergence. Divergence is an offset held by two or
more replicas with different values. A replica whose own log goes back to offsets it had
already passed (``backwards``, read in file order by ``cluster.replica_logs``) is
KAFKA-3919's corrupt follower: that fails the comparison too, and is named apart
(``offsets-backwards``), since its values may agree with the leader's. Like the history
checker this never raises: a replica that could not be read is reported, and leaves the
verdict ``unknown`` if fewer than two replicas could be read (and none went back).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The most diverging offsets listed per partition (the count is always whole).
MAX_LISTED = 20

ReplicaLog = Mapping[int, str]  # offset -> the record's value, as the dump tool prints it


def compare_replicas(logs: Mapping[str, ReplicaLog | None],
                     errors: Mapping[str, str] | None = None,
                     backwards: Mapping[str, Sequence[tuple[int, int]]] | None = None
                     ) -> dict[str, Any]:
    """One partition's verdict from each replica's log (node -> log; None: the node holds
    no replica of it). ``errors``: nodes whose log could not be read, and why;
    ``backwards``: per node, where its log went back, as ``(highest before, offset)``.

    ``{"valid": True | False | "unknown", "replicas": {node: {"records", "first",
    "last"}}, "diverged": count, "offsets": [{"offset", "values": {node: value}}]}``,
    and ``"backwards": {node: {"count", "first": [[before, offset], ...]}}`` if any
    replica's log went back (then ``valid`` is False, however many could be read).
    """
    held = {node: log for node, log in logs.items() if log is not None}
    out: dict[str, Any] = {
        "replicas": {node: _span(log) for node, log in sorted(held.items())},
        "diverged": 0,
        "offsets": [],
    }
    if errors:
        out["unreadable"] = dict(sorted(errors.items()))
    back = {node: {"count": len(pairs), "first": [list(p) for p in pairs[:MAX_LISTED]]}
            for node, pairs in sorted((backwards or {}).items()) if pairs and node in held}
    if back:
        out["backwards"] = back
    if len(held) < 2:
        if back:  # one log going back is enough to show it
            out["valid"] = False
            return out
        out["valid"] = "unknown"
        out["reason"] = f"{len(held)} replica(s) could be read; comparing needs two"
        return out
    offsets: set[int] = set()
    for log in held.values():
        offsets.update(log)
    diverged: list[dict[str, Any]] = []
    for offset in sorted(offsets):
        values = {node: log[offset] for node, log in held.items() if offset in log}
        if len(values) > 1 and len(set(values.values())) > 1:
            diverged.append({"offset": offset, "values": dict(sorted(values.items()))})
    out["diverged"] = len(diverged)
    out["offsets"] = diverged[:MAX_LISTED]
    out["valid"] = not diverged and not back
    return out


def _span(log: ReplicaLog) -> dict[str, Any]:
    return {"records": len(log), "first": min(log, default=None), "last": max(log, default=None)}


def summarize(partitions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Every compared partition (key -> :func:`compare_replicas`) in one block: ``valid``
    is False if any diverged or went back, ``unknown`` if none did but one could not be
    compared; ``offsets-backwards``: whether any replica's log went back."""
    verdicts = [p.get("valid") for p in partitions.values()]
    if any(v is False for v in verdicts):
        valid: bool | str = False
    elif all(v is True for v in verdicts) and verdicts:
        valid = True
    else:
        valid = "unknown"
    return {"valid": valid, "offsets-backwards": any(p.get("backwards") for p in
                                                     partitions.values()),
            "partitions": dict(partitions)}
