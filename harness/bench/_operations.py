"""``insync bench nemesis --operations``: how long each planned operation takes.

The planned-operation fault kinds (``restart``, ``elect-leader``, ``reassign``,
``reconfigure``, ``upgrade``/``downgrade``, ``voter``) are timed the way a run
issues them: one nemesis package built for those kinds (``build_package``), and
each op through its ``invoke``, so the figures are what a run's history shows
between the op's invoke and its completion. Next to that total, each row keeps
the op's own figures from its completion (``figures``): a restart's per-node
stop, start and ISR wait, a tool's seconds, a reassignment's, an upgrade's
shipping. Between ops the cluster settles (the ISR whole; not timed).

An operation is one or more steps run in order each round (``reassign`` then
``reassign-back``), so a pair always leaves the cluster as it found it and
``--operations-repeat`` rounds measure the same thing again. A rolling restart
or an upgrade/downgrade pair takes minutes, so one round is the default.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cluster.spec import DYNAMIC_QUORUM_SINCE, KRAFT_QUORUMS
from harness.base.errors import UsageError
from nemesis import ComposedNemesis, NemesisOptions, build_package, residue

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.versions import KafkaVersion
    from nemesis.protocol import Nemesis

#: The figures a completion's value may carry at its top level, as the op records them.
TOP_FIGURES = ("duration-s", "tool-s", "reassign-s", "applied-s", "prepare-s", "waited-s",
               "attempts")
#: A restart step's figures (``restart``, ``upgrade``, ``downgrade``): the median over nodes.
STEP_FIGURES = ("stop-s", "start-s", "isr-s")


@dataclass(frozen=True)
class Operation:
    """One timed operation: its steps (label, op), run in order every round."""

    name: str
    steps: tuple[tuple[str, dict[str, Any]], ...]
    #: The fault kinds (``harness.base.faults`` names) its ops belong to.
    kinds: frozenset[str]


def plan(topic: str, *, upgrade_to: str | None = None, dynamic_quorum: bool = False
         ) -> list[Operation]:
    """The operations to time on a cluster holding ``topic``: the upgrade pair only with a
    build to go to, the voter pair only on a dynamic KRaft quorum. The upgrade comes last:
    it is the longest, and a roll that stops leaves the cluster on two builds."""
    ops = [
        Operation("restart one", (("restart one", {"f": "restart", "value": "one"}),),
                  frozenset({"restart"})),
        Operation("restart all", (("restart all (rolling)", {"f": "restart", "value": "all"}),),
                  frozenset({"restart"})),
        Operation("elect-leader preferred",
                  (("elect-leader preferred", {"f": "elect-leader", "value": "preferred"}),),
                  frozenset({"elect-leader"})),
        Operation("reassign / back", (
            (f"reassign {topic}-0", {"f": "reassign", "value": {"key": f"{topic}-0"}}),
            ("reassign-back", {"f": "reassign-back", "value": None})),
            frozenset({"reassign"})),
        Operation("reconfigure / restore", (
            (f"reconfigure {topic} min.insync.replicas=2",
             {"f": "reconfigure",
              "value": {"topic": topic, "set": {"min.insync.replicas": "2"}}}),
            ("restore-config", {"f": "restore-config", "value": None})),
            frozenset({"reconfigure"})),
    ]
    if dynamic_quorum:
        ops.append(Operation("voter remove / add", (
            ("remove-controller active-controller",
             {"f": "remove-controller", "value": "active-controller"}),
            ("add-controller", {"f": "add-controller", "value": None})),
            frozenset({"voter"})))
    if upgrade_to:
        ops.append(Operation("upgrade / downgrade", (
            (f"upgrade to {upgrade_to} (no bump)",
             {"f": "upgrade", "value": {"kafka-version": upgrade_to, "bump": False}}),
            ("downgrade to the cluster's build", {"f": "downgrade", "value": {}})),
            frozenset({"upgrade", "downgrade"})))
    return ops


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def figures(value: Any) -> dict[str, float]:
    """The op's own timings from its completion's value: ``TOP_FIGURES`` as recorded,
    ``steps`` (nodes restarted) with the median node's ``STEP_FIGURES``, ``ship-s`` (the
    slowest node's copy: the nodes are shipped to in parallel), and for ``add-controller``
    the tools' seconds and attempts summed over the nodes added."""
    if not isinstance(value, Mapping):
        return {}
    out = {k: n for k in TOP_FIGURES if (n := _number(value.get(k))) is not None}
    steps = [s for s in value.get("steps") or () if isinstance(s, Mapping)]
    if steps:
        out["steps"] = float(len(steps))
        for key in STEP_FIGURES:
            seen = [n for s in steps if (n := _number(s.get(key))) is not None]
            if seen:
                out[key] = statistics.median(seen)
    ship = value.get("ship")
    if isinstance(ship, Mapping):
        seen = [n for r in ship.values() if isinstance(r, Mapping)
                and (n := _number(r.get("ship-s"))) is not None]
        if seen:
            out["ship-s"] = max(seen)
    added = value.get("added")
    if isinstance(added, Mapping):
        for key in ("tool-s", "attempts"):
            seen = [n for r in added.values() if isinstance(r, Mapping)
                    and (n := _number(r.get(key))) is not None]
            if seen:
                out[key] = sum(seen)
    return out


def nodes_of(value: Any) -> list[dict[str, Any]]:
    """Each restarted node's step figures (and its shipping: seconds, files copied, bytes),
    in the order rolled."""
    if not isinstance(value, Mapping):
        return []
    shipped_to = value.get("ship")
    ship: Mapping[Any, Any] = shipped_to if isinstance(shipped_to, Mapping) else {}
    out = []
    for step in value.get("steps") or ():
        if isinstance(step, Mapping):
            row = {"node": step.get("node"),
                   **{k: step[k] for k in (*STEP_FIGURES, "took-s") if k in step}}
            shipped = ship.get(step.get("node"))
            if isinstance(shipped, Mapping):
                row.update({k: shipped[k] for k in ("ship-s", "copied", "bytes")
                            if k in shipped})
            out.append(row)
    return out


def notes_of(value: Any) -> list[str]:
    """What the op did short of the whole operation, though not an error: nodes a roll did
    not reach, brokers skipped or already on the build, a reassignment not done."""
    if not isinstance(value, Mapping):
        return []
    notes = []
    if value.get("not-restarted"):
        notes.append(f"not restarted: {value['not-restarted']} "
                     f"({value.get('stopped-because', 'no reason recorded')})")
    for key in ("skipped", "already"):
        if value.get(key):
            notes.append(f"{key}: {value[key]}")
    if value.get("done") is False:
        notes.append("not done")
    return notes


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def step_row(label: str, f: str, rounds: Sequence[tuple[float, dict[str, Any]]]
             ) -> dict[str, Any]:
    """One step's row from its rounds (seconds from invoke to completion, completion):
    the median and max total, each figure's median over the rounds, errors and notes."""
    totals = [t for t, _ in rounds]
    values = [out.get("value") for _, out in rounds]
    per_round = [figures(v) for v in values]
    names = sorted({k for r in per_round for k in r})
    errors = [out["error"] for _, out in rounds if "error" in out]
    return {
        "operation": label, "f": f, "total_s": _median(totals), "total_max_s": max(totals),
        "figures": {k: _median([r[k] for r in per_round if k in r]) for k in names},
        "rounds": [{"total_s": round(t, 2), **r, "nodes": nodes_of(v)}
                   for t, r, v in zip(totals, per_round, values, strict=True)],
        "errors": errors, "notes": [n for v in values for n in notes_of(v)],
    }


def describe(row: Mapping[str, Any]) -> str:
    """One printed line: the total (median, max), then the op's own figures."""
    shown = "  ".join(f"{k} {v:.2f}" for k, v in row["figures"].items()
                      if v is not None and k != "duration-s")
    return (f"{row['operation']:42} {row['total_s']:7.2f}s (max {row['total_max_s']:6.2f})"
            + (f"  [{shown}]" if shown else "")
            + (f"  errors: {row['errors']}" if row["errors"] else "")
            + (f"  notes: {row['notes']}" if row["notes"] else ""))


def time_operations(nem: Nemesis, cluster: Cluster, ops: Sequence[Operation], repeat: int,
                    settle: Callable[[], None], *,
                    clock: Callable[[], float] = time.monotonic) -> list[dict[str, Any]]:
    """Each operation's steps ``repeat`` times, every op timed from invoke to completion,
    ``settle()`` (not timed) before each; one row per step, printed as it is done."""
    rows = []
    for operation in ops:
        rounds: list[list[tuple[float, dict[str, Any]]]] = [[] for _ in operation.steps]
        for _ in range(repeat):
            for i, (_label, op) in enumerate(operation.steps):
                settle()
                t0 = clock()
                out = nem.invoke(cluster, op)
                rounds[i].append((clock() - t0, out))
        for (label, op), done in zip(operation.steps, rounds, strict=True):
            rows.append(step_row(label, op["f"], done))
            print(describe(rows[-1]), flush=True)
    return rows


@contextmanager
def nemesis_on(cluster: Cluster, opts: NemesisOptions) -> Iterator[ComposedNemesis]:
    """The package nemesis for ``opts``, set up on ``cluster``; afterwards torn down (timed)
    and the nodes checked for residue, both printed."""
    nem = build_package(opts).nemesis
    assert isinstance(nem, ComposedNemesis)
    nem.setup(cluster)
    try:
        yield nem
    finally:
        t0 = time.monotonic()
        nem.teardown(cluster)
        print(f"teardown of {', '.join(sorted(opts.faults))}: "
              f"{time.monotonic() - t0:.2f}s", flush=True)
    left = residue(cluster)
    print(f"residue after teardown: {left or 'none'}", flush=True)


def measure_operations(cluster: Cluster, ops: Sequence[Operation], topic: str, repeat: int,
                       settle: Callable[[], None]) -> list[dict[str, Any]]:
    """``ops`` timed through one nemesis package of their kinds (see the module doc)."""
    kinds = frozenset().union(*(o.kinds for o in ops))
    with nemesis_on(cluster, NemesisOptions(faults=kinds, topics=(topic,))) as nem:
        return time_operations(nem, cluster, ops, repeat, settle)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--operations", action="store_true",
                        help="also time the planned operations (restart, elect-leader, "
                             "reassign, reconfigure, upgrade/downgrade, voter)")
    parser.add_argument("--operations-repeat", type=int, default=1,
                        help="rounds per operation (default 1: a rolling restart or an "
                             "upgrade/downgrade pair takes minutes)")
    parser.add_argument("--upgrade-to", metavar="VERSION",
                        help="with --operations: time an upgrade to this release (no level "
                             "bump) and the downgrade back")
    parser.add_argument("--kraft-quorum", default="static", choices=KRAFT_QUORUMS,
                        help="the controller quorum (dynamic: Kafka 3.9+, also times voter "
                             "remove/add with --operations)")


def check_arguments(args: argparse.Namespace) -> tuple[KafkaVersion, KafkaVersion | None]:
    """The cluster's Kafka version and the one ``--upgrade-to`` names (None: none);
    ``UsageError`` (one line, before any cluster is made) for an option that cannot be
    measured."""
    from cluster.versions import resolve_for_mode
    from nemesis.kinds.upgrade import value_problem

    if args.operations_repeat < 1:
        raise UsageError(f"--operations-repeat must be at least 1, got {args.operations_repeat}")
    if args.upgrade_to is not None and not args.operations:
        raise UsageError("--upgrade-to needs --operations", hint="add --operations")
    version = resolve_for_mode(args.kafka_version, "kraft")
    if args.kraft_quorum == "dynamic" and version.number < DYNAMIC_QUORUM_SINCE:
        raise UsageError(f"--kraft-quorum dynamic needs Kafka 3.9 or later, got "
                         f"{version.version}", hint="leave --kraft-quorum out")
    if args.upgrade_to is None:
        return version, None
    problem = value_problem("upgrade", {"kafka-version": args.upgrade_to}, needs_build=True)
    if problem:
        raise UsageError(f"--upgrade-to: {problem}")
    target = resolve_for_mode(args.upgrade_to, "kraft")
    if target.order <= version.order:
        raise UsageError(f"--upgrade-to {target.version} is not newer than the cluster's "
                         f"Kafka {version.version}",
                         hint="name a newer release, or an older --kafka-version")
    return version, target
