"""The combined package: composition, generators (by simulation) and options.

Fault vocabulary (kinds, their ops and heals) comes from the registry,
``harness.base.faults``, as the package itself takes it."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest

from harness.base.errors import UsageError
from harness.base.faults import FAULT_KINDS, all_fs, fault_names, kind_of
from harness.gen import nemesis, phases, simulate, time_limit
from nemesis import NemesisOptions, build_package
from nemesis.recovery import AWAIT

ALL = frozenset(fault_names())
HEALS = len(FAULT_KINDS)  # the final generator heals every kind once (then awaits recovery)


def run(opts: NemesisOptions, seconds: float = 600.0, seed: int = 0) -> list[dict[str, Any]]:
    pkg = build_package(opts)
    gen = phases(time_limit(seconds, nemesis(pkg.generator)), nemesis(pkg.final_generator))
    return simulate(gen, concurrency=2, seed=seed)


def fault_invokes(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The invokes of fault ops (starts and heals), without the recovery waits."""
    return [op for op in history if op["type"] == "invoke" and op["f"] != AWAIT]


def test_no_faults_no_nemesis() -> None:
    pkg = build_package(NemesisOptions())
    assert pkg.nemesis is None and pkg.generator is None and pkg.final_generator is None


def test_union_handles_every_op_of_every_fault() -> None:
    pkg = build_package(NemesisOptions(faults=ALL))
    assert pkg.nemesis is not None
    assert pkg.nemesis.fs() == all_fs() | {AWAIT}
    assert set(pkg.fault_spans) >= {"partition", "kill", "pause", "packet", "clock-bump"}


def test_each_kind_alternates_start_and_heal_and_all_kinds_occur() -> None:
    history = run(NemesisOptions(faults=ALL, interval=5), seconds=2000)
    invokes = fault_invokes(history)
    assert {op["process"] for op in history} == {"nemesis"}
    for kind in FAULT_KINDS:
        seq = [op["f"] for op in invokes[:-HEALS] if op["f"] in kind.fs]
        assert seq, f"no {kind.name} faults in 2000 s"
        starts = [f != kind.stop for f in seq]
        assert starts[::2] == [True] * len(starts[::2]), f"{kind.name}: {seq}"
        assert starts[1::2] == [False] * len(starts[1::2]), f"{kind.name}: {seq}"


def test_interval_is_the_mean_spacing() -> None:
    history = run(NemesisOptions(faults=frozenset({"kill"}), interval=10), seconds=3000)
    times = [op["time"] for op in fault_invokes(history)][:-1]
    mean = (times[-1] - times[0]) / (len(times) - 1) / 1e9
    assert 8.5 < mean < 11.5, mean


def test_final_generator_heals_everything_once_in_order() -> None:
    history = run(NemesisOptions(faults=ALL), seconds=60)
    tail = [op["f"] for op in history if op["type"] == "invoke"][-HEALS - 1:]
    assert tail == ["resume", "stop-burst", "stop-partition", "stop-packet", "stop-disk",
                    "reset-clock", "restore-config", "end-restart", "end-upgrade",
                    "end-downgrade", "start", "power-on", "reassign-back", "elect-preferred",
                    "add-controller",
                    AWAIT]


def test_same_seed_same_faults_different_seed_different_faults() -> None:
    opts = NemesisOptions(faults=ALL, interval=3)
    a, b = run(opts, 300, seed=1), run(opts, 300, seed=1)
    c = run(opts, 300, seed=2)
    assert a == b
    assert [op["value"] for op in a] != [op["value"] for op in c]


def test_targets_restrict_shapes_and_node_targets() -> None:
    opts = NemesisOptions(faults=frozenset({"partition", "kill"}), targets=("majorities-ring",
                                                                             "leaders"))
    values = Counter((op["f"], str(op["value"])) for op in run(opts, 1000)
                     if op["type"] == "invoke" and op["f"] in ("start-partition", "kill"))
    # "leaders" is a node target and a partition shape; "majorities-ring" only a shape
    assert set(values) == {("start-partition", "majorities-ring"),
                           ("start-partition", "leaders"), ("kill", "leaders")}


def test_clock_values_stay_within_minutes_and_packet_defaults_avoid_netem() -> None:
    history = run(NemesisOptions(faults=frozenset({"clock", "packet"}), interval=2), 2000)
    for op in history:
        if op["type"] != "invoke":
            continue
        value = op["value"]
        if op["f"] in ("bump-clock", "strobe-clock"):
            assert isinstance(value, dict) and 0 < abs(value["delta-ms"]) <= 600_000
        if op["f"] == "start-packet":
            assert isinstance(value, dict)
            assert set(value) - {"target"} <= {"loss", "rate-kbit"}


@pytest.mark.parametrize("kinds", [{"kill", "pause", "clock", "packet", "partition"}],
                         ids=["all"])
def test_default_targets_never_ask_for_every_node_or_a_majority(kinds: set[str]) -> None:
    """They stay available through ``--nemesis-targets``, which the test below shows."""
    history = run(NemesisOptions(faults=frozenset(kinds), interval=2, seed=8), 3000)
    targets = Counter(
        (op["value"].get("target") if isinstance(op["value"], dict) else op["value"])
        for op in history if op["type"] == "invoke" and op["f"] in (
            "kill", "pause", "bump-clock", "strobe-clock", "freeze-clock", "start-packet")
    )
    assert set(targets) == {"one", "minority", "leaders", "controller"}
    shapes = {op["value"] for op in history
              if op["type"] == "invoke" and op["f"] == "start-partition"}
    assert shapes == {"one", "majority", "majorities-ring", "minority-third", "one-way",
                      "leaders", "controller"}
    asked = run(NemesisOptions(faults=frozenset({"kill"}), targets=("all", "majority"),
                               interval=2), 300)
    assert {op["value"] for op in asked if op["f"] == "kill"} == {"all", "majority"}


def test_on_three_nodes_the_default_ring_is_drawn_as_the_bridge_it_would_become() -> None:
    three = run(NemesisOptions(faults=frozenset({"partition"}), interval=2, nodes=3), 3000)
    unknown = run(NemesisOptions(faults=frozenset({"partition"}), interval=2), 3000)
    drawn = [op["value"] for op in three if op["f"] == "start-partition"]
    assert "bridge" in drawn and "majorities-ring" not in drawn
    assert drawn == [{"majorities-ring": "bridge"}.get(v, v) for v in
                     (op["value"] for op in unknown if op["f"] == "start-partition")]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"faults": frozenset({"meteor"})}, "unknown nemesis faults"),
    ({"interval": 0}, "must be > 0"),
    ({"targets": ("everyone",)}, "unknown nemesis targets"),
    ({"targets": ("leaders:0",)}, "the count after leaders: must be >= 1"),
    ({"recovery_timeout": 0}, "recovery timeout must be > 0"),
    ({"targets": ("majorities-ring",), "nodes": 2}, "cannot mean anything here: on 2 nodes"),
    ({"packet": ("corrupt",)}, "unknown packet behaviours"),
    ({"faults": frozenset({"packet"}), "packet": ()}, "at least one behaviour"),
], ids=["fault", "interval", "target", "leaders-0", "recovery-timeout", "ring-on-2", "packet",
        "no-packet-behaviour"])
def test_bad_options_are_usage_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        NemesisOptions(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("targets", "nodes"), [
    (("majorities-ring",), 3), (("leaders:2", "primaries:3", "bridge"), 5),
    (("majorities-ring", "one"), None), (("one", "leaders"), 2)],
    ids=["ring-on-3-is-rewritten", "counts-and-bridge", "nodes-unknown", "node-targets-on-2"])
def test_targets_that_can_mean_something_are_accepted(targets: tuple[str, ...],
                                                     nodes: int | None) -> None:
    assert NemesisOptions(faults=frozenset({"partition", "kill"}), targets=targets,
                          nodes=nodes).targets == targets


@pytest.mark.parametrize("faults", [{"partition", "clock"}, {"clock"}, {"kill", "pause"}, set()],
                         ids=["partition+clock", "clock", "kill+pause", "none"])
def test_only_clock_faults_need_faketime(faults: set[str]) -> None:
    assert NemesisOptions(faults=frozenset(faults)).needs_faketime == ("clock" in faults)


def test_public_names_are_pinned() -> None:
    import nemesis as pkg

    assert sorted(pkg.__all__) == sorted([
        "ComposedNemesis", "FaultImpl", "Nemesis", "NemesisError", "NemesisOptions",
        "NemesisPackage", "ScheduleStep", "TeardownIncomplete", "build_package",
        "load_schedule", "parse_schedule", "residue"])
    assert all(hasattr(pkg, name) for name in pkg.__all__)


@pytest.mark.parametrize("kinds", [{"partition", "kill"}, set(ALL)], ids=["two", "all"])
def test_first_fault_waits_an_interval_and_every_fault_heals_within_a_round(
    kinds: set[str],
) -> None:
    """Faults of different kinds overlap, but none stays in force for the whole run."""
    history = run(NemesisOptions(faults=frozenset(kinds), interval=10), seconds=1500, seed=4)
    invokes = fault_invokes(history)[:-HEALS]
    assert invokes[0]["time"] >= 10 * 10**9, "clients get one interval before the first fault"
    open_at: dict[str, int] = {}
    overlapped = False
    for i, op in enumerate(invokes):
        kind = kind_of(op["f"])
        assert kind is not None
        if op["f"] == kind.stop:
            started = open_at.pop(kind.name)
            assert i - started == len(kinds), f"{kind.name} healed {i - started} ops later"
        else:
            overlapped = overlapped or bool(open_at)
            open_at[kind.name] = i
    assert overlapped, "faults of different kinds should still overlap"


def test_on_three_nodes_kinds_take_turns_so_no_fault_waits_on_another() -> None:
    """Overlapping a kill with a partition on 3 nodes would take the quorum: the nemesis
    withheld every such kill. Taking turns, each start comes after the last fault's heal."""
    ops = fault_invokes(run(NemesisOptions(faults=frozenset({"partition", "kill", "pause"}),
                                           interval=2, nodes=3), 3000))
    starts = {"start-partition": "stop-partition", "kill": "start", "pause": "resume"}
    open_fault: str | None = None
    seen = set()
    for op in ops:
        if op["f"] in starts:
            assert open_fault is None, f"{op['f']} while {open_fault} was in force"
            open_fault = starts[op["f"]]
            seen.add(op["f"])
        elif op["f"] == open_fault:
            open_fault = None
    assert seen == set(starts)
    five = fault_invokes(run(NemesisOptions(faults=frozenset({"partition", "kill"}), interval=2,
                                            nodes=5), 3000))
    fs = [op["f"] for op in five]
    assert any(a in ("start-partition", "kill") and b in ("start-partition", "kill")
               for a, b in itertools.pairwise(fs)), "on 5 nodes kinds still overlap"


@pytest.mark.parametrize(("kinds", "nodes"), [({"partition", "kill", "pause"}, 3),
                                              ({"partition", "kill", "clock"}, 5),
                                              ({"kill"}, 5)], ids=["turns", "overlap", "one"])
@pytest.mark.parametrize("hold", [0.0, 7.5, 20.0], ids=lambda h: f"hold-{h}")
def test_every_fault_stays_in_force_for_the_hold_before_its_heal(
    kinds: set[str], nodes: int, hold: float
) -> None:
    """Healed after a random stagger alone, a kill once lasted 0.3 s and saw no send.
    Held ``min_in_force`` seconds, every fault is in force at least that long (the
    stagger's gap after the start may make it longer)."""
    ops = fault_invokes(run(NemesisOptions(faults=frozenset(kinds), interval=4, nodes=nodes,
                                           min_in_force=hold), 2000, seed=3))[:-HEALS]
    started: dict[str, int] = {}
    lasted: list[float] = []
    for op in ops:
        kind = kind_of(op["f"])
        assert kind is not None
        if op["f"] == kind.stop:
            lasted.append((op["time"] - started.pop(kind.name)) / 1e9)
        else:
            started[kind.name] = op["time"]
    assert len(lasted) >= 10
    assert min(lasted) >= hold
