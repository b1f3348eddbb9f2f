"""The exactly-once workload's generator by simulation, its version check, and its plan."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.versions import resolve_version
from harness.base.errors import UsageError
from harness.gen import clients, simulate, time_limit
from workloads import WORKLOADS
from workloads.eos.generator import EosGen
from workloads.eos.options import validate
from workloads.eos.shape import GROUP, INPUT_KEYS, OUTPUT_SHIFT, is_producer


def _history(seed: int, concurrency: int, seconds: float) -> list[dict[str, Any]]:
    return simulate(time_limit(seconds, clients(EosGen())), concurrency=concurrency, seed=seed)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), concurrency=st.integers(2, 12))
def test_producers_send_fresh_inputs_and_members_subscribe_poll_and_transform_in_turn(
    seed: int, concurrency: int
) -> None:
    """Half a virtual second is ~500 ops a thread at the simulator's 1 ms latency: every
    member subscribes and then alternates poll and txn hundreds of times, and each
    producer sends hundreds of batches, so the order and freshness checks below see
    as many repetitions as the property can show (the generator keeps no clock)."""
    history = _history(seed, concurrency, seconds=0.5)
    invokes = [op for op in history if op["type"] == "invoke" and op["process"] != "nemesis"]
    assert invokes
    by_process: dict[int, list[str]] = defaultdict(list)
    values: dict[str, list[int]] = defaultdict(list)
    for op in invokes:
        thread = op["process"] % concurrency  # the simulator's processes start at their thread
        if is_producer(thread):
            assert op["f"] == "send" and len({m[1] for m in op["value"]}) == 1
            for _, key, v in op["value"]:
                assert key in INPUT_KEYS
                values[key].append(v)
        else:
            by_process[op["process"]].append(op["f"])
            if op["f"] == "subscribe":
                assert op["group"] == GROUP and op["value"] == list(INPUT_KEYS)
            if op["f"] == "txn":
                assert op["value"] == []  # the client plans it
    for key, sent in values.items():
        assert sent == list(range(len(sent))), key  # fresh values, unique per key
    for fs in by_process.values():
        assert fs[0] == "subscribe"
        assert fs[1:] == (["poll", "txn"] * len(fs))[: len(fs) - 1]
    assert any(by_process.values()) or concurrency < 2


def test_a_run_ends_within_its_time_limit_in_virtual_time() -> None:
    history = _history(1, 6, seconds=3)
    assert max(op["time"] for op in history) < 3.5e9


def test_brokers_before_kip_447_are_refused_in_one_line() -> None:
    with pytest.raises(UsageError) as err:
        validate(None, resolve_version("2.4.1"))
    assert "needs Kafka 2.5.0+" in str(err.value) and "\n" not in str(err.value)
    validate(None, resolve_version("2.5.1"))
    validate(None, resolve_version("4.1.2"))
    assert WORKLOADS["eos"].validate is validate


def test_a_members_transaction_is_planned_from_its_polls() -> None:
    """The plan names one output per input held, the offsets after them, and from."""
    from workloads.eos.client import EosClient

    client = EosClient.__new__(EosClient)
    client.process, client.outputs = 7, 0
    client.pending = {"t0-3": [[4, 10], [5, 11]], "t0-1": [[0, 2]]}
    op = client.plan({"process": 7, "f": "txn", "value": []})
    w = [7 << OUTPUT_SHIFT | n for n in (1, 2, 3)]
    assert op["value"] == [["send", "t1-1", w[0]], ["send", "t1-3", w[1]],
                           ["send", "t1-3", w[2]], ["commit", {"t0-1": 1, "t0-3": 6}]]
    assert op["from"] == [["t1-1", w[0], "t0-1", 2], ["t1-3", w[1], "t0-3", 10],
                          ["t1-3", w[2], "t0-3", 11]]
    client.pending = {}
    assert client.plan({"process": 7, "f": "txn", "value": []})["value"] == []
