"""Every fault observed on a real 3-node KRaft cluster (one cluster for the module).

Each test applies a fault through the nemesis exactly as a run would, checks
its effect from inside the nodes or through Kafka's own metadata, heals it,
and checks the heal. The cluster starts brokers under libfaketime (clock
faults) with ``replica.lag.time.max.ms=5000`` (a paused follower leaves the
ISR within seconds).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from confluent_kafka.cimpl import NewTopic

from cluster import Cluster, provisioner_for
from cluster.broker_config import DATA_DIR
from cluster.docker.containers import labelled_ids
from cluster.kafka_clients import admin
from cluster.kafka_node import KAFKA_LOG_DIR
from cluster.metadata import PartitionState, active_controller, partitions
from cluster.remote import sh
from cluster.spec import BROKER_PORT, ClusterSpec
from cluster.wait import WaitTimeout, wait_until
from nemesis import ComposedNemesis, NemesisOptions, build_package, residue
from nemesis.clock import faked_now
from nemesis.nodes import Resolver, cluster_facts

pytestmark = pytest.mark.integration

NAME = "nem-it"
TOPIC = "t0"
LAG_MS = 5000


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    spec = ClusterSpec(name=NAME, nodes=3, faketime=True,
                       broker_config={"replica.lag.time.max.ms": str(LAG_MS)})
    try:
        c = provisioner_for().up(spec, fresh=True, say=lambda _msg: None)
        new = NewTopic(TOPIC, num_partitions=3, replication_factor=3,
                       config={"min.insync.replicas": "2"})
        client = admin(c.bootstrap)  # keep a reference: a collected client cancels its futures
        client.create_topics([new])[TOPIC].result(60)
        wait_until(lambda: len(isr_of(c)) == 3 and all(len(v) == 3 for v in isr_of(c).values()),
                   timeout_s=60, message="t0 fully replicated")
        yield c
    finally:
        provisioner_for().down(NAME)
        assert labelled_ids("container", NAME) == [], "containers left behind"


def isr_of(cluster: Cluster) -> dict[str, tuple[str, ...]]:
    return {k: p.isr for k, p in partitions(cluster.bootstrap, [TOPIC]).items()}


def nemesis_for(*faults: str, seed: int = 0) -> ComposedNemesis:
    pkg = build_package(NemesisOptions(faults=frozenset(faults), seed=seed, topics=(TOPIC,)))
    assert isinstance(pkg.nemesis, ComposedNemesis)
    return pkg.nemesis


def connects(cluster: Cluster, src: str, dst: str) -> bool:
    """A TCP connect from inside ``src`` to ``dst``'s broker port, 2 s timeout."""
    addr = cluster.nodes[dst].address
    return sh(cluster.nodes[src].remote, f"nc -z -w 2 {addr} {BROKER_PORT}", check=False).ok


def all_pairs(cluster: Cluster) -> dict[tuple[str, str], bool]:
    return {(a, b): connects(cluster, a, b) for a in cluster.nodes for b in cluster.nodes
            if a != b}


def fully_replicated(cluster: Cluster) -> bool:
    return all(len(isr) == 3 for isr in isr_of(cluster).values())


def test_majority_partition_cuts_tcp_across_sides_only(cluster: Cluster) -> None:
    nem = nemesis_for("partition", seed=3)
    nem.setup(cluster)
    nat_before = sh(cluster.nodes["n1"].remote, "iptables -t nat -S").stdout
    try:
        out = nem.invoke(cluster, {"f": "start-partition", "value": "majority"})
        assert "error" not in out, out
        comps = out["value"]["isolated"]
        side = {n: i for i, c in enumerate(comps) for n in c}
        assert sorted(len(c) for c in comps) == [1, 2]
        for (a, b), ok in all_pairs(cluster).items():
            assert ok == (side[a] == side[b]), f"{a} -> {b}: connected={ok} under {comps}"
        healed = nem.invoke(cluster, {"f": "stop-partition", "value": None})
        assert "error" not in healed
        assert all(all_pairs(cluster).values())
        assert sh(cluster.nodes["n1"].remote, "iptables -t nat -S").stdout == nat_before
    finally:
        nem.teardown(cluster)
    wait_until(lambda: fully_replicated(cluster), timeout_s=60, message="ISR healed")


def test_killing_the_leader_moves_leadership_and_a_restart_rejoins_every_isr(
    cluster: Cluster,
) -> None:
    nem = nemesis_for("kill")
    nem.setup(cluster)
    try:
        leader = partitions(cluster.bootstrap, [TOPIC])[f"{TOPIC}-0"].leader
        assert leader is not None
        out = nem.invoke(cluster, {"f": "kill", "value": f"leader:{TOPIC}-0"})
        assert "error" not in out, out
        assert list(out["value"]["killed"]) == [leader]
        pid = out["value"]["killed"][leader]
        node = cluster.nodes[leader]
        assert node.state() == "stopped"
        assert not sh(node.remote, f"kill -0 {pid}", check=False).ok, "the JVM is gone"
        def moved() -> PartitionState | None:
            """Another leader, and the killed broker out of the ISR: the controller drops
            it when its session times out (a preferred election by the brokers' own
            leader check may move the leader earlier, with the killed one still listed)."""
            p = partitions(cluster.bootstrap, [TOPIC])[f"{TOPIC}-0"]
            return p if p.leader not in (None, leader) and leader not in p.isr else None

        new = wait_until(moved, timeout_s=60,
                         message=f"t0-0 elects another leader and drops {leader} from its ISR")
        assert new.leader != leader and leader not in new.isr
        started = nem.invoke(cluster, {"f": "start", "value": "all"})
        assert list(started["value"]["started"]) == [leader]
        wait_until(lambda: fully_replicated(cluster), timeout_s=120,
                   message=f"{leader} back in every ISR")
    finally:
        nem.teardown(cluster)


def test_a_paused_follower_leaves_the_isr_and_rejoins_after_resume(cluster: Cluster) -> None:
    nem = nemesis_for("pause")
    nem.setup(cluster)
    try:
        out = nem.invoke(cluster, {"f": "pause", "value": f"followers:{TOPIC}-1"})
        assert "error" not in out, out
        paused = sorted(out["value"]["paused"])
        assert len(paused) == 2
        victim = paused[0]
        nem.invoke(cluster, {"f": "resume", "value": paused[1]})  # keep one follower paused
        pid = out["value"]["paused"][victim]
        node = cluster.nodes[victim]
        stat = sh(node.remote, f"ps -o stat= -p {pid}").stdout.strip()
        assert stat.startswith("T"), stat
        t0 = time.monotonic()
        wait_until(lambda: victim not in isr_of(cluster)[f"{TOPIC}-1"], timeout_s=60,
                   message=f"paused {victim} leaves the ISR of t0-1")
        assert time.monotonic() - t0 < LAG_MS / 1000 + 30
        resumed = nem.invoke(cluster, {"f": "resume", "value": "all"})
        assert resumed["value"]["resumed"] == {victim: pid}
        wait_until(lambda: victim in isr_of(cluster)[f"{TOPIC}-1"], timeout_s=60,
                   message=f"{victim} rejoins the ISR")
    finally:
        nem.teardown(cluster)


def quorum_leader_seen_by(cluster: Cluster, node: str) -> int | None:
    """The KRaft leader id ``node`` has persisted in its quorum-state file."""
    text = sh(cluster.nodes[node].remote,
              f"cat {DATA_DIR}/__cluster_metadata-0/quorum-state").stdout
    leader = json.loads(text).get("leaderId", -1)
    return int(leader) if leader >= 0 else None


def test_controller_and_leaders_targets_name_what_the_cluster_says(cluster: Cluster) -> None:
    """Checked against the quorum tool and every node's quorum-state file.

    Isolating the node ``controller`` names makes the other voters elect a new
    leader, which is only so if it really was the active controller.
    """
    controller = Resolver(0, cluster_facts).nodes(cluster, "controller")
    assert controller == [active_controller(cluster)]
    assert [f"n{quorum_leader_seen_by(cluster, n)}" for n in cluster.nodes] == controller * 3
    leaders = sorted({p.leader for p in partitions(cluster.bootstrap, [TOPIC]).values()
                      if p.leader is not None})
    resolver = Resolver(0, lambda c: cluster_facts(c, [TOPIC]))
    assert resolver.nodes(cluster, "leaders:3") == leaders  # t0 has 3 partitions
    (one,) = resolver.nodes(cluster, "leaders")  # the leader of one of them
    assert one in leaders
    nem = nemesis_for("partition")
    nem.setup(cluster)
    try:
        out = nem.invoke(cluster, {"f": "start-partition", "value": "controller"})
        assert out["value"]["isolated"] == [controller, [n for n in cluster.nodes
                                                         if n not in controller]], out
        others = out["value"]["isolated"][1]
        try:
            wait_until(lambda: all(quorum_leader_seen_by(cluster, n) not in (None, int(
                       controller[0][1:])) for n in others), timeout_s=90, backoff_s=1,
                       message="the majority elects a new controller")
        except WaitTimeout as err:
            states = {n: sh(cluster.nodes[n].remote,
                            f"cat {DATA_DIR}/__cluster_metadata-0/quorum-state").stdout
                      for n in cluster.nodes}
            raise AssertionError(f"{err}; quorum states: {states}") from err
    finally:
        nem.teardown(cluster)
    wait_until(lambda: fully_replicated(cluster), timeout_s=90, message="ISR healed")


def test_packet_loss_drops_some_connections_and_delay_is_an_honest_error(
    cluster: Cluster,
) -> None:
    nem = nemesis_for("packet")
    nem.setup(cluster)
    try:
        out = nem.invoke(cluster, {"f": "start-packet", "value": {
            "target": "n2", "loss": 0.5, "rate-kbit": 8192, "delay-ms": 20}})
        assert out["value"]["applied"] == {"n2": {"loss": 0.5, "rate-kbit": 8192.0}}
        assert "netem is unavailable" in out["error"]["n2"]
        tries = [sh(cluster.nodes["n1"].remote,
                    f"nc -z -w 1 {cluster.nodes['n2'].address} {BROKER_PORT}", check=False).ok
                 for _ in range(20)]
        assert 0 < sum(tries) < 20, tries
        assert "tbf" in sh(cluster.nodes["n2"].remote, "tc qdisc show dev eth0").stdout
        nem.invoke(cluster, {"f": "stop-packet", "value": None})
        assert all(sh(cluster.nodes["n1"].remote,
                      f"nc -z -w 1 {cluster.nodes['n2'].address} {BROKER_PORT}",
                      check=False).ok for _ in range(10))
    finally:
        nem.teardown(cluster)


#: libfaketime in the broker sees a control-file change up to 2 s late (nemesis/clock.py).
CONTROL_LAG_S = 2.5

STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+\]")


def log_times_for(cluster: Cluster, node: str, needle: str) -> list[float]:
    """Epoch seconds of the broker's server.log lines mentioning ``needle``."""
    text = sh(cluster.nodes[node].remote,
              f"grep -h -F {needle} {KAFKA_LOG_DIR}/server.log || true").stdout
    return [datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()
            for line in text.splitlines() if (m := STAMP.match(line))]


def make_topic_logged(cluster: Cluster, name: str) -> None:
    """Create a topic replicated on every node: each broker logs lines naming it."""
    client = admin(cluster.bootstrap)  # keep a reference until the future resolves
    client.create_topics([NewTopic(name, num_partitions=1, replication_factor=3)])[name].result(60)


def test_clock_bump_freeze_strobe_and_reset_reach_the_broker(cluster: Cluster) -> None:
    """Runs after the controller test on purpose. Observed with a +600 s bump here:
    after the reset, isolating the controller got no new KRaft leader within 90 s
    (the voters kept leaderEpoch 1). That fits Kafka's ``Timer``, which by design
    never lets its cached time go back, so a voter whose clock was ahead waits up
    to the skew before its fetch timeout fires; not confirmed further."""
    nem = nemesis_for("clock")
    nem.setup(cluster)
    node = cluster.nodes["n1"]

    def real() -> float:
        return float(sh(node.remote, "date +%s.%N").stdout)

    try:
        out = nem.invoke(cluster, {"f": "bump-clock",
                                   "value": {"target": "n1", "delta-ms": 120_000}})
        assert out["value"]["offsets-ms"] == {"n1": 120_000}
        assert abs(faked_now(node.remote) - real() - 120) < 2
        # libfaketime re-reads the control file once the real time's whole seconds are
        # more than FAKETIME_CACHE_DURATION (1) past its last read: up to 2 s late
        time.sleep(CONTROL_LAG_S)
        before = real()
        make_topic_logged(cluster, "clock-bumped")
        stamps = wait_until(lambda: log_times_for(cluster, "n1", "clock-bumped"),
                            timeout_s=30, message="n1 logs the new topic")
        assert all(110 < t - before < 160 for t in stamps), (before, stamps)
        other = wait_until(lambda: log_times_for(cluster, "n2", "clock-bumped"),
                           timeout_s=30, message="n2 logs the new topic")
        assert all(abs(t - before) < 30 for t in other), "n2's clock is untouched"

        frozen = nem.invoke(cluster, {"f": "freeze-clock", "value": {"target": "n1"}})
        stamp = frozen["value"]["frozen"]["n1"]
        first = faked_now(node.remote)
        time.sleep(2)
        assert faked_now(node.remote) == first
        assert datetime.fromtimestamp(first, UTC).strftime("%Y-%m-%d %H:%M:%S") == stamp

        nem.invoke(cluster, {"f": "reset-clock", "value": "all"})
        seen: list[float] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                seen.append(faked_now(node.remote) - real())

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            strobe = nem.invoke(cluster, {"f": "strobe-clock", "value": {
                "target": "n1", "delta-ms": 120_000, "period-ms": 500, "duration-s": 4}})
        finally:
            stop.set()
            sampler.join()
        assert "error" not in strobe and strobe["value"]["flips"]["n1"] >= 4
        assert any(abs(s) < 2 for s in seen) and any(abs(s - 120) < 2 for s in seen), seen

        assert abs(faked_now(node.remote) - real()) < 2, "strobing ends at the old offset"
        time.sleep(CONTROL_LAG_S)
        before = real()
        make_topic_logged(cluster, "clock-reset")
        stamps = wait_until(lambda: log_times_for(cluster, "n1", "clock-reset"),
                            timeout_s=30, message="n1 logs the topic after the reset")
        assert all(abs(t - before) < 30 for t in stamps), (before, stamps)
    finally:
        nem.teardown(cluster)
    assert residue(cluster) == {}


def test_planned_operations_restart_reassign_and_elect_with_kafkas_own_tools(
    cluster: Cluster,
) -> None:
    """restart, reassign, elect-leader and reconfigure as an operator runs them."""
    nem = nemesis_for("restart", "reassign", "elect-leader", "reconfigure")
    nem.setup(cluster)
    key = f"{TOPIC}-0"
    try:
        out = nem.invoke(cluster, {"f": "reconfigure", "value": {
            "topic": TOPIC, "set": {"min.insync.replicas": 1}}})
        assert "error" not in out, out
        assert out["value"]["before"] == {f"topic {TOPIC}": {"min.insync.replicas": "2"}}
        assert out["value"]["after"] == {f"topic {TOPIC}": {"min.insync.replicas": "1"}}
        out = nem.invoke(cluster, {"f": "restore-config", "value": None})
        assert out["value"]["after"] == {f"topic {TOPIC}": {"min.insync.replicas": "2"}}

        leader = partitions(cluster.bootstrap, [TOPIC])[key].leader
        pid = cluster.nodes[str(leader)].pid()
        out = nem.invoke(cluster, {"f": "restart", "value": f"leader:{key}"})
        assert "error" not in out, out
        (step,) = out["value"]["steps"]
        assert step["node"] == leader and step["stopped-pid"] == pid and step["clean"] is True
        assert step["isr-whole"] is True and step["started-pid"] != pid
        assert fully_replicated(cluster)  # the restart waited for the ISR to be whole

        before = partitions(cluster.bootstrap, [TOPIC])[key]
        out = nem.invoke(cluster, {"f": "reassign", "value": {"key": key}})
        assert "error" not in out, (out["error"], out["value"].get("output"))  # the tool's words
        to = out["value"]["moves"][key]["to"]
        assert out["value"]["done"] is True and to[0] != before.replicas[0]
        assert partitions(cluster.bootstrap, [TOPIC])[key].replicas == tuple(to)
        out = nem.invoke(cluster, {"f": "elect-leader", "value": {"type": "preferred",
                                                                  "key": key}})
        assert "error" not in out, out
        assert out["value"]["ran-on"] in cluster.nodes and out["value"]["tool-s"] > 0
        # elected by the tool, or already by the brokers' own leader check (every 10 s)
        assert [key] in (out["value"].get("elected"), out["value"].get("not-needed")), out
        assert wait_until(lambda: partitions(cluster.bootstrap, [TOPIC])[key].leader == to[0],
                          timeout_s=30, message="the new preferred replica leads")
        out = nem.invoke(cluster, {"f": "reassign-back", "value": None})
        assert "error" not in out, (out["error"], out["value"].get("output"))  # the tool's words
        assert out["value"]["restored"] == {key: list(before.replicas)}
        out = nem.invoke(cluster, {"f": "elect-preferred", "value": None})
        assert "error" not in out, out
        assert wait_until(lambda: partitions(cluster.bootstrap, [TOPIC])[key].leader
                          == before.replicas[0], timeout_s=30, message="leader back")
    finally:
        nem.teardown(cluster)
    assert residue(cluster) == {}


def test_teardown_after_every_fault_kind_leaves_no_residue(cluster: Cluster) -> None:
    nem = nemesis_for("partition", "kill", "pause", "clock", "packet")
    nem.setup(cluster)
    try:
        ops: list[dict[str, Any]] = [
            {"f": "start-partition", "value": "one-way"},
            {"f": "start-packet", "value": {"target": "all", "loss": 0.1, "rate-kbit": 4096}},
            {"f": "bump-clock", "value": {"target": "all", "delta-ms": -30_000}},
            {"f": "pause", "value": "n2"},
            {"f": "kill", "value": "n3"},
        ]
        for op in ops:
            out = nem.invoke(cluster, op)
            assert "error" not in out, (op, out)
        found = residue(cluster)
        assert set(found) == {"n1", "n2", "n3"}
        assert any("stopped process" in f for f in found["n2"])
        assert "broker not running" in found["n3"]
    finally:
        nem.teardown(cluster)
    assert residue(cluster) == {}
    nem.teardown(cluster)  # safe twice
    assert residue(cluster) == {}
    wait_until(lambda: fully_replicated(cluster), timeout_s=120, message="all back in the ISR")
