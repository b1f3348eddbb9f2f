"""The combined package: composition, generators (by simulation) and options."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.errors import UsageError
from harness.gen import nemesis, phases, simulate, time_limit
from nemesis import FAULTS, NemesisOptions, add_nemesis_options, build_package, options_from_args
from nemesis.package import FAULT_FS, HEALS

ALL = frozenset(FAULTS)


def run(opts: NemesisOptions, seconds: float = 600.0, seed: int = 0) -> list[dict[str, Any]]:
    pkg = build_package(opts)
    gen = phases(time_limit(seconds, nemesis(pkg.generator)), nemesis(pkg.final_generator))
    return simulate(gen, concurrency=2, seed=seed)


def test_no_faults_no_nemesis() -> None:
    pkg = build_package(NemesisOptions())
    assert pkg.nemesis is None and pkg.generator is None and pkg.final_generator is None


def test_union_handles_every_op_of_every_fault() -> None:
    pkg = build_package(NemesisOptions(faults=ALL))
    assert pkg.nemesis is not None
    assert pkg.nemesis.fs() == frozenset().union(*FAULT_FS.values())
    assert set(pkg.fault_spans) >= {"partition", "kill", "pause", "packet", "clock-bump"}


def test_each_kind_alternates_start_and_heal_and_all_kinds_occur() -> None:
    history = run(NemesisOptions(faults=ALL, interval=5), seconds=2000)
    invokes = [op for op in history if op["type"] == "invoke"]
    assert {op["process"] for op in history} == {"nemesis"}
    for kind, fs in FAULT_FS.items():
        heal = dict(HEALS)[kind]["f"]
        seq = [op["f"] for op in invokes[:-len(HEALS)] if op["f"] in fs]
        assert seq, f"no {kind} faults in 2000 s"
        starts = [f != heal for f in seq]
        assert starts[::2] == [True] * len(starts[::2]), f"{kind}: {seq}"
        assert starts[1::2] == [False] * len(starts[1::2]), f"{kind}: {seq}"


def test_interval_is_the_mean_spacing() -> None:
    history = run(NemesisOptions(faults=frozenset({"kill"}), interval=10), seconds=3000)
    times = [op["time"] for op in history if op["type"] == "invoke"][:-1]
    mean = (times[-1] - times[0]) / (len(times) - 1) / 1e9
    assert 8.5 < mean < 11.5, mean


def test_final_generator_heals_everything_once_in_order() -> None:
    history = run(NemesisOptions(faults=ALL), seconds=60)
    tail = [op["f"] for op in history if op["type"] == "invoke"][-len(HEALS):]
    assert tail == ["resume", "stop-partition", "stop-packet", "reset-clock", "start"]


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


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"faults": frozenset({"meteor"})}, "unknown nemesis faults"),
    ({"interval": 0}, "must be > 0"),
    ({"targets": ("everyone",)}, "unknown nemesis targets"),
    ({"packet": ("corrupt",)}, "unknown packet behaviours"),
], ids=["fault", "interval", "target", "packet"])
def test_bad_options_are_usage_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        NemesisOptions(**kwargs)  # type: ignore[arg-type]


def test_argparse_options_round_trip(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int)
    add_nemesis_options(parser)
    sched = tmp_path / "s.jsonl"
    sched.write_text('{"at": 1, "f": "kill", "value": "n1"}\n')
    args = parser.parse_args([
        "--nemesis", "partition,clock", "--nemesis-interval", "3", "--nemesis-targets",
        "one,leaders", "--partition-clients", "--seed", "7", "--nemesis-schedule", str(sched)])
    opts = options_from_args(args, topics=("t0",))
    assert opts == NemesisOptions(
        faults=frozenset({"partition", "clock"}), interval=3.0, targets=("one", "leaders"),
        schedule=sched, partition_clients=True, seed=7, topics=("t0",))
    assert opts.needs_faketime
    defaults = options_from_args(add_and_parse([]))
    assert defaults == NemesisOptions()


def add_and_parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_nemesis_options(parser)
    return parser.parse_args(argv)


def test_public_names_are_pinned() -> None:
    import nemesis as pkg

    assert sorted(pkg.__all__) == sorted([
        "ALL_FS", "FAULTS", "ComposedNemesis", "Nemesis", "NemesisError", "NemesisOptions",
        "NemesisPackage", "ScheduleStep", "TeardownIncomplete", "add_nemesis_options",
        "build_package", "load_schedule", "options_from_args", "parse_schedule", "residue"])


@pytest.mark.parametrize("kinds", [{"partition", "kill"}, set(FAULTS)], ids=["two", "all"])
def test_first_fault_waits_an_interval_and_every_fault_heals_within_a_round(
    kinds: set[str],
) -> None:
    """Faults of different kinds overlap, but none stays in force for the whole run."""
    history = run(NemesisOptions(faults=frozenset(kinds), interval=10), seconds=1500, seed=4)
    invokes = [op for op in history if op["type"] == "invoke"][: -len(HEALS)]
    assert invokes[0]["time"] >= 10 * 10**9, "clients get one interval before the first fault"
    open_at: dict[str, int] = {}
    overlapped = False
    for i, op in enumerate(invokes):
        kind = next(k for k, fs in FAULT_FS.items() if op["f"] in fs)
        if op["f"] == dict(HEALS)[kind]["f"]:
            started = open_at.pop(kind)
            assert i - started == len(kinds), f"{kind} healed {i - started} ops later"
        else:
            overlapped = overlapped or bool(open_at)
            open_at[kind] = i
    assert overlapped, "faults of different kinds should still overlap"
