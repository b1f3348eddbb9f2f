"""The ``restart`` kind: brokers restarted cleanly one at a time, the ISR whole between them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fakes import FakeTime, fake_cluster
from hypothesis import given
from hypothesis import strategies as st

from cluster.metadata import PartitionState
from harness.base.faults import fault_kind
from harness.gen import Rng
from nemesis import NemesisOptions
from nemesis.kinds import load
from nemesis.nodes import Resolver
from nemesis.polling import Poller
from nemesis.restart import RestartNemesis
from nemesis.targets import Facts

KIND = load(fault_kind("restart"))
NODES = ("n1", "n2", "n3")


def whole(_cluster: object) -> Facts:
    parts = {f"t0-{i}": PartitionState("t0", i, "n1", NODES, NODES) for i in range(2)}
    return Facts(partitions=lambda: parts, controller=lambda: "n2", brokers=lambda: set(NODES))


def lacking(node: str, looks: int) -> Callable[[object], Facts]:
    """Facts whose ISR lacks ``node`` for the first ``looks`` looks, then is whole."""
    seen = [0]

    def parts() -> dict[str, PartitionState]:
        seen[0] += 1
        isr = tuple(n for n in NODES if n != node) if seen[0] <= looks else NODES
        return {"t0-0": PartitionState("t0", 0, "n1", NODES, isr)}

    return lambda _c: Facts(partitions=parts, controller=lambda: "n2",
                            brokers=lambda: set(NODES))


def nemesis(facts: Callable[[object], Facts]) -> tuple[RestartNemesis, FakeTime]:
    t = FakeTime()
    return RestartNemesis(Resolver(seed=1, facts_for=facts),  # type: ignore[arg-type]
                          Poller(clock=t.clock, sleep=t.sleep), clock=t.clock), t


def test_a_rolling_restart_stops_and_starts_every_broker_in_turn() -> None:
    cluster, fakes = fake_cluster(3)
    nem, _ = nemesis(whole)
    out = nem.invoke(cluster, {"f": "restart", "value": "all"})
    assert "error" not in out
    value = out["value"]
    assert value["nodes"] == list(NODES)
    assert [s["node"] for s in value["steps"]] == list(NODES)
    for name, step in zip(NODES, value["steps"], strict=True):
        assert fakes[name].signals == [("TERM", 100)]  # SIGTERM only: a clean shutdown
        assert step["stopped-pid"] == 100 and step["clean"] is True
        assert step["started-pid"] == fakes[name].pid == 501
        assert step["isr-whole"] is True and step["isr-s"] == 0
    assert all(fk.stat == "Sl" for fk in fakes.values())


def test_the_wait_for_the_isr_is_measured_and_bounded() -> None:
    cluster, fakes = fake_cluster(3)
    nem, t = nemesis(lacking("n2", looks=3))
    out = nem.invoke(cluster, {"f": "restart", "value": {"target": "n2", "isr-timeout-s": 30}})
    step = out["value"]["steps"][0]
    assert step["isr-whole"] is True and step["isr-s"] == 3.0 and t.slept == [1.0] * 3

    cluster, fakes = fake_cluster(3)
    nem, _ = nemesis(lacking("n1", looks=10**6))
    out = nem.invoke(cluster, {"f": "restart", "value": {"target": "all", "isr-timeout-s": 5}})
    value = out["value"]
    # the runbook stops at the first broker whose ISR did not come back
    assert [s["node"] for s in value["steps"]] == ["n1"]
    assert value["steps"][0]["isr-whole"] is False
    assert value["steps"][0]["isr-missing"] == ["t0-0 isr lacks n1"]
    assert value["steps"][0]["isr-missing-count"] == 1
    assert value["not-restarted"] == ["n2", "n3"]
    assert value["stopped-because"] == "n1: ISR not whole 5 s after its restart"
    assert "error" not in out  # the runbook's outcome, recorded; the nemesis did its part
    assert fakes["n2"].signals == [] and fakes["n3"].signals == []


def test_a_paused_or_dead_broker_is_skipped_and_left_so() -> None:
    cluster, fakes = fake_cluster(3)
    fakes["n1"].stat = "T"
    fakes["n3"].pid = None
    nem, _ = nemesis(whole)
    value = nem.invoke(cluster, {"f": "restart", "value": "all"})["value"]
    assert value["skipped"] == {"n1": "paused", "n3": "stopped"}
    assert [s["node"] for s in value["steps"]] == ["n2"]
    assert fakes["n1"].stat == "T" and fakes["n3"].pid is None


def test_a_broker_that_outlives_sigterm_is_killed_and_the_op_says_so() -> None:
    cluster, fakes = fake_cluster(3)
    fakes["n2"].linger = True
    nem, _ = nemesis(whole)
    out = nem.invoke(cluster, {"f": "restart", "value": {"target": "n2", "stop-timeout-s": 3}})
    step = out["value"]["steps"][0]
    assert step["clean"] is False and fakes["n2"].signals == [("TERM", 100), ("KILL", 100)]
    assert step["started-pid"] == 501
    assert "did not exit within 3 s of SIGTERM" in out["error"]["n2"]


def test_the_targets_an_operator_names_resolve_from_metadata() -> None:
    cluster, _ = fake_cluster(3)
    nem, _ = nemesis(whole)
    assert nem.invoke(cluster, {"f": "restart", "value": "controller"})["value"]["nodes"] == ["n2"]
    assert nem.invoke(cluster, {"f": "restart", "value": "leader:t0-1"})["value"]["nodes"] == [
        "n1"]
    out = nem.invoke(cluster, {"f": "restart", "value": "leader:t9-0"})
    assert out["value"] == {"target": "leader:t9-0"} and "t9-0" in out["error"]


def test_end_restart_starts_what_was_left_down_but_not_what_a_kill_keeps_down() -> None:
    cluster, fakes = fake_cluster(3)
    fakes["n1"].pid = None
    fakes["n3"].pid = None
    resolver = Resolver(seed=1, facts_for=whole)  # type: ignore[arg-type]
    resolver.in_force.update(lambda s: s.claim("killed", {"n3"}))
    out = RestartNemesis(resolver).invoke(cluster, {"f": "end-restart", "value": "all"})
    assert out["value"]["started"] == {"n1": 501}
    assert fakes["n3"].pid is None


@pytest.mark.parametrize(("value", "problem"), [
    ({"target": "n2", "isr-timeout-s": -1}, "'isr-timeout-s' must be"),
    ({"target": "n9"}, "n9"),
    ({"target": "n2", "wait": 3}, "restart takes target"),
    ("nowhere", "nowhere"),
])
def test_bad_values_are_refused_before_the_run(value: object, problem: str) -> None:
    assert problem in (KIND.validate("restart", value, 3) or "")  # type: ignore[attr-defined]


def test_good_values_pass() -> None:
    for value in ("all", "controller", "leader:t0-0", ["n1", "n2"],
                  {"target": "all", "isr-timeout-s": 30, "stop-timeout-s": 60}):
        assert KIND.validate("restart", value, 3) is None  # type: ignore[attr-defined]


@given(seed=st.integers(0, 2**64 - 1))
def test_drawn_restarts_name_an_operators_target(seed: int) -> None:
    op = KIND.start_op(NemesisOptions(faults=frozenset({"restart"})), Rng(seed))
    assert op["f"] == "restart" and op["value"] in ("one", "leaders", "controller", "all")


def test_coverage_counts_the_sends_acknowledged_while_the_restart_ran() -> None:
    """The operation is the fault while it runs: in force from its invoke (``duration-s``)."""
    from results.coverage import coverage

    cluster, _ = fake_cluster(3)
    nem, _ = nemesis(whole)
    done = nem.invoke(cluster, {"f": "restart", "value": "n1"})
    s = 1_000_000_000
    ops = [{"process": "nemesis", "type": "invoke", "f": "restart", "value": "n1", "time": 1 * s},
           {"process": 0, "type": "ok", "f": "send", "value": [["send", "t0-0", [0, 1]]],
            "time": 2 * s},
           {"process": "nemesis", "type": "info", "f": "restart", "time": 3 * s, **done},
           {"process": "nemesis", "type": "invoke", "f": "end-restart", "time": 4 * s}]
    cov = coverage(ops, {"restart": ("restart", "end-restart")}, (0, 5 * s))
    assert cov["faults"]["restart"]["acked_sends"] == 1
