"""A script's waits for cluster state: the ``await-state`` nemesis over scripted metadata.

The metadata is a sequence (one answer per poll, the last repeated); the clock
moves only when the nemesis sleeps (``FakeTime``), so a 30 s wait takes no time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeTime, down_nodes, fake_cluster, grudge_in_force

from cluster import Cluster
from cluster.metadata import PartitionState
from harness.base.errors import ClusterError
from harness.base.faults import fault_spans
from harness.base.waits import AWAIT_STATE, not_held
from harness.gen import nemesis, simulate
from nemesis import ComposedNemesis, NemesisOptions, build_package
from nemesis.nodes import Resolver
from nemesis.recovery import RecoveryNemesis
from nemesis.targets import Facts
from nemesis.waits import StateNemesis
from results.coverage import coverage
from results.report.plot_data import nemesis_bands

REPLICAS = ("n1", "n2", "n3")
S = 1_000_000_000


def part(leader: str | None, *isr: str) -> PartitionState:
    return PartitionState("t0", 0, leader, REPLICAS, tuple(isr))


Answer = PartitionState | Exception


class Metadata:
    """Facts whose ``partitions`` answers ``answers`` in turn, then the last one forever."""

    def __init__(self, answers: Sequence[Answer]) -> None:
        self.answers = list(answers)
        self.asked = 0

    def partitions(self) -> dict[str, PartitionState]:
        answer = self.answers[min(self.asked, len(self.answers) - 1)]
        self.asked += 1
        if isinstance(answer, Exception):
            raise answer
        return {"t0-0": answer}

    def facts(self, _cluster: Any) -> Facts:
        return Facts(partitions=self.partitions, controller=lambda: "n3",
                     brokers=lambda: set(REPLICAS))


def waiting(answers: Sequence[Answer]) -> tuple[StateNemesis, Resolver, FakeTime, Cluster]:
    md = Metadata(answers)
    resolver = Resolver(0, md.facts)
    t = FakeTime()
    recovery = RecoveryNemesis(resolver, 60.0, clock=t.clock, sleep=t.sleep)
    cluster, _ = fake_cluster(3)
    return StateNemesis(resolver, recovery, clock=t.clock, sleep=t.sleep), resolver, t, cluster


def wait(until: str, timeout: float = 30, **more: Any) -> dict[str, Any]:
    return {"f": AWAIT_STATE, "value": {"until": until, "timeout-s": timeout, "step": 2,
                                        **({"key": "t0-0"} if until != "recovered" else {}),
                                        **more}}


def test_it_polls_until_the_isr_is_the_leader_alone_and_records_what_it_saw() -> None:
    nem, _, t, cluster = waiting([part("n1", "n1", "n2", "n3"), part("n1", "n1", "n2"),
                                  part("n1", "n1")])
    out = nem.invoke(cluster, wait("isr-is-leader"))
    assert out == {"value": {"until": "isr-is-leader", "key": "t0-0", "timeout-s": 30, "step": 2,
                             "held": True, "seconds": 2.0, "polls": 3,
                             "observed": {"leader": "n1", "isr": ["n1"]}}}
    assert t.slept == [1.0, 1.0]


def test_a_wait_that_never_holds_gives_up_at_its_timeout_and_says_so() -> None:
    nem, _, t, cluster = waiting([part("n1", "n1", "n2")])
    out = nem.invoke(cluster, wait("isr-is-leader", timeout=4.5))
    value = out["value"]
    assert (value["held"], value["seconds"], value["polls"]) == (False, 4.5, 6)
    assert value["observed"] == {"leader": "n1", "isr": ["n1", "n2"]}
    assert t.slept == [1.0] * 4 + [0.5], "never sleeps past the timeout"
    assert "error" not in out, "a condition that never held is a finding, not a failed op"
    assert not_held({"f": AWAIT_STATE, "type": "info", **out}) == (
        "step 2: wait isr-is-leader t0-0 did not hold within 4.5 s")


@pytest.mark.parametrize(("until", "node", "answers", "polls", "nodes"), [
    ("left-isr", "followers:t0-0", [part("n1", "n1", "n2", "n3"), part("n1", "n1", "n3"),
                                    part("n1", "n1")], 2, ["n2", "n3"]),
    ("left-isr", "n2", [part("n1", "n1", "n2"), part("n2", "n2", "n3"),
                        part("n1", "n1", "n3")], 3, ["n2"]),
    ("in-isr", "followers:t0-0", [part("n1", "n1"), part("n1", "n1", "n2"),
                                  part("n1", "n1", "n2", "n3")], 2, ["n2", "n3"]),
    ("leader-is", "n3", [part("n1", *REPLICAS), part(None), part("n3", "n3")], 3, ["n3"]),
    ("leader-is", "controller", [part("n1", *REPLICAS), part("n3", *REPLICAS)], 2, ["n3"]),
], ids=["followers-left", "one-left-while-leading", "followers-back", "leader-is-node",
        "leader-is-controller"])
def test_node_conditions_resolve_the_target_once_when_the_wait_starts(
        until: str, node: str, answers: list[Answer], polls: int, nodes: list[str]) -> None:
    """``followers:KEY`` reads the metadata to resolve: the first answer goes to that."""
    nem, _, _, cluster = waiting(answers)
    value = nem.invoke(cluster, wait(until, node=node))["value"]
    assert (value["held"], value["polls"], value["nodes"]) == (True, polls, nodes)


def test_leader_changed_compares_with_the_leader_the_script_last_acted_on() -> None:
    nem, resolver, _, cluster = waiting([part("n1", *REPLICAS), part("n1", *REPLICAS),
                                         part("n2", "n2", "n3"), part("n3", "n3")])
    assert resolver.nodes(cluster, "leader:t0-0") == ["n1"]  # e.g. the script killed it
    value = nem.invoke(cluster, wait("leader-changed"))["value"]
    assert (value["held"], value["from-leader"], value["observed"]["leader"]) == (True, "n1", "n2")
    assert value["polls"] == 2, "the first look after the kill already counts"


def test_leader_changed_without_an_action_compares_with_the_leader_when_it_began() -> None:
    nem, resolver, _, cluster = waiting([part("n2", *REPLICAS), part("n2", *REPLICAS),
                                         part("n3", *REPLICAS)])
    value = nem.invoke(cluster, wait("leader-changed"))["value"]
    assert (value["held"], value["from-leader"], value["polls"]) == (True, "n2", 3)
    assert resolver.acted_on == {}


def of(**leaders: str | None) -> dict[str, PartitionState]:
    """Partitions t0-N (t0_1 -> t0-1) with these leaders, each its own ISR."""
    return {k.replace("_", "-"): PartitionState("t0", int(k[3:]), v, REPLICAS,
                                                (v,) if v else ())
            for k, v in leaders.items()}


def waiting_any(answers: Sequence[dict[str, PartitionState]]
                ) -> tuple[StateNemesis, FakeTime, Cluster]:
    """A wait over several partitions: one whole-metadata answer per poll, the last kept."""
    asked = [0]

    def parts() -> dict[str, PartitionState]:
        asked[0] += 1
        return answers[min(asked[0] - 1, len(answers) - 1)]

    resolver = Resolver(0, lambda _c: Facts(partitions=parts, controller=lambda: "n3",
                                            brokers=lambda: ["n1", "n3"]))
    t = FakeTime()
    recovery = RecoveryNemesis(resolver, 60.0, clock=t.clock, sleep=t.sleep)
    cluster, _ = fake_cluster(3)
    return StateNemesis(resolver, recovery, clock=t.clock, sleep=t.sleep), t, cluster


def test_leader_changed_on_any_partition_names_the_partition_that_changed() -> None:
    """KIP-101's script pauses a node it cannot name a partition of: the wait holds when
    any partition moves, and says which. A partition that appears later, or that had no
    leader when the wait began and gets one, is not a change: on 0.10.2 the restarted
    broker's registration brings such a partition online seconds after the pause."""
    nem, _, cluster = waiting_any([
        of(t0_0="n1", t0_1="n2", t0_3=None),
        of(t0_0="n1", t0_1="n2", t0_2="n3", t0_3="n2"),  # t0-2 new, t0-3 back online
        of(t0_0="n1", t0_1="n3", t0_2="n1", t0_3="n2"),
    ])
    value = nem.invoke(cluster, wait("leader-changed", key="*"))["value"]
    assert (value["held"], value["polls"], value["from-leader"]) == (True, 3, "n2")
    assert value["observed"] == {"key": "t0-1", "leader": "n3", "isr": ["n3"]}
    assert value["held-on"] == {"t0-1": "n3"}


def test_a_wait_on_any_partition_records_every_partition_it_held_on() -> None:
    nem, _, cluster = waiting_any([of(t0_0="n1", t0_1="n1", t0_2="n2"),
                                   of(t0_0="n3", t0_1="n2", t0_2="n2")])
    value = nem.invoke(cluster, wait("leader-changed", key="*"))["value"]
    assert value["held-on"] == {"t0-0": "n3", "t0-1": "n2"}
    assert (value["observed"]["key"], value["from-leader"]) == ("t0-0", "n1")


def test_a_wait_on_any_partition_that_never_holds_says_how_many_it_watched() -> None:
    nem, t, cluster = waiting_any([of(t0_0="n1", t0_1="n2")])
    value = nem.invoke(cluster, wait("leader-changed", key="*", timeout=3))["value"]
    assert (value["held"], value["observed"]) == (False, {"partitions": 2})
    assert "from-leader" not in value and sum(t.slept) >= 3


def test_a_node_condition_on_any_partition_resolves_non_controllers() -> None:
    """non-controllers: the registered brokers (n1, n3) but the controller (n3)."""
    nem, _, cluster = waiting_any([of(t0_0="n3", t0_1="n2"), of(t0_0="n3", t0_1="n1")])
    value = nem.invoke(cluster, wait("leader-is", key="*", node="non-controllers"))["value"]
    assert (value["held"], value["nodes"], value["polls"]) == (True, ["n1"], 2)
    assert value["observed"]["key"] == "t0-1"


def test_a_wait_that_resolves_leader_key_does_not_count_as_acting_on_it() -> None:
    nem, resolver, _, cluster = waiting([part("n1", *REPLICAS)])
    assert nem.invoke(cluster, wait("leader-is", node="leader:t0-0"))["value"]["held"] is True
    assert resolver.acted_on == {}


def test_metadata_that_cannot_answer_is_observed_and_polled_again() -> None:
    nem, _, _, cluster = waiting([ClusterError("cannot read cluster metadata"),
                                  part("n1", "n1")])
    value = nem.invoke(cluster, wait("isr-is-leader"))["value"]
    assert (value["held"], value["polls"]) == (True, 2)
    never, _, _, cluster = waiting([ClusterError("cannot read cluster metadata")])
    value = never.invoke(cluster, wait("isr-is-leader", timeout=2))["value"]
    assert value["held"] is False
    assert value["observed"] == {"error": "metadata: ClusterError: cannot read cluster metadata"}


def test_a_node_target_that_cannot_be_resolved_fails_the_wait_at_once() -> None:
    nem, _, t, cluster = waiting([part("n1", "n1")])
    out = nem.invoke(cluster, wait("left-isr", node="followers:t9-0"))
    assert out["value"]["held"] is False and out["value"]["polls"] == 0 and t.slept == []
    assert "no partition 't9-0'" in out["error"]


def test_the_end_of_the_main_phase_cuts_a_wait_short() -> None:
    nem, _, _, cluster = waiting([part("n1", "n1", "n2")])
    value = nem.invoke(cluster, wait("isr-is-leader", **{"within-s": 2.5}))["value"]
    assert (value["held"], value["seconds"], value["cut-short"]) == (False, 2.5, True)
    assert value["timeout-s"] == 30 and "within-s" not in value


def healing(after: int) -> Callable[[Any], Facts]:
    asked = [0]

    def partitions() -> dict[str, PartitionState]:
        asked[0] += 1
        return {"t0-0": part("n1" if asked[0] >= after else None, "n1")}

    return lambda _c: Facts(partitions=partitions, controller=lambda: "n1",
                            brokers=lambda: set(REPLICAS))


@pytest.mark.parametrize(("after", "held"), [(3, True), (10**9, False)], ids=["heals", "never"])
def test_recovered_is_the_await_recovery_wait_with_the_scripts_timeout(after: int,
                                                                      held: bool) -> None:
    t = FakeTime()
    resolver = Resolver(0, healing(after))
    recovery = RecoveryNemesis(resolver, 60.0, clock=t.clock, sleep=t.sleep)
    nem = StateNemesis(resolver, recovery, clock=t.clock, sleep=t.sleep)
    cluster, _ = fake_cluster(3)
    value = nem.invoke(cluster, wait("recovered", timeout=5))["value"]
    assert value["held"] is held and value["timeout-s"] == 5 and "recovered" not in value
    assert value["seconds"] == (2.0 if held else 5.0)
    assert value["waited-for"] == ["leader of t0-0"]


def test_a_script_with_waits_gets_the_await_state_nemesis(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('[[step]]\nwait = "isr-is-leader"\nkey = "t0-0"\ntimeout = 5\n')
    pkg = build_package(NemesisOptions(schedule=path))
    assert pkg.nemesis is not None and AWAIT_STATE in pkg.nemesis.fs()
    assert pkg.fault_spans == {}, "a wait is no fault: it opens no window"
    plain = tmp_path / "p.toml"
    plain.write_text('[[step]]\nat = 1\nf = "kill"\nvalue = "n1"\n')
    fs = build_package(NemesisOptions(schedule=plain)).nemesis
    assert fs is not None and AWAIT_STATE not in fs.fs()


def test_coverage_and_fault_bands_pass_over_a_wait_whether_or_not_it_held() -> None:
    def op(t: float, f: str, kind: str = "info", value: Any = None,
           process: Any = "nemesis") -> dict[str, Any]:
        return {"process": process, "type": kind, "f": f, "time": int(t * S), "value": value}

    sends = [op(x, "send", "ok", [["send", "k", [i, i]]], 0) for i, x in enumerate((0.5, 2.5, 8.5))]
    base = [sends[0], op(1, "kill", "invoke", "n2"), op(1.1, "kill"), sends[1],
            op(6, "start", "invoke", "all"), op(6.2, "start"), sends[2]]
    asked = wait("isr-is-leader")["value"]
    for held in (True, False):
        waited = [*base[:3], op(1.2, AWAIT_STATE, "invoke", asked),
                  op(4.2, AWAIT_STATE, value={**asked, "held": held}), *base[3:]]
        spans = fault_spans()
        assert coverage(waited, spans, main=(0, 10 * S)) == coverage(base, spans, (0, 10 * S))
        bands = nemesis_bands([o for o in waited if o["process"] == "nemesis"], 10 * S)
        assert [(b.kind, b.start == b.stop) for b in bands if b.kind != "kill"] == [
            (AWAIT_STATE, True)], "an instant marker, never a window"


def test_the_script_generator_and_the_real_nemesis_play_a_reproduction_together(
        tmp_path: Path) -> None:
    """The simulator completes each op with what the package's real nemesis (fake nodes, a
    Kafka model answering from the faults in force, a fake clock) returns: the generator
    moves on exactly as the runner would make it."""
    path = tmp_path / "isr-shrink.toml"
    path.write_text(
        '[[step]]\nf = "start-partition"\nvalue = { isolate = "followers:t0-0" }\n\n'
        '[[step]]\nwait = "isr-is-leader"\nkey = "t0-0"\ntimeout = 30\n\n'
        '[[step]]\nafter = 1\nf = "kill"\nvalue = "leader:t0-0"\n\n'
        '[[step]]\nf = "stop-partition"\n\n'
        '[[step]]\nwait = "leader-changed"\nkey = "t0-0"\ntimeout = 30\n\n'
        '[[step]]\nwait = "in-isr"\nkey = "t0-0"\nnode = "n1"\ntimeout = 5\n\n'
        '[[step]]\nf = "start"\nvalue = "all"\n')
    pkg = build_package(NemesisOptions(schedule=path, nodes=3))
    nem = pkg.nemesis
    assert isinstance(nem, ComposedNemesis)
    state = next(m for m in nem.members if isinstance(m, StateNemesis))
    t = FakeTime()
    state.poller = state.recovery.poller = type(state.poller)(1.0, t.clock, t.sleep)
    cluster, fakes = fake_cluster(3)
    looks = [0]

    def partitions() -> dict[str, PartitionState]:
        """n1 leads; cut off, its followers leave the ISR after 3 looks; killed, n2 leads."""
        looks[0] += 1 if grudge_in_force(cluster, fakes) else 0
        if "n1" in down_nodes(fakes)[0]:
            return {"t0-0": part("n2", "n2", "n3")}
        return {"t0-0": part("n1", "n1") if looks[0] > 3 else part("n1", *REPLICAS)}

    state.resolver._facts_for = lambda _c: Facts(  # the fake cluster answers metadata
        partitions=partitions, controller=lambda: "n1", brokers=lambda: set(REPLICAS))

    def outcome(op: dict[str, Any], _rng: Any) -> dict[str, Any]:
        return {"type": "info", **nem.invoke(cluster, op)}

    history = simulate(nemesis(pkg.generator), concurrency=1, outcome_fn=outcome)
    done = [op for op in history if op["type"] != "invoke"]
    assert [op["f"] for op in done] == ["start-partition", AWAIT_STATE, "kill", "stop-partition",
                                        AWAIT_STATE, AWAIT_STATE]
    isr, changed, back = (op["value"] for op in done if op["f"] == AWAIT_STATE)
    assert isr["held"] is True and isr["observed"] == {"leader": "n1", "isr": ["n1"]}
    assert changed["held"] is True and changed["from-leader"] == "n1", "the leader it killed"
    assert back["held"] is False and back["observed"] == {"leader": "n2", "isr": ["n2", "n3"]}
    assert "start" not in [op["f"] for op in done], "the script stopped at the wait"
    assert not_held(done[-1]) == "step 6: wait in-isr t0-0 n1 did not hold within 5 s"
