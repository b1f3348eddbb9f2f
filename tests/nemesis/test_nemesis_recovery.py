"""Faults wait for recovery: the ``await-recovery`` nemesis (fake metadata, fake clock) and
the generator that issues it (virtual time, no threads, no sleeps)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from fakes import FakeTime, fake_cluster

from cluster.metadata import PartitionState
from harness.base.faults import fault_spans
from harness.base.history import Op
from harness.gen import clients, limit, nemesis, phases, repeat, simulate, time_limit
from harness.gen.plan import plan_gen, run_phases
from nemesis import NemesisOptions, build_package
from nemesis import grudge as g
from nemesis.in_force import InForce
from nemesis.nodes import Resolver
from nemesis.recovery import AWAIT, RecoveryNemesis, missing
from nemesis.targets import Facts
from results.coverage import coverage
from results.report.plot_data import nemesis_bands

S = 1_000_000_000
NODES = ["n1", "n2", "n3"]


def healing_after(polls: int) -> tuple[Callable[[Any], Facts], list[int]]:
    """Facts that show n2 unregistered and t0-1 leaderless until the ``polls``-th look."""
    asked = [0]

    def partitions() -> dict[str, PartitionState]:
        asked[0] += 1
        healthy = asked[0] >= polls
        return {"t0-0": PartitionState("t0", 0, "n1", tuple(NODES), tuple(NODES)),
                "t0-1": PartitionState("t0", 1, "n3" if healthy else None, tuple(NODES), ())}

    def brokers() -> set[str]:
        return set(NODES) if asked[0] + 1 >= polls else {"n1", "n3"}

    return (lambda _c: Facts(partitions=partitions, controller=lambda: "n1", brokers=brokers),
            asked)


def recovery(facts_for: Callable[[Any], Facts], timeout_s: float = 60.0
             ) -> tuple[RecoveryNemesis, FakeTime]:
    t = FakeTime()
    return RecoveryNemesis(Resolver(0, facts_for), timeout_s, clock=t.clock, sleep=t.sleep), t


def test_records_how_long_the_cluster_took_and_what_it_waited_for() -> None:
    cluster, _ = fake_cluster(3)
    facts_for, asked = healing_after(4)
    nem, t = recovery(facts_for)
    out = nem.invoke(cluster, {"f": AWAIT, "value": None})
    assert out == {"value": {"recovered": True, "seconds": 3.0, "polls": 4,
                             "waited-for": ["broker n2", "leader of t0-1"]}}
    assert asked == [4] and t.slept == [1.0, 1.0, 1.0]


def test_an_already_recovered_cluster_costs_one_look() -> None:
    cluster, _ = fake_cluster(3)
    nem, t = recovery(healing_after(1)[0])
    out = nem.invoke(cluster, {"f": AWAIT, "value": None})
    assert out == {"value": {"recovered": True, "seconds": 0.0, "polls": 1, "waited-for": []}}
    assert t.slept == []


def test_a_cluster_that_never_recovers_is_recorded_after_the_timeout() -> None:
    cluster, _ = fake_cluster(3)
    nem, t = recovery(healing_after(10**9)[0], timeout_s=7.5)
    out = nem.invoke(cluster, {"f": AWAIT, "value": None})
    value = out["value"]
    assert value["recovered"] is False and value["seconds"] == 7.5 and value["timeout-s"] == 7.5
    assert value["still-missing"] == value["waited-for"] == ["broker n2", "leader of t0-1"]
    assert value["polls"] == 9 and t.slept == [1.0] * 7 + [0.5], "never sleeps past the timeout"
    assert "error" not in out, "a slow cluster is a finding, not a failed op"


def test_unanswered_metadata_is_what_it_waits_for() -> None:
    calls = [0]

    def brokers() -> set[str]:
        calls[0] += 1
        if calls[0] < 3:
            raise ConnectionError("no broker answers")
        return set(NODES)

    facts = Facts(partitions=dict, controller=lambda: "n1", brokers=brokers)
    assert missing(facts, NODES) == ["metadata: ConnectionError: no broker answers"]
    cluster, _ = fake_cluster(3)
    nem, _t = recovery(lambda _c: facts)
    value = nem.invoke(cluster, {"f": AWAIT, "value": None})["value"]
    assert value["recovered"] is True and value["polls"] == 2  # calls 2 and 3


def test_a_registered_broker_that_does_not_answer_is_waited_for_with_what_it_leads() -> None:
    """A broker whose power was cut stays registered, and its partitions' leader, until
    its session expires: metadata alone would call the cluster recovered at once."""
    asked: list[list[str]] = []

    def answering(names: Any) -> list[str]:
        asked.append(sorted(names))
        return [n for n in names if n != "n3" or len(asked) >= 3]  # n3 answers at look 3

    parts = {"t0-0": led("t0-0", "n3"), "t0-1": led("t0-1", "n1")}
    facts = Facts(partitions=lambda: parts, controller=lambda: "n1",
                  brokers=lambda: set(NODES), answering=answering)
    assert missing(facts, NODES) == ["broker n3 (registered, does not answer)",
                                     "leader of t0-0 (n3, which does not answer)"]
    cluster, _ = fake_cluster(3)
    nem, _t = recovery(lambda _c: facts)
    value = nem.invoke(cluster, {"f": AWAIT, "value": None})["value"]
    assert value["recovered"] is True and value["polls"] == 2  # looks 2 and 3
    assert value["waited-for"] == ["broker n3 (registered, does not answer)",
                                   "leader of t0-0 (n3, which does not answer)"]


def test_a_broker_a_fault_keeps_away_or_not_registered_is_not_asked() -> None:
    asked: list[list[str]] = []

    def answering(names: Any) -> list[str]:
        asked.append(sorted(names))
        return list(names)

    facts = Facts(partitions=lambda: {"t0-0": led("t0-0", "n1")}, controller=lambda: "n1",
                  brokers=lambda: {"n1", "n2"}, answering=answering)
    assert missing(facts, NODES, {"n2": "paused"}) == ["broker n3"]
    assert asked == [["n1"]]  # a paused broker would only make the probe wait


def test_without_a_broker_source_only_leaders_are_checked() -> None:
    facts = Facts(partitions=lambda: {"t0-0": PartitionState("t0", 0, None, (), ())},
                  controller=lambda: "n1")
    assert missing(facts, NODES) == ["leader of t0-0"]


# --- the generator: pure, the wait is an op ----------------------------------------------

AWAIT_S = 40


def slow_recovery(seconds: float) -> Callable[[Op, Any], int]:
    """Fault ops take 10 ms; the wait for recovery takes ``seconds``."""
    return lambda op, _rng: int(seconds * S) if op["f"] == AWAIT else 10_000_000


def history(faults: set[str], recovery_s: float, seconds: float = 600, seed: int = 3, *,
            interval: float = 10.0, hold: float = 0.0) -> list[Op]:
    pkg = build_package(NemesisOptions(faults=frozenset(faults), interval=interval, seed=seed,
                                       min_in_force=hold))
    gen = phases(time_limit(seconds, nemesis(pkg.generator)), nemesis(pkg.final_generator),
                 clients(limit(3, repeat({"f": "poll", "value": None}))))
    return simulate(gen, concurrency=1, seed=seed, latency_fn=slow_recovery(recovery_s))


def invokes(ops: list[Op]) -> list[Op]:
    return [op for op in ops if op["type"] == "invoke"]


THREE = frozenset({"partition", "kill", "pause"})


@pytest.mark.parametrize(("faults", "hold"), [({"kill"}, 0.0), (THREE, 0.0), (THREE, 15.0)],
                         ids=["kill", "three-kinds", "three-kinds-held"])
def test_every_heal_is_followed_by_a_wait_and_no_fault_starts_during_it(
    faults: frozenset[str], hold: float,
) -> None:
    """After a heal comes a wait, or first the heals due next (a wait between two heals
    would hold the later fault in force while it waits); never a start. With a hold (the
    runner's default ``--nemesis-hold``), the next heal sits behind its kind's hold."""
    ops = history(set(faults), AWAIT_S, hold=hold)
    nem = [op for op in ops if op["process"] == "nemesis"]
    heals = {f for _label, (_start, f) in fault_spans(faults).items()}
    starts = {f for _label, (f, _stop) in fault_spans(faults).items()}
    main = invokes(nem)[:-(len(faults) + 1)]
    after_heals = 0
    for i, op in enumerate(main[:-1]):
        if op["f"] in heals:
            assert main[i + 1]["f"] == AWAIT or main[i + 1]["f"] in heals, [
                o["f"] for o in main[i:i + 2]]
            after_heals += main[i + 1]["f"] in heals
    assert (after_heals > 0) is (len(faults) > 1), "overlapping kinds heal back to back"
    for i, op in enumerate(main[:-1]):
        if op["f"] == AWAIT:  # no heal ever waits behind a wait
            assert main[i + 1]["f"] in starts, [o["f"] for o in main[i:i + 2]]
    waits = [(a, b) for a, b in pairwise(nem)
             if a["f"] == AWAIT and a["type"] == "invoke"]
    assert waits and all(b["f"] == AWAIT and b["time"] - a["time"] == AWAIT_S * S
                         for a, b in waits), "the nemesis thread is busy for the whole wait"
    done = [b["time"] for _a, b in waits]
    for op in invokes(nem):
        if op["f"] in starts:  # never inside a wait
            assert not any(a["time"] <= op["time"] < d for (a, _b), d in zip(waits, done,
                                                                            strict=True))


def test_kill_sequence_reads_start_heal_wait_start() -> None:
    fs = [op["f"] for op in invokes(history({"kill"}, 5, seconds=120))]
    assert fs[:7] == ["kill", "start", AWAIT, "kill", "start", AWAIT, "kill"]


def test_a_slow_recovery_delays_the_next_fault() -> None:
    fast, slow = history({"kill"}, 0.01), history({"kill"}, AWAIT_S)

    def gaps(ops: list[Op]) -> list[int]:
        """From each heal's invoke to the next fault's invoke."""
        inv = invokes(ops)
        out = []
        for i, op in enumerate(inv):
            nxt = next((o for o in inv[i + 1:] if o["f"] == "kill"), None)
            if op["f"] == "start" and nxt is not None:
                out.append(nxt["time"] - op["time"])
        return out

    assert min(gaps(slow)) >= AWAIT_S * S, "no fault before the cluster recovered"
    assert min(gaps(fast)) < AWAIT_S * S
    assert len([o for o in invokes(slow) if o["f"] == "kill"]) < len(
        [o for o in invokes(fast) if o["f"] == "kill"])


def test_a_fault_due_during_the_wait_starts_the_moment_it_ends() -> None:
    ops = history({"kill"}, AWAIT_S)
    ends = {op["time"] for op in ops if op["f"] == AWAIT and op["type"] != "invoke"}
    kills = [op["time"] for op in invokes(ops) if op["f"] == "kill"]
    # the staggered gap (mean 10 s) is mostly over when a 40 s wait ends
    assert sum(t in ends for t in kills) >= len(kills) // 2


def test_the_drain_starts_after_the_final_wait_for_recovery() -> None:
    ops = history({"kill", "pause"}, AWAIT_S, seconds=60)
    final_wait = max(op["time"] for op in ops if op["f"] == AWAIT)
    polls = [op["time"] for op in invokes(ops) if op["f"] == "poll"]
    assert len(polls) == 3 and min(polls) >= final_wait
    nem_fs = [op["f"] for op in invokes(ops) if op["process"] == "nemesis"]
    assert nem_fs[-3:] == ["resume", "start", AWAIT]


# --- reports pass over it ----------------------------------------------------------------


def test_coverage_and_fault_bands_ignore_the_wait() -> None:
    def send(t: float) -> Op:
        return {"process": 0, "type": "ok", "f": "send", "time": int(t * S),
                "value": [["send", "k", [1, 1]]]}

    def nem(t: float, f: str, kind: str = "info", value: Any = None) -> Op:
        return {"process": "nemesis", "type": kind, "f": f, "time": int(t * S), "value": value}

    waited = {"recovered": True, "seconds": 3.0, "waited-for": ["broker n2"], "polls": 4}
    base = [send(0.5), nem(1, "kill", "invoke", "one"), nem(1.1, "kill"), send(2.5),
            nem(4, "start", "invoke", "all"), nem(4.2, "start"), send(8.5)]
    with_wait = [*base[:6], nem(4.3, AWAIT, "invoke"), nem(7.3, AWAIT, value=waited), base[6]]
    spans = fault_spans({"kill"})
    assert coverage(with_wait, spans, main=(0, 10 * S)) == coverage(base, spans, (0, 10 * S))
    bands = nemesis_bands([op for op in with_wait if op["process"] == "nemesis"], 10 * S, spans)
    kill = [b for b in bands if b.kind == "kill"]
    assert len(kill) == 1 and (kill[0].start, kill[0].stop) == (int(1.1 * S), int(4.2 * S))
    marks = [b for b in bands if b.kind != "kill"]
    assert [(b.kind, b.start == b.stop) for b in marks] == [(AWAIT, True)], "an instant marker"


# --- what a fault still in force keeps away is not waited for ----------------------------


def stuck(parts: dict[str, PartitionState], registered: set[str]) -> Callable[[Any], Facts]:
    return lambda _c: Facts(partitions=lambda: parts, controller=lambda: "n1",
                            brokers=lambda: registered)


def led(key: str, leader: str | None, isr: tuple[str, ...] = tuple(NODES)) -> PartitionState:
    topic, part = key.rsplit("-", 1)
    return PartitionState(topic, int(part), leader, tuple(NODES), isr)


@pytest.mark.parametrize(("in_force", "registered", "parts", "excused"), [
    (InForce(paused=frozenset({"n2"})), {"n1", "n3"}, {"t0-0": led("t0-0", "n1")},
     {"broker n2": "paused"}),
    (InForce(grudge=g.complete_grudge([["n3"], ["n1", "n2"]])), {"n1", "n2"},
     {"t0-0": led("t0-0", "n1")}, {"broker n3": "cut off"}),
    (InForce(killed=frozenset({"n2"})), {"n1", "n3"},
     {"t0-0": led("t0-0", "n1"), "t0-1": led("t0-1", None, ("n2",))},
     {"broker n2": "killed", "leader of t0-1": "no in-sync replica is up (n2 killed)"}),
    (InForce(killed=frozenset({"n1", "n2"})), {"n3"}, {"t0-0": led("t0-0", None)},
     {"broker n1": "killed", "broker n2": "killed",
      "leader of t0-0": "the KRaft quorum has no majority"}),
    (InForce(killed=frozenset({"n2"})), {"n1", "n3"},
     {"t0-0": led("t0-0", None, ())},
     {"broker n2": "killed", "leader of t0-0": "its ISR is empty (KIP-966 keeps the last "
      "in-sync replicas as eligible leaders, which metadata does not show) and n2 killed"}),
], ids=["paused", "cut-off", "isr-killed", "no-quorum", "empty-isr-elr"])
def test_what_a_fault_keeps_away_is_not_waited_for(
    in_force: InForce, registered: set[str], parts: dict[str, PartitionState],
    excused: dict[str, str],
) -> None:
    cluster, _ = fake_cluster(3)
    nem, t = recovery(stuck(parts, registered))
    nem.resolver.in_force.update(lambda _s: in_force)
    out = nem.invoke(cluster, {"f": AWAIT, "value": None})
    assert out == {"value": {"recovered": True, "seconds": 0.0, "polls": 1, "waited-for": [],
                             "not-waited-for": excused}}
    assert t.slept == []


def test_a_leaderless_partition_with_an_in_sync_replica_up_is_waited_for() -> None:
    cluster, _ = fake_cluster(3)
    parts = {"t0-0": led("t0-0", None, ("n2", "n3"))}
    nem, _t = recovery(stuck(parts, {"n1", "n3"}), timeout_s=3)
    nem.resolver.in_force.update(lambda s: s.claim("killed", {"n2"}))
    value = nem.invoke(cluster, {"f": AWAIT, "value": None})["value"]
    assert value["recovered"] is False and value["still-missing"] == ["leader of t0-0"]
    assert value["not-waited-for"] == {"broker n2": "killed"}


def test_a_leaderless_partition_with_an_empty_isr_and_every_replica_up_is_waited_for() -> None:
    """With nothing kept away, an eligible leader replica will return: wait for it."""
    cluster, _ = fake_cluster(3)
    parts = {"t0-0": led("t0-0", None, ())}
    nem, _t = recovery(stuck(parts, {"n1", "n2", "n3"}), timeout_s=3)
    value = nem.invoke(cluster, {"f": AWAIT, "value": None})["value"]
    assert value["recovered"] is False and value["still-missing"] == ["leader of t0-0"]


def test_a_wait_in_the_main_phase_ends_with_it() -> None:
    cluster, _ = fake_cluster(3)
    nem, t = recovery(healing_after(10**9)[0], timeout_s=60)
    value = nem.invoke(cluster, {"f": AWAIT, "value": {"within-s": 4.5}})["value"]
    assert value["recovered"] is False and value["seconds"] == 4.5
    assert value["timeout-s"] == 4.5 and value["cut-short"] is True
    assert sum(t.slept) == 4.5
    assert "cut-short" not in nem.invoke(cluster, {"f": AWAIT, "value": {"within-s": 90}})[
        "value"], "a budget longer than the timeout changes nothing"


def main_phase_end(time_limit: float | None, seed: int) -> tuple[int, list[Op]]:
    """When the heal phase starts (the main phase's end) in a simulated run of 60 s whose
    waits for recovery take 40 s unless their budget is shorter, as ``RecoveryNemesis``
    makes them."""
    pkg = build_package(NemesisOptions(faults=frozenset({"kill", "pause"}), interval=10.0,
                                       seed=seed, time_limit=time_limit))
    plan = run_phases(repeat({"f": "poll", "value": None}), rate=2, time_limit_s=60,
                      nemesis_gen=pkg.generator, final_nemesis=pkg.final_generator)

    def latency(op: Op, _rng: Any) -> int:
        if op["f"] != AWAIT:
            return 10_000_000
        within = (op["value"] or {}).get("within-s", 10**6)
        return int(min(AWAIT_S, within) * S)

    ops = simulate(plan_gen(plan), concurrency=2, seed=seed, latency_fn=latency)
    assert pkg.final_generator is not None
    final = len(pkg.final_generator)
    nem = invokes([op for op in ops if op["process"] == "nemesis"])
    return nem[-final]["time"], nem[:-final]


@pytest.mark.parametrize("seed", range(4))
def test_the_main_phase_does_not_overrun_by_a_recovery_timeout(seed: int) -> None:
    end, main = main_phase_end(60, seed)
    assert end <= 60 * S + 10_000_000, f"the heal phase began at {end / S:.2f} s"
    for op in main:
        if op["f"] == AWAIT:
            assert op["value"]["within-s"] == pytest.approx(60 - op["time"] / S, abs=1e-3)
    unbounded, _ = main_phase_end(None, seed)
    assert unbounded >= end


def test_without_the_bound_a_wait_overruns_the_main_phase() -> None:
    """What the bound is for: some seed lands a 40 s wait across the end of the phase."""
    assert any(main_phase_end(None, seed)[0] > 61 * S for seed in range(4))
