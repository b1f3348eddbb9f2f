"""One micro-op's records, validated and stored in its key's tables (``KeyState``).

The collector (``checkers._collect``) folds whole ops: the pairs of values inside
an op and across a process's ops, its info sends, its reads for the cycle search.
What one poll result or one send does to its key — the log (offset -> value, a
second value a divergence), who wrote and who read each value, the read and send
streams — is this module's, and it is the same whichever of the collector's paths
(one poll, one send, any op) walked the op. The records are validated as they are
stored: walking them twice would double the cost of the checker's hottest loop.
"""

from __future__ import annotations

from typing import Any

from checkers._key_state import NO_OFFSET, KeyState
from checkers._malformed import I64_MAX, malformed_mop
from harness.base.contract import INFO, OK


def read_records(  # noqa: PLR0917 - once per key of a poll: no kwargs on the hot path
    keys: dict[str, KeyState], k: str, records: Any, ok: bool, index: int, mop: Any, line: int
) -> tuple[KeyState, int] | None:
    """Fold one key's polled records into its tables: its state and where they start.

    Every record goes into the log (any outcome), the read tables and the
    read streams, validated on the way: two integers in 0..2**63-1, offset then value.
    None when the key returned no record.
    """
    if type(records) is not list:
        raise malformed_mop(mop, line)
    if not records:
        return None
    ks = keys.get(k)
    if ks is None:
        ks = keys[k] = KeyState()
    log = ks.log
    seen = ks.ok_reads if ok else ks.other_reads
    append = ks.rvals.append
    append_offset = ks.roffs.append
    start = len(ks.rvals)
    try:
        for o, v in records:  # ``(o | v) >> 63``: 0 iff both are in 0..2**63-1
            if type(o) is not int or type(v) is not int or (o | v) >> 63:
                raise malformed_mop(mop, line)
            if log.setdefault(o, v) != v:
                ks.diverge(o, v, index)
            seen[v] = index
            append(v)
            append_offset(o)
    except (TypeError, ValueError, OverflowError):
        raise malformed_mop(mop, line) from None
    return ks, start


def write_send(  # noqa: PLR0917 - once per send micro-op: no kwargs on the hot path
    keys: dict[str, KeyState],
    mop: Any,
    kind: int,
    index: int,
    line: int,
    info_offsets: list[tuple[str, int, int]],
) -> tuple[str, KeyState, int, int, int]:
    """Fold one send micro-op into its key's tables, validated on the way.

    Returns the key, its state, the value, the offset it is known at
    (``NO_OFFSET`` unless the send is ok and reported one) and where it sits
    in ``svals``. An info send's reported offset goes to ``info_offsets``.
    """
    try:
        _, k, x = mop
        o, v = (None, x) if type(x) is int else x
    except (ValueError, TypeError):
        raise malformed_mop(mop, line) from None
    if (  # one range test for both: a | b is in 0..2**63-1 iff a and b are
        type(k) is not str
        or type(v) is not int
        or (o is not None and type(o) is not int)
        or not 0 <= (v if o is None else o | v) <= I64_MAX
    ):
        raise malformed_mop(mop, line)
    ks = keys.get(k)
    if ks is None:
        ks = keys[k] = KeyState()
    writers = ks.writers
    if v not in writers:
        writers[v] = index
        if kind != OK:
            ks.writer_kind[v] = kind
    known = NO_OFFSET
    if o is not None:
        if kind == OK:
            known = o
            if ks.log.setdefault(o, v) != v:
                ks.diverge(o, v, index)
        elif kind == INFO:
            info_offsets.append((k, o, v))
    at = len(ks.svals)
    ks.svals.append(v)
    ks.soffs.append(known)
    return k, ks, v, known, at
