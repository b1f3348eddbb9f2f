"""ClusterSpec: validation, roles, and the JSON round trip stored on containers."""

from __future__ import annotations

import pytest

from cluster.spec import ClusterSpec
from harness.base.errors import UsageError


def test_roles_kraft() -> None:
    spec = ClusterSpec(nodes=5, controllers=3)
    assert spec.roles("n1") == ["broker", "controller"]
    assert spec.roles("n4") == ["broker"]
    assert spec.zookeeper_nodes == []


def test_roles_zookeeper() -> None:
    spec = ClusterSpec(nodes=5, mode="zookeeper")
    assert spec.roles("n3") == ["broker", "zookeeper"]
    assert spec.roles("n5") == ["broker"]
    assert spec.controller_nodes == []


def test_json_round_trip() -> None:
    spec = ClusterSpec(name="x-1", nodes=4, broker_config={"a": "1"}, base_image="img")
    assert ClusterSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nodes": 0},
        {"nodes": 10},
        {"nodes": 3, "controllers": 4},
        {"heap_mb": 64},
        {"name": "bad name"},
        {"mode": "raft"},
    ],
    ids=[
        "zero-nodes",
        "too-many-nodes",
        "more-voters-than-nodes",
        "tiny-heap",
        "bad-name",
        "bad-mode",
    ],
)
def test_invalid_specs_are_usage_errors(kwargs: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        ClusterSpec(**kwargs)  # type: ignore[arg-type]
