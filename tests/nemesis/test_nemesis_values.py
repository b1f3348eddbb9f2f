"""Each fault kind's ``validate``: what it refuses, and that it accepts what insync
itself draws and what the catalogue ships (a check that refused those would be wrong)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.base.faults import FAULT_KINDS
from harness.gen import Rng
from nemesis import NemesisOptions
from nemesis.grudge import SHAPES
from nemesis.kinds import load
from nemesis.schedule import value_problem
from nemesis.settings import PACKET_BEHAVIOURS
from nemesis.targets import TARGETS, target_problem


@pytest.mark.parametrize(("target", "nodes", "needle"), [
    ("n9", 3, "node 'n9' is not among the run's 3 nodes (n1 to n3)"),
    ("n0", None, "unknown target 'n0'"),
    (["n1", "x"], 3, "'x' is not a node name"),
    ([], 3, "an empty list of nodes"),
    ("leaders:0", 3, "the count after leaders: must be >= 1"),
    ("offsets-leaders:x", 3, "the count after offsets-leaders: must be >= 1"),
    ("nowhere", 3, "unknown target 'nowhere'"),
    (7, 3, "7 is not a target"),
])
def test_a_target_naming_no_node_says_why(target: Any, nodes: int | None, needle: str) -> None:
    problem = target_problem(target, nodes)
    assert problem is not None and needle in problem, problem


@pytest.mark.parametrize("target", [
    *TARGETS, "n3", ["n1", "n2"], "leaders:2", "primaries:3", "leader:t0-0", "followers:t0-1",
    "coordinator:tx-1", "group-coordinator:g", "offsets-leaders", "offsets-leaders:2"])
def test_every_target_form_is_accepted(target: Any) -> None:
    assert target_problem(target, 3) is None


def test_a_node_count_that_is_unknown_accepts_any_node_name() -> None:
    assert target_problem("n42", None) is None
    assert target_problem("n42", 42) is None


@pytest.mark.parametrize(("f", "value", "needle"), [
    ("start-packet", {"loss": 2.0}, "'loss' must be a finite number from 0 to 1, got 2.0"),
    ("start-packet", {"loss": math.nan}, "'loss' must be a finite number from 0 to 1"),
    ("start-packet", {"duplicate": -1}, "'duplicate' must be"),
    ("start-packet", {"rate-kbit": math.inf}, "'rate-kbit' must be"),
    ("start-packet", {"jitter-ms": "5"}, "'jitter-ms' must be"),
    ("bump-clock", {"delta-ms": math.nan}, "'delta-ms' must be a finite number"),
    ("strobe-clock", {"period-ms": 0.5}, "'period-ms' must be"),
    ("strobe-clock", {"duration-s": 0}, "'duration-s' must be"),
    ("start-disk", {"kind": "slow", "ms": math.nan}, "slow disk: ms >= 0"),
    ("start-disk", {"kind": "full", "bytes": math.inf}, "infinity"),
    ("start-disk", "n1", "a disk fault is a table"),
    ("start-partition", {"isolate": "n4"}, "node 'n4' is not among"),
    ("start-partition", {"components": "n1"}, "a partition's 'components' must be"),
    ("start-partition", {"isolate": "n1", "grudge": {}}, "a partition is a shape or one of"),
    ("resume", "n4", "node 'n4' is not among"),
])
def test_each_kind_refuses_its_bad_values(f: str, value: Any, needle: str) -> None:
    problem = value_problem(f, value, 3)
    assert problem is not None and needle in problem, problem


def test_heals_and_ops_of_no_kind_are_not_judged() -> None:
    for f in ("stop-partition", "stop-packet", "stop-disk"):
        assert value_problem(f, "anything", 3) is None
    assert value_problem("await-recovery", {"x": math.nan}, 3) is None
    assert value_problem("start", "all", 3) is None and value_problem("start", None, 3) is None


options = st.builds(
    NemesisOptions,
    faults=st.just(frozenset(k.name for k in FAULT_KINDS)),
    targets=st.lists(st.sampled_from(sorted({*TARGETS, *SHAPES, "leaders:2", "primaries:3"})),
                     unique=True).map(tuple),
    nodes=st.integers(3, 9),
    packet=st.lists(st.sampled_from(PACKET_BEHAVIOURS), min_size=1, unique=True).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(opts=options, state=st.integers(0, 2**64 - 1))
def test_every_op_insync_draws_passes_its_kinds_check(opts: NemesisOptions, state: int) -> None:
    for kind in FAULT_KINDS:
        op = load(kind).start_op(opts, Rng(state))
        assert value_problem(op["f"], op["value"], opts.nodes) is None, op
        assert value_problem(kind.stop, kind.heal_value, opts.nodes) is None, kind.heal
