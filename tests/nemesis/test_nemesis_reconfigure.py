"""``reconfigure``: a dynamic config change recorded with before and after values, then undone."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest
from fakes import fake_cluster
from hypothesis import given
from hypothesis import strategies as st

from cluster.configs import Resource
from cluster.metadata import PartitionState
from harness.base.faults import fault_kind
from harness.gen import Rng
from nemesis import NemesisOptions
from nemesis.kinds import load
from nemesis.nodes import Resolver
from nemesis.reconfigure import ReconfigureNemesis
from nemesis.targets import Facts

KIND = load(fault_kind("reconfigure"))
STATIC = {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}


class FakeConfigs:
    """Dynamic values per resource over static ones, as a broker keeps them."""

    def __init__(self) -> None:
        self.dynamic: dict[Resource, dict[str, str]] = {}
        self.altered: list[tuple[Resource, dict[str, str | None]]] = []

    def describe(self, bootstrap: str, resources: Iterable[Resource], keys: Iterable[str]
                 ) -> dict[Resource, dict[str, str | None]]:
        ks = list(keys)
        return {r: {k: self.dynamic.get(r, {}).get(k) for k in ks} for r in resources}

    def effective(self, bootstrap: str, res: Resource, keys: Iterable[str]
                  ) -> dict[str, str | None]:
        default = self.dynamic.get(("broker", ""), {})
        return {k: self.dynamic.get(res, {}).get(k, default.get(k, STATIC.get(k)))
                for k in keys}

    def alter(self, bootstrap: str, res: Resource, changes: Mapping[str, str | None]) -> None:
        self.altered.append((res, dict(changes)))
        mine = self.dynamic.setdefault(res, {})
        for k, v in changes.items():
            if v is None:
                mine.pop(k, None)
            else:
                mine[k] = v


def facts(_cluster: object) -> Facts:
    parts = {f"{t}-0": PartitionState(t, 0, "n1", ("n1",), ("n1",)) for t in ("t0", "t1")}
    return Facts(partitions=lambda: parts, controller=lambda: "n1")


def test_a_topic_change_is_recorded_before_and_after_and_undone() -> None:
    cluster, _ = fake_cluster(3)
    configs = FakeConfigs()
    configs.dynamic[("topic", "p.t1")] = {"min.insync.replicas": "3"}
    nem = ReconfigureNemesis(Resolver(1, facts), "p.", configs)  # type: ignore[arg-type]
    out = nem.invoke(cluster, {"f": "reconfigure", "value": {"set": {"min.insync.replicas": 1}}})
    assert "error" not in out
    value = out["value"]
    assert value["resources"] == ["topic p.t0", "topic p.t1"]
    assert value["before"] == {"topic p.t0": {"min.insync.replicas": "2"},
                               "topic p.t1": {"min.insync.replicas": "3"}}
    assert value["after"] == {"topic p.t0": {"min.insync.replicas": "1"},
                              "topic p.t1": {"min.insync.replicas": "1"}}
    assert value["dynamic-before"]["topic p.t0"] == {"min.insync.replicas": None}
    # a second change keeps the first values found, to put back
    nem.invoke(cluster, {"f": "reconfigure", "value": {"topic": "t0",
                                                       "set": {"min.insync.replicas": "2"}}})
    back = nem.invoke(cluster, {"f": "restore-config", "value": None})["value"]
    assert back["restored"] == {"topic p.t0": {"min.insync.replicas": None},
                                "topic p.t1": {"min.insync.replicas": "3"}}
    assert configs.dynamic[("topic", "p.t0")] == {}  # deleted: the static value applies
    assert configs.dynamic[("topic", "p.t1")] == {"min.insync.replicas": "3"}
    again = nem.invoke(cluster, {"f": "restore-config", "value": None})["value"]
    assert again["restored"] == {}


def test_a_broker_default_change_reads_back_on_a_broker_and_booleans_are_kafkas() -> None:
    cluster, _ = fake_cluster(3)
    configs = FakeConfigs()
    nem = ReconfigureNemesis(Resolver(1, facts), configs=configs)  # type: ignore[arg-type]
    out = nem.invoke(cluster, {"f": "reconfigure", "value": {
        "broker": "all", "set": {"unclean.leader.election.enable": True}}})
    value = out["value"]
    assert value["resources"] == ["brokers (default)"]
    assert configs.altered == [(("broker", ""), {"unclean.leader.election.enable": "true"})]
    assert value["before"]["brokers (default)"] == {"unclean.leader.election.enable": "false"}
    assert value["after"]["brokers (default)"] == {"unclean.leader.election.enable": "true"}
    nem.teardown(cluster)
    assert configs.dynamic[("broker", "")] == {}


def test_a_refused_change_is_an_error_and_nothing_to_undo() -> None:
    cluster, _ = fake_cluster(3)
    configs = FakeConfigs()

    def refuse(*_a: object) -> None:
        raise RuntimeError("INVALID_CONFIG")

    configs.alter = refuse  # type: ignore[method-assign, assignment]
    nem = ReconfigureNemesis(Resolver(1, facts), configs=configs)  # type: ignore[arg-type]
    out = nem.invoke(cluster, {"f": "reconfigure", "value": {"topic": "t0",
                                                             "set": {"x.y": "1"}}})
    assert out["error"] == "RuntimeError: INVALID_CONFIG" and nem.undo == {}


@pytest.mark.parametrize(("value", "problem"), [
    ({"set": {}}, "needs set"),
    ({"topic": "t0", "broker": "n1", "set": {"a": 1}}, "not both"),
    ({"broker": "n7", "set": {"a": 1}}, "not among the run's 3 nodes"),
    ({"set": {"Min Insync": 1}}, "not a config key"),
    ({"set": {"min.insync.replicas": 1.5}}, "takes a string"),
    ({"sets": {}}, "takes topic, broker, set"),
    ("min.insync.replicas=1", "a table"),
])
def test_bad_values_are_refused(value: object, problem: str) -> None:
    assert problem in (KIND.validate("reconfigure", value, 3) or "")  # type: ignore[attr-defined]


@given(seed=st.integers(0, 2**64 - 1))
def test_drawn_changes_are_valid_scripts(seed: int) -> None:
    op = KIND.start_op(NemesisOptions(faults=frozenset({"reconfigure"})), Rng(seed))
    assert KIND.validate(op["f"], op["value"], 3) is None  # type: ignore[attr-defined]


class LaggingConfigs(FakeConfigs):
    """Brokers that serve an alteration only at the third read after it."""

    def __init__(self) -> None:
        super().__init__()
        self.reads_since_alter = 0
        self.served: dict[Resource, dict[str, str]] = {}

    def alter(self, bootstrap: str, res: Resource, changes: Mapping[str, str | None]) -> None:
        self.served = {r: dict(v) for r, v in self.dynamic.items()}
        super().alter(bootstrap, res, changes)
        self.reads_since_alter = 0

    def effective(self, bootstrap: str, res: Resource, keys: Iterable[str]
                  ) -> dict[str, str | None]:
        self.reads_since_alter += 1
        if self.reads_since_alter < 3:
            return {k: self.served.get(res, {}).get(k, STATIC.get(k)) for k in keys}
        return super().effective(bootstrap, res, keys)


def test_the_after_values_are_read_back_until_the_brokers_serve_them() -> None:
    cluster, _ = fake_cluster(3)
    configs = LaggingConfigs()
    nem = ReconfigureNemesis(Resolver(1, facts), "p.", configs,  # type: ignore[arg-type]
                             poll_s=0)
    out = nem.invoke(cluster, {"f": "reconfigure",
                               "value": {"topic": "t0", "set": {"min.insync.replicas": 1}}})
    assert out["value"]["after"] == {"topic p.t0": {"min.insync.replicas": "1"}}
    out = nem.invoke(cluster, {"f": "restore-config", "value": None})
    assert out["value"]["after"] == {"topic p.t0": {"min.insync.replicas": "2"}}
    stuck = ReconfigureNemesis(Resolver(1, facts), "p.", LaggingConfigs(),  # type: ignore[arg-type]
                               read_back_s=0, poll_s=0)
    out = stuck.invoke(cluster, {"f": "reconfigure",
                                 "value": {"topic": "t0", "set": {"min.insync.replicas": 1}}})
    assert out["value"]["after"] == {"topic p.t0": {"min.insync.replicas": "2"}}  # as served
