"""``insync bench nemesis --operations``: which operations are timed for which options, the
figures taken from their completions, the rounds' medians, and options refused before any
cluster is made (the timings themselves only mean something on a real cluster)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

NEMESIS_TESTS = str(Path(__file__).resolve().parents[2] / "nemesis")
if NEMESIS_TESTS not in sys.path:
    sys.path.insert(0, NEMESIS_TESTS)

from fakes import fake_cluster  # noqa: E402

from cluster.metadata import PartitionState  # noqa: E402
from harness import cli  # noqa: E402
from harness.base.faults import kind_of  # noqa: E402
from harness.bench import _operations as operations  # noqa: E402
from harness.bench import nemesis as bench  # noqa: E402
from nemesis import package  # noqa: E402
from nemesis.kinds import load  # noqa: E402
from nemesis.targets import Facts  # noqa: E402

TOPIC = bench.TOPIC

#: Completions as the kinds record them (nemesis/README.md, "Ops and what their
#: completion records"), trimmed to what the bench reads.
RESTART_ALL = {"value": {"target": "all", "nodes": ["n1", "n2", "n3"], "duration-s": 41.2,
                         "steps": [
                             {"node": "n1", "stopped-pid": 412, "stop-s": 2.0, "clean": True,
                              "started-pid": 977, "start-s": 0.3, "isr-whole": True,
                              "isr-s": 6.0},
                             {"node": "n2", "stop-s": 4.0, "start-s": 0.5, "isr-s": 9.0},
                             {"node": "n3", "stop-s": 3.0, "start-s": 0.4, "isr-s": 30.0}]}}
UPGRADE = {"value": {"to": "4.4.0", "version": "4.4.0", "nodes": ["n1", "n2"], "prepare-s": 1.5,
                     "levels-before": {"metadata.version": "4.1-IV1"},
                     "ship": {"n1": {"copied": 120, "bytes": 9, "ship-s": 7.5},
                              "n2": {"copied": 120, "bytes": 9, "ship-s": 9.25}},
                     "steps": [{"node": "n1", "from": "4.1.2", "to": "4.4.0", "stop-s": 5.0,
                                "start-s": 1.0, "isr-s": 20.0, "took-s": 26.0},
                               {"node": "n2", "from": "4.1.2", "to": "4.4.0", "stop-s": 7.0,
                                "start-s": 1.0, "isr-s": 10.0, "took-s": 18.0}],
                     "duration-s": 60.1}}
ELECT = {"value": {"type": "preferred", "keys": "all", "ran-on": "n1", "tool-s": 4.25,
                   "elected": ["bench-t0-1"], "not-needed": [], "failed": {},
                   "leaders-changed": {"bench-t0-1": ["n2", "n1"]}, "attempts": 2,
                   "waited-s": 3.0, "duration-s": 9.0}}
REASSIGN = {"value": {"moves": {"bench-t0-0": {"from": [1, 2, 3], "to": [2, 3, 1]}},
                      "ran-on": "n1", "tool-s": 5.5, "done": False, "reassign-s": 60.0,
                      "duration-s": 66.0},
            "error": "bench-t0-0: the metadata did not show the new replicas in 60 s"}
ADD = {"value": {"added": {"n1": {"ran-on": "n1", "tool-s": 4.0, "attempts": 2},
                           "n2": {"ran-on": "n2", "tool-s": 3.0, "attempts": 1}},
                 "applied-s": 12.0, "duration-s": 13.0}}


def labels(ops: list[operations.Operation]) -> list[str]:
    return [o.name for o in ops]


def test_the_upgrade_pair_needs_a_build_and_the_voter_pair_a_dynamic_quorum() -> None:
    base = ["restart one", "restart all", "elect-leader preferred", "reassign / back",
            "reconfigure / restore"]
    assert labels(operations.plan(TOPIC)) == base
    assert labels(operations.plan(TOPIC, upgrade_to="4.4.0")) == [*base, "upgrade / downgrade"]
    assert labels(operations.plan(TOPIC, dynamic_quorum=True)) == [*base, "voter remove / add"]
    both = operations.plan(TOPIC, upgrade_to="4.4.0", dynamic_quorum=True)
    assert labels(both)[-2:] == ["voter remove / add", "upgrade / downgrade"]
    upgrade, downgrade = (op for _, op in both[-1].steps)
    assert upgrade == {"f": "upgrade", "value": {"kafka-version": "4.4.0", "bump": False}}
    assert downgrade == {"f": "downgrade", "value": {}}  # back to the cluster's own build


def test_every_op_belongs_to_its_operations_kinds_and_is_a_value_the_kind_takes() -> None:
    for operation in operations.plan(TOPIC, upgrade_to="4.4.0", dynamic_quorum=True):
        for _label, op in operation.steps:
            kind = kind_of(op["f"])
            assert kind is not None and kind.name in operation.kinds, op
            validate = getattr(load(kind), "validate", None)
            assert validate is None or validate(op["f"], op["value"], 3) is None, op


@pytest.mark.parametrize(("out", "want"), [
    pytest.param(RESTART_ALL, {"duration-s": 41.2, "steps": 3.0, "stop-s": 3.0,
                               "start-s": 0.4, "isr-s": 9.0}, id="rolling-restart"),
    pytest.param(UPGRADE, {"duration-s": 60.1, "prepare-s": 1.5, "ship-s": 9.25, "steps": 2.0,
                           "stop-s": 6.0, "start-s": 1.0, "isr-s": 15.0}, id="upgrade"),
    pytest.param(ELECT, {"duration-s": 9.0, "tool-s": 4.25, "attempts": 2.0, "waited-s": 3.0},
                 id="elect-leader"),
    pytest.param(REASSIGN, {"duration-s": 66.0, "tool-s": 5.5, "reassign-s": 60.0},
                 id="reassign"),
    pytest.param(ADD, {"duration-s": 13.0, "applied-s": 12.0, "tool-s": 7.0, "attempts": 3.0},
                 id="add-controller"),
    pytest.param({"value": {"refused": "n1 runs 4.4.0"}, "error": "n1 runs 4.4.0"}, {},
                 id="refused"),
    pytest.param({"value": None}, {}, id="no-value"),
])
def test_the_figures_are_read_from_the_completion(out: Mapping[str, Any],
                                                  want: dict[str, float]) -> None:
    assert operations.figures(out["value"]) == want


def test_each_node_of_a_roll_keeps_its_own_step_and_shipping() -> None:
    assert operations.nodes_of(UPGRADE["value"]) == [
        {"node": "n1", "stop-s": 5.0, "start-s": 1.0, "isr-s": 20.0, "took-s": 26.0,
         "ship-s": 7.5, "copied": 120, "bytes": 9},
        {"node": "n2", "stop-s": 7.0, "start-s": 1.0, "isr-s": 10.0, "took-s": 18.0,
         "ship-s": 9.25, "copied": 120, "bytes": 9}]


class Canned:
    """A nemesis answering each op with the next of its completions, ``took`` seconds each
    on a clock it advances (no real time passes)."""

    def __init__(self, answers: dict[str, list[dict[str, Any]]], took: dict[str, list[float]]
                 ) -> None:
        self.answers, self.took = answers, took
        self.now = 0.0
        self.log: list[str] = []

    def clock(self) -> float:
        return self.now

    def invoke(self, _cluster: object, op: Mapping[str, Any]) -> dict[str, Any]:
        self.log.append(op["f"])
        self.now += self.took[op["f"]].pop(0)
        return self.answers[op["f"]].pop(0)


def test_rounds_give_the_median_and_max_total_and_each_figures_median(
        capsys: pytest.CaptureFixture[str]) -> None:
    reassign = next(o for o in operations.plan(TOPIC) if o.name == "reassign / back")
    back = {"value": {"restored": {"bench-t0-0": [1, 2, 3]}, "tool-s": 3.0, "done": True}}
    fake = Canned({"reassign": [REASSIGN, {"value": {"tool-s": 2.0}}, {"value": {"tool-s": 9.0}}],
                   "reassign-back": [back, back, back]},
                  {"reassign": [70.0, 10.0, 20.0], "reassign-back": [4.0, 5.0, 6.0]})
    settled: list[int] = []
    rows = operations.time_operations(fake, None, [reassign], 3,  # type: ignore[arg-type]
                                      lambda: settled.append(len(fake.log)), clock=fake.clock)
    assert fake.log == ["reassign", "reassign-back"] * 3  # each round: the op, then its undo
    assert settled == [0, 1, 2, 3, 4, 5]  # the cluster settles before every op
    first, second = rows
    assert (first["operation"], first["f"]) == ("reassign bench-t0-0", "reassign")
    assert (first["total_s"], first["total_max_s"]) == (20.0, 70.0)
    assert first["figures"] == {"duration-s": 66.0, "reassign-s": 60.0, "tool-s": 5.5}
    assert first["errors"] == [REASSIGN["error"]] and first["notes"] == ["not done"]
    assert [r["total_s"] for r in first["rounds"]] == [70.0, 10.0, 20.0]
    assert (second["total_s"], second["figures"], second["errors"]) == (5.0, {"tool-s": 3.0}, [])
    out = capsys.readouterr().out
    assert "reassign bench-t0-0" in out and "errors:" in out and "reassign-back" in out


def test_a_restart_is_timed_through_the_package_nemesis_on_fake_nodes(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    cluster, fakes = fake_cluster(3)
    nodes = ("n1", "n2", "n3")
    parts = {f"{TOPIC}-0": PartitionState(TOPIC, 0, "n1", nodes, nodes)}
    facts = Facts(partitions=lambda: parts, controller=lambda: "n2", brokers=lambda: set(nodes))
    monkeypatch.setattr(package, "cluster_facts",
                        lambda _cluster, _topics=None, _prefix="": facts)
    restarts = operations.plan(TOPIC)[:2]
    rows = operations.measure_operations(cluster, restarts, TOPIC, 1, lambda: None)
    one, rolling = rows
    assert one["errors"] == [] and one["figures"]["steps"] == 1.0
    assert rolling["errors"] == [] and rolling["figures"]["steps"] == 3.0
    assert [n["node"] for n in rolling["rounds"][0]["nodes"]] == list(nodes)
    assert all(set(n) >= {"stop-s", "start-s", "isr-s"} for n in rolling["rounds"][0]["nodes"])
    assert all(("TERM", 100) in f.signals for f in fakes.values())  # really restarted
    assert "residue after teardown: none" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "said"), [
    (["--operations", "--upgrade-to", "four"], "--upgrade-to: kafka-version must be a release"),
    (["--operations", "--kafka-version", "4.1.2", "--upgrade-to", "3.9.2"],
     "--upgrade-to 3.9.2 is not newer than the cluster's Kafka 4.1.2"),
    (["--upgrade-to", "4.4.0"], "--upgrade-to needs --operations"),
    (["--operations", "--operations-repeat", "0"], "--operations-repeat must be at least 1"),
    (["--kafka-version", "3.8.1", "--kraft-quorum", "dynamic", "--operations"],
     "--kraft-quorum dynamic needs Kafka 3.9 or later"),
    (["--kafka-version", "banana"], "unknown Kafka version 'banana'"),
], ids=["bad-version", "not-newer", "without-operations", "no-rounds", "old-dynamic",
        "bad-kafka-version"])
def test_bad_options_are_one_line_and_exit_64_before_any_cluster(
        argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def no_cluster(*_a: object, **_k: object) -> None:
        raise AssertionError("a cluster was asked for")

    monkeypatch.setattr(bench, "cluster_lock", no_cluster)
    monkeypatch.setattr(bench, "provisioner_for", no_cluster)
    assert cli.main(["bench", "nemesis", "--cluster-name", "opsb-test", *argv]) == 64
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
