"""Histories of a correct consumer group, for the properties of HISTORY-GROUPS.md.

A model Kafka: one producer appends to a few keys; the members of one or two
groups subscribe, poll from their positions and commit what they polled
(explicit commits after each poll, as the recommended mode records them); a
coordinator keeps each group's committed offsets and rebalances eagerly when a
member joins or crashes (a member hears of a revocation or an assignment in its
next poll, and starts an assigned key at the committed offset, or by its
``reset`` when there is none). A member may crash between ops, or inside a poll
(an ``info`` with no value: whether its commit applied is drawn, as Kafka
leaves it open). A reader issues ``committed`` ops, and at the end one per
group; a drain (``seek: beginning``) reads every key so that every record is
required. Whatever it draws, the history is one Kafka could produce, so no
group anomaly may be found in it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

Op = dict[str, Any]
KEYS = ("x", "y", "z")
READER = 90
DRAIN = 91


@dataclass
class GroupSettings:
    groups: int = 1
    members: int = 3
    steps: int = 40
    crash_in_poll: bool = True
    latest: bool = True  # some members reset to latest


@dataclass
class _Member:
    process: int
    group: str
    reset: str
    joined: bool = False
    held: set[str] = field(default_factory=set)
    positions: dict[str, int] = field(default_factory=dict)


class GroupModel:
    def __init__(self, seed: int, settings: GroupSettings) -> None:
        self.rng = random.Random(seed)
        self.s = settings
        self.ops: list[Op] = []
        self.log: dict[str, list[int]] = {k: [] for k in KEYS}
        self.next_value = 1
        self.groups = [f"g{i + 1}" for i in range(settings.groups)]
        self.committed: dict[str, dict[str, int | None]] = {
            g: dict.fromkeys(KEYS) for g in self.groups}
        self.members: list[_Member] = []
        pid = 1
        for g in self.groups:
            for _ in range(settings.members):
                reset = "latest" if settings.latest and self.rng.random() < 0.3 else "earliest"
                self.members.append(_Member(pid, g, reset))
                pid += 1
        #: member -> (keys to revoke, keys to assign) it hears of in its next poll
        self.owner: dict[str, dict[str, _Member | None]] = {
            g: dict.fromkeys(KEYS) for g in self.groups}
        self.news: dict[int, tuple[set[str], set[str]]] = {}

    def _line(self, process: int, type_: str, f: str, value: Any, **extra: Any) -> Op:
        op = {"index": len(self.ops), "time": 10 * len(self.ops), "process": process,
              "type": type_, "f": f, "value": value, **extra}
        if value is None and type_ != "invoke":
            del op["value"]
        self.ops.append(op)
        return op

    def _pair(self, process: int, f: str, invoke: Any, result: Any, type_: str = "ok",
              **extra: Any) -> None:
        self._line(process, "invoke", f, invoke, **extra)
        self._line(process, type_, f, result, **extra)

    def _rebalance(self, g: str) -> None:
        active = [m for m in self.members if m.group == g and m.joined]
        owner = self.owner[g]
        for i, k in enumerate(KEYS):
            new = active[i % len(active)] if active else None
            old = owner[k]
            if new is old:
                continue
            if old is not None and old.joined:
                self.news.setdefault(old.process, (set(), set()))[0].add(k)
                self.news[old.process][1].discard(k)
            if new is not None:
                self.news.setdefault(new.process, (set(), set()))[1].add(k)
                self.news[new.process][0].discard(k)
            owner[k] = new

    def send(self) -> None:
        k = self.rng.choice(KEYS)
        v = self.next_value
        self.next_value += 1
        self.log[k].append(v)
        self._pair(0, "send", [["send", k, v]], [["send", k, [len(self.log[k]) - 1, v]]])

    def join(self, m: _Member) -> None:
        self._pair(m.process, "subscribe", list(KEYS), list(KEYS), group=m.group, reset=m.reset)
        m.joined = True
        self._rebalance(m.group)

    def crash(self, m: _Member) -> None:
        self._pair(m.process, "crash", None, None, type_="info")
        m.joined = False
        m.held.clear()
        m.positions.clear()
        self.news.pop(m.process, None)
        self._rebalance(m.group)

    def poll(self, m: _Member) -> None:
        revoked, assigned = self.news.pop(m.process, (set(), set()))
        done: list[Any] = []
        if revoked:
            done.append(["revoked", sorted(revoked)])
            m.held -= revoked
            for k in revoked:
                m.positions.pop(k, None)
        if assigned:
            done.append(["assigned", sorted(assigned)])
            for k in sorted(assigned):
                c = self.committed[m.group][k]
                if c is None:
                    c = 0 if m.reset == "earliest" else len(self.log[k])
                m.positions[k] = c
            m.held |= assigned
        records: dict[str, list[list[int]]] = {}
        for k in sorted(m.held):
            pos = m.positions[k]
            n = self.rng.randint(0, 3)
            got = [[o, self.log[k][o]] for o in range(pos, min(pos + n, len(self.log[k])))]
            if got:
                records[k] = got
                m.positions[k] = got[-1][0] + 1
        done.append(["poll", records])
        offsets = {k: m.positions[k] for k in sorted(m.held)}
        if offsets:
            done.append(["commit", offsets])
        invoke = [["poll"], ["commit"]]
        if self.s.crash_in_poll and self.rng.random() < 0.08:
            if self.rng.random() < 0.5:
                self.committed[m.group].update(offsets)
            self._line(m.process, "invoke", "poll", invoke)
            self._line(m.process, "info", "poll", None)
            m.joined = False
            m.held.clear()
            m.positions.clear()
            self._rebalance(m.group)
            return
        self.committed[m.group].update(offsets)
        self._pair(m.process, "poll", invoke, done)

    def read(self, g: str) -> None:
        self._pair(READER, "committed", [["committed", list(KEYS)]],
                   [["committed", dict(self.committed[g])]], group=g)

    def run(self) -> list[Op]:
        for _ in range(self.s.steps):
            r = self.rng.random()
            m = self.rng.choice(self.members)
            if r < 0.3:
                self.send()
            elif not m.joined:
                self.join(m)
            elif r < 0.35:
                self.crash(m)
            elif r < 0.4:
                self.read(m.group)
            else:
                self.poll(m)
        for g in self.groups:
            self.read(g)
        self._pair(DRAIN, "assign", list(KEYS), list(KEYS), seek="beginning")
        drained = {k: [[o, v] for o, v in enumerate(self.log[k])] for k in KEYS if self.log[k]}
        self._pair(DRAIN, "poll", [["poll"]], [["poll", drained]])
        return self.ops


def generate(seed: int, settings: GroupSettings | None = None) -> list[Op]:
    return GroupModel(seed, settings or GroupSettings()).run()
