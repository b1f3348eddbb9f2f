"""``--check-replicas``: after the run, do the replicas of these partitions agree?

The runner calls :func:`compare` once the faults are healed and the drain is done,
before the workload deletes its topics. Each key's partition is read on every node
(``cluster.replica_logs``) and compared (``checkers.replicas``). A follower that has
just come back may still hold records it is about to truncate, so a partition whose
replicas disagree is read once more after :data:`SETTLE_S`, and only records both reads
saw alike are compared: divergence that stays, which is what KIP-279 is about.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from checkers.replicas import compare_replicas, summarize
from cluster.model import Cluster
from cluster.replica_logs import partition_dirs, read_partition
from workloads.protocol import ReplicaKeys

LOG = logging.getLogger("insync.replicas")
#: Seconds before a partition whose replicas disagree is read again.
SETTLE_S = 10.0


Read = Callable[[Cluster, str], tuple[dict[str, dict[int, str] | None], dict[str, str]]]


def compare_session(cluster: Cluster, session: object,
                    say: Callable[[str], None]) -> dict[str, Any] | None:
    """:func:`compare` of the keys a workload run names (``ReplicaKeys``, the queue's
    ``--check-replicas``); None when it names none."""
    keys = session.replica_keys() if isinstance(session, ReplicaKeys) else None
    return compare(cluster, keys, say) if keys else None


def compare(cluster: Cluster, keys: Mapping[str, tuple[str, int]],
            say: Callable[[str], None], *, settle_s: float = SETTLE_S,
            sleep: Callable[[float], None] = time.sleep,
            read: Read = read_partition) -> dict[str, Any]:
    """Every key's replicas compared: ``checkers.replicas.summarize`` of the partitions."""
    dirs = partition_dirs(keys)
    first = {key: read(cluster, d) for key, d in dirs.items()}
    partitions = {key: compare_replicas(logs, errors, backwards_of(logs))
                  for key, (logs, errors) in first.items()}
    diverged = [key for key, p in partitions.items() if p["valid"] is False]
    if diverged:
        sleep(settle_s)
        for key in diverged:
            logs, errors = read(cluster, dirs[key])
            partitions[key] = compare_replicas(held_both_times(first[key][0], logs), errors,
                                               backwards_of(logs))
    out = summarize(partitions)
    for key, p in partitions.items():
        say(f"replicas of {key}: {line(p)}")
        LOG.info("replicas of %s: %s", key, p)
    return out


def backwards_of(logs: Mapping[str, Mapping[int, str] | None]
                 ) -> dict[str, list[tuple[int, int]]]:
    """Where each node's log went back (``ReplicaRecords.backwards``; a log read some
    other way has none). The second read's: a corruption that stays is in both."""
    return {node: list(getattr(log, "backwards", ())) for node, log in logs.items()
            if log is not None}


def held_both_times(before: Mapping[str, Mapping[int, str] | None],
                    after: Mapping[str, Mapping[int, str] | None]
                    ) -> dict[str, dict[int, str] | None]:
    """Each node's records that both reads saw, at the same offset with the same value: a
    record a follower has since truncated or replaced is left out, so only divergence
    that stayed is compared. A node missing from either read holds nothing here."""
    out: dict[str, dict[int, str] | None] = {}
    for node, log in after.items():
        old = before.get(node)
        out[node] = None if log is None or old is None else {
            offset: value for offset, value in log.items() if old.get(offset) == value}
    return out


def line(p: Mapping[str, Any]) -> str:
    """``consistent (n1: 1,204 records, n2: 1,204)`` or ``DIVERGED at 3 offsets (...)``."""
    held = ", ".join(f"{node}: {r['records']:,} records"
                     for node, r in p.get("replicas", {}).items())
    if p.get("valid") is True:
        return f"consistent ({held})"
    back = p.get("backwards") or {}
    if back:
        node, b = next(iter(back.items()))
        before, offset = b["first"][0] if b["first"] else (None, None)
        return (f"offsets go BACKWARDS in {', '.join(back)}'s log ({b['count']:,} time(s); "
                f"{node}: offset {offset} after {before}; {held})")
    if p.get("valid") is False:
        first = p["offsets"][0] if p.get("offsets") else None
        where = (f"; offset {first['offset']}: " + ", ".join(
            f"{n}={v}" for n, v in first["values"].items())) if first else ""
        return f"DIVERGED at {p['diverged']:,} offset(s) ({held}{where})"
    return f"not compared: {p.get('reason', 'unknown')}" + (
        f" ({'; '.join(f'{n}: {e}' for n, e in p['unreadable'].items())})"
        if p.get("unreadable") else "")
