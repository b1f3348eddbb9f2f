"""The facts of HISTORY-GROUPS.md gathered from a history in one pass.

Why a pass of its own: the group rules compare lines (``inv``/``end`` of ops)
and follow each process from a start to its first record, which the per-key
tables of ``checkers._collect`` dissolve. The pass runs only on a history that
uses the extension (``Collector.saw_groups``), after the scanner has judged
every line well formed, so it reads op dicts without checking them again.
Terms (group of an op, commit, unknown commit, committed read, start, first
record, unknown read, required record, settled) are the contract's; each is built
here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.base.history import ClientPair, pairs

#: ``end`` of an op that never completed: after every line
NEVER = 2**63
Group = str | None


@dataclass(slots=True)
class OpRef:
    """Where an op sits: its invoke and completion lines, outcome and process."""

    index: int  # reported index: completion, or invoke when there is none
    inv: int
    end: int  # NEVER when the op never completed
    kind: str  # ok, fail or info (pending counts as info)
    process: int
    seq: int  # the process's op counter: order of a process's ops
    #: for an ok txn: the end of its process's next ok txn that registered a partition
    #: (``_settle``), by which its markers are written; NEVER while there is none
    settled: int = NEVER


@dataclass(slots=True)
class Commit:
    """A commit (group, key, offset), or an unknown commit (offset None, key None)."""

    op: OpRef
    mi: int
    offset: int | None
    txn: bool

    @property
    def landed_by(self) -> int:
        """The line by which this commit has certainly taken effect (the contract's end(L)
        in *explanation*): a plain commit's ok completion; a transactional one's
        ``OpRef.settled``, as an ok txn's offsets show only once its markers are written
        (after EndTxn returned); never for an op that is not ok."""
        op = self.op
        if op.kind != "ok":
            return NEVER
        return op.settled if self.txn else op.end

    def follows(self, process: int, seq: int, mi: int) -> bool:
        """True when this is ``process``'s own commit after position (seq, mi)."""
        op = self.op
        return op.process == process and (op.seq > seq or (op.seq == seq and self.mi > mi))


@dataclass(slots=True)
class Read:
    """A committed read of (group, key): the offset returned, None for null."""

    op: OpRef
    mi: int
    offset: int | None


@dataclass(slots=True)
class Establishment:
    """Op ``op`` establishes offset ``offset`` (an ok plain commit, or a read returning it)."""

    offset: int
    op: OpRef


@dataclass(slots=True)
class Start:
    """Process ``op.process`` starts ``key`` in ``group`` at micro-op ``mi`` of ``op``."""

    op: OpRef
    mi: int
    group: Group
    key: str
    earliest: bool  # the process's reset is "earliest"
    first: tuple[int, OpRef, int] | None = None  # first record: offset, op F, micro-op
    first_commit: int | None = None  # P's first commit of key after the start, before ``first``
    fresh: bool = False

    @property
    def first_position(self) -> int | None:
        """The first record's offset, or P's first commit of the key if that came earlier."""
        if self.first_commit is not None:
            return self.first_commit
        return None if self.first is None else self.first[0]


@dataclass(slots=True)
class UnknownRead:
    """A ``["poll"]`` with no result: records above its bound may have been handed over."""

    op: OpRef
    bounds: dict[str, int]


GK = tuple[Group, str]


@dataclass(slots=True)
class Derivations:
    """A txn op's exactly-once ``from`` entries (ko, w, ki, v), and the values it sent."""

    op: OpRef
    group: Group
    entries: list[tuple[str, int, str, int]]
    sent: list[tuple[str, int]]


@dataclass
class GroupFacts:
    """Everything the three rules read, keyed by (group, key) or by group."""

    commits: dict[GK, list[Commit]] = field(default_factory=dict)
    unknown_commits: dict[Group, list[Commit]] = field(default_factory=dict)
    reads: dict[GK, list[Read]] = field(default_factory=dict)
    establishments: dict[GK, list[Establishment]] = field(default_factory=dict)
    starts: list[Start] = field(default_factory=list)
    unknown_reads: dict[Group, list[UnknownRead]] = field(default_factory=dict)
    #: (group, key, value) -> the earliest invoke of a poll of the group that returned it
    delivered: dict[tuple[Group, str, int], int] = field(default_factory=dict)
    #: key -> value -> highest offset a poll returned it at
    polled: dict[str, dict[int, int]] = field(default_factory=dict)
    ok_sent: set[tuple[str, int]] = field(default_factory=set)
    ok_read: set[tuple[str, int]] = field(default_factory=set)
    other_sent: list[list[tuple[str, int]]] = field(default_factory=list)
    auto_commit: set[Group] = field(default_factory=set)
    derivations: list[Derivations] = field(default_factory=list)
    commit_count: int = 0
    read_count: int = 0

    def recorded(self, group: Group) -> bool:
        """A group none of whose subscribe/assign ops says auto-commit: every commit is seen."""
        return group not in self.auto_commit

    def committed_op(self, d: Derivations) -> bool:
        """Whether a transaction certainly committed: ``ok``, or ``info`` and proven by an
        ``ok`` read of one of its values (HISTORY.md's proof; a transaction is atomic)."""
        kind = d.op.kind
        return kind == "ok" or (kind == "info" and any(kv in self.ok_read for kv in d.sent))

    def required(self) -> dict[str, list[tuple[int, int]]]:
        """key -> (offset, value) of its required records, in offset order."""
        committed = set(self.ok_sent)
        for sent in self.other_sent:
            if any(kv in self.ok_read for kv in sent):
                committed.update(sent)
        out: dict[str, list[tuple[int, int]]] = {}
        for k, values in self.polled.items():
            rows = [(o, v) for v, o in values.items() if (k, v) in committed]
            if rows:
                out[k] = sorted(rows)
        return out


@dataclass
class _Process:
    """What the pass remembers of one process between its ops."""

    seq: int = 0
    group: Group = None
    earliest: bool = False
    #: (f, keys) of its latest ok/info subscribe or assign
    last_assign: tuple[str, frozenset[str]] | None = None
    starts: dict[str, Start] = field(default_factory=dict)
    bounds: dict[str, int] = field(default_factory=dict)
    #: its latest ok txn that registered a partition, whose markers may still be pending
    open_txn: OpRef | None = None


def gather(ops: Iterable[dict[str, Any]]) -> GroupFacts:
    """One pass over a well-formed history: the facts of every group."""
    facts = GroupFacts()
    procs: dict[int, _Process] = {}
    for pair in pairs(ops):
        if isinstance(pair, ClientPair):
            _op(facts, procs, pair)
    return facts


def _op(facts: GroupFacts, procs: dict[int, _Process], pair: ClientPair) -> None:
    invoke, completion = pair
    process = int(invoke["process"])
    proc = procs.setdefault(process, _Process())
    proc.seq += 1
    has_value = completion is not None and completion.get("value") is not None
    kind = pair.type
    ref = OpRef(
        index=int((completion or invoke)["index"]),
        inv=int(invoke["index"]),
        end=NEVER if completion is None else int(completion["index"]),
        kind=kind,
        process=process,
        seq=proc.seq,
    )
    f = invoke["f"]
    own = invoke.get("group")
    if own is None and completion is not None:
        own = completion.get("group")
    value = completion["value"] if has_value and completion is not None else invoke["value"]
    if f in ("assign", "subscribe"):
        _assign(facts, proc, ref, f, own, invoke, completion, value)
        return
    group = own if own is not None else proc.group
    if f == "send" or type(value) is not list:
        _sends(facts, kind, value if type(value) is list else [])
        return
    sent, registered = _micro_ops(facts, proc, ref, f, group, value, has_value)
    if f == "txn" and kind == "ok" and registered:
        _settle(proc, ref)
    entries = invoke.get("from")
    if entries is None and completion is not None:
        entries = completion.get("from")
    if entries is not None:  # present, even empty: this group transforms
        facts.derivations.append(
            Derivations(ref, group, [(ko, w, ki, v) for ko, w, ki, v in entries], sent)
        )


def _settle(proc: _Process, ref: OpRef) -> None:
    """An ok txn that registered a partition with the transaction coordinator (it sent, or
    committed offsets: an empty transaction never reaches the coordinator) ran after every
    marker of its process's previous transaction was written: the coordinator answers
    CONCURRENT_TRANSACTIONS until then. So it settles that transaction's commits."""
    if proc.open_txn is not None:
        proc.open_txn.settled = ref.end
    proc.open_txn = ref


def _sends(facts: GroupFacts, kind: str, value: list[Any]) -> list[tuple[str, int]]:
    sent = []
    for mop in value:
        if mop and mop[0] == "send":
            x = mop[2]
            sent.append((mop[1], x if type(x) is int else x[1]))
    if kind == "ok":
        facts.ok_sent.update(sent)
    elif kind == "info" and sent:
        facts.other_sent.append(sent)
    return sent


def _micro_ops(  # noqa: PLR0917 - the op's parts, read once
    facts: GroupFacts, proc: _Process, ref: OpRef, f: str, group: Group,
    value: list[Any], has_value: bool,
) -> tuple[list[tuple[str, int]], bool]:
    """Reads the op's micro-ops into ``facts``; returns what it sent, and whether it
    registered a partition with a transaction coordinator (it sent, or committed
    offsets), which ``_settle`` needs."""
    sent = _sends(facts, ref.kind, value)
    registered = bool(sent)
    for mi, mop in enumerate(value):
        tag = mop[0]
        if tag == "poll":
            if len(mop) == 1:
                if not has_value:
                    unknown = UnknownRead(ref, dict(proc.bounds))
                    facts.unknown_reads.setdefault(group, []).append(unknown)
                continue
            _poll(facts, proc, ref, group, mi, mop[1])
        elif tag == "commit":
            _commit(facts, proc, ref, f, group, mi, mop, has_value)
            registered = registered or (len(mop) > 1 and bool(mop[1]))
        elif tag == "committed" and type(mop[1]) is dict:
            for k, c in mop[1].items():
                _read(facts, ref, group, k, c, mi)
        elif tag == "assigned":
            for k in mop[1]:
                _start(facts, proc, ref, group, k, mi, proc.earliest)
        elif tag == "revoked":
            for k in mop[1]:
                proc.starts.pop(k, None)
    return sent, registered


def _poll(  # noqa: PLR0917
    facts: GroupFacts, proc: _Process, ref: OpRef, group: Group, mi: int,
    result: dict[str, list[list[int]]],
) -> None:
    ok = ref.kind == "ok"
    delivered = facts.delivered
    for k, records in result.items():
        if not records:
            continue
        polled = facts.polled.setdefault(k, {})
        for o, v in records:
            if polled.get(v, -1) < o:
                polled[v] = o
            at = delivered.get((group, k, v))
            if at is None or ref.inv < at:
                delivered[group, k, v] = ref.inv
            if ok:
                facts.ok_read.add((k, v))
        start = proc.starts.get(k)
        if start is not None and start.first is None:
            start.first = (records[0][0], ref, mi)
        top = max(o for o, _ in records)
        if proc.bounds.get(k, -1) < top:
            proc.bounds[k] = top


def _commit(  # noqa: PLR0917
    facts: GroupFacts, proc: _Process, ref: OpRef, f: str, group: Group, mi: int,
    mop: list[Any], has_value: bool,
) -> None:
    if len(mop) == 1:
        if not has_value and ref.kind != "fail":
            facts.unknown_commits.setdefault(group, []).append(Commit(ref, mi, None, False))
            facts.commit_count += 1
        return
    txn = f == "txn"
    for k, c in mop[1].items():
        facts.commit_count += 1
        facts.commits.setdefault((group, k), []).append(Commit(ref, mi, c, txn))
        if ref.kind == "ok" and not txn:
            facts.establishments.setdefault((group, k), []).append(Establishment(c, ref))
        start = proc.starts.get(k)
        if start is not None and start.first is None and start.first_commit is None:
            start.first_commit = c


def _read(  # noqa: PLR0917
    facts: GroupFacts, ref: OpRef, group: Group, k: str, c: int | None, mi: int
) -> None:
    facts.read_count += 1
    facts.reads.setdefault((group, k), []).append(Read(ref, mi, c))
    if c is not None:
        facts.establishments.setdefault((group, k), []).append(Establishment(c, ref))


def _start(  # noqa: PLR0917
    facts: GroupFacts, proc: _Process, ref: OpRef, group: Group, k: str, mi: int,
    earliest: bool,
) -> None:
    last = proc.last_assign
    if last is not None and last[0] == "assign" and k in last[1]:
        return  # a kept key keeps its position
    start = Start(ref, mi, group, k, earliest)
    proc.starts[k] = start
    facts.starts.append(start)


def _assign(  # noqa: PLR0917
    facts: GroupFacts, proc: _Process, ref: OpRef, f: str, own: Group,
    invoke: dict[str, Any], completion: dict[str, Any] | None, value: Any,
) -> None:
    if invoke.get("auto-commit") is True or (completion or {}).get("auto-commit") is True:
        facts.auto_commit.add(own)
    if completion is not None:
        for k, c in (completion.get("committed") or {}).items():
            _read(facts, ref, own, k, c, -1)
    if ref.kind not in ("ok", "info"):
        return
    keys = frozenset(value)
    for k in [k for k in proc.starts if k not in keys]:
        del proc.starts[k]
    reset = invoke.get("reset", (completion or {}).get("reset"))
    earliest = reset == "earliest"
    if f == "assign" and ref.kind == "ok" and invoke.get("seek") == "committed":
        for k in value:
            _start(facts, proc, ref, own, k, -1, earliest)
    proc.last_assign = (f, keys)
    proc.group = own
    proc.earliest = earliest
