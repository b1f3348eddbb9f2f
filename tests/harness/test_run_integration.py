"""``insync run`` end to end on ONE real 3-node KRaft cluster, no faults.

Three short runs (assign, subscribe, transactions) must each be valid, record
at least 500 ops, and re-read in the drain every value Kafka acknowledged; the
drain's end-offset reader is checked on the same cluster.
The last test runs ``insync run --teardown`` as a subprocess and interrupts it
with SIGINT mid-run: the history so far must still check (exit 0/1/2, not 3),
node logs must be collected, and nothing labelled with the cluster may remain.
It runs last in this module and reuses (then removes) the shared cluster.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from anomaly_context import anomaly_context
from ctrl_c import with_default_sigint
from real_cluster import three_nodes

from cluster import provisioner_for
from cluster.docker.containers import labelled_ids
from cluster.kafka_clients import admin, producer
from harness.run import RunResult, parse, run
from workloads.queue.ends import QueueEnds
from workloads.queue.topics import Topics

pytestmark = pytest.mark.integration

CLUSTER = "run-it"
INSYNC = str(Path(sys.executable).with_name("insync"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with three_nodes(CLUSTER) as name:
        yield name


def _run(cluster: str, tmp_path: Path, *extra: str) -> RunResult:
    opts = parse(
        [
            "--cluster-name",
            cluster,
            "--time-limit",
            "25",
            "--quiet-time",
            "2",
            "--final-time-limit",
            "30",
            "--seed",
            "11",
            # the brokers share 2 cores with everything else: more clients, not longer runs
            "--concurrency",
            "12",
            "--results-dir",
            str(tmp_path / "results"),
            *extra,
        ]
    )
    return run(opts, say=lambda _msg: None, live=False)


def _history(result: RunResult) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in result.run_dir.history_path.read_bytes().splitlines()]


def _assert_valid_and_fully_drained(result: RunResult) -> list[dict[str, Any]]:
    ops = _history(result)
    if result.verdict["valid"] is not True:
        print(anomaly_context(result.verdict, ops))  # CI keeps the output, not the run
    assert result.verdict["valid"] is True, result.verdict
    assert result.exit_code == 0
    client_ops = [op for op in ops if op["process"] != "nemesis" and op["type"] != "invoke"]
    assert len(client_ops) >= 500, f"only {len(client_ops)} ops"
    # every acknowledged value was read again by the drain (after its first seek-to-beginning)
    drain_start = next(op["index"] for op in ops if op.get("seek") == "beginning")
    acked = {
        (m[1], m[2][1])
        for op in ops
        if op["type"] == "ok" and op["f"] in ("send", "txn")
        for m in op["value"]
        if m[0] == "send"
    }
    reread = {
        (key, rec[1])
        for op in ops
        if op["type"] == "ok" and op["index"] > drain_start
        for m in op["value"]
        if m[0] == "poll"
        for key, recs in m[1].items()
        for rec in recs
    }
    assert acked, "nothing was acknowledged"
    assert acked <= reread, f"{len(acked - reread)} acknowledged values not re-read"
    assert result.summary["drain_complete"] is True
    run_dir = result.run_dir.path
    assert orjson.loads((run_dir / "results.json").read_bytes())["run"]["exit_code"] == 0
    assert orjson.loads((run_dir / "test.json").read_bytes())["cluster"]["kafka_version_exact"]
    assert {p.name for p in (run_dir / "nodes").iterdir()} == {"n1", "n2", "n3"}
    assert (result.run_dir.root / "latest").resolve() == run_dir.resolve()
    return ops


def test_acks_all_with_assign_is_valid(cluster: str, tmp_path: Path) -> None:
    ops = _assert_valid_and_fully_drained(_run(cluster, tmp_path))
    assert any(op["f"] == "assign" for op in ops)


def test_acks_all_with_subscribe_is_valid(cluster: str, tmp_path: Path) -> None:
    ops = _assert_valid_and_fully_drained(_run(cluster, tmp_path, "--sub-via", "subscribe"))
    assert any(op["f"] == "subscribe" and op["type"] == "ok" for op in ops)


def test_transactions_are_valid(cluster: str, tmp_path: Path) -> None:
    ops = _assert_valid_and_fully_drained(
        _run(cluster, tmp_path, "--txn", "--concurrency", "20", "--time-limit", "30")
    )
    assert any(op["f"] == "txn" and op["type"] == "ok" for op in ops)
    aborted = [op for op in ops if op["type"] == "fail" and op.get("error") == "aborted on purpose"]
    assert aborted, "no intentional abort happened"


def test_the_drains_end_offsets_are_where_a_consumer_reads_to(cluster: str) -> None:
    """``QueueEnds`` on real brokers: a key's end is the count of records written to it
    (the offset the next would take), an empty partition's is 0, and a topic that does
    not exist (auto-creation is off) has no end to tell."""
    bootstrap = provisioner_for().attach(cluster).bootstrap
    topics = Topics(lambda: admin(bootstrap), prefix="ends-", partitions=2,
                    replication_factor=3, config={})
    topics.ensure(0)
    sender = producer(bootstrap, acks="all")
    name, partition = topics.real("t0-1")
    for i in range(25):
        sender.produce(name, value=str(i).encode(), partition=partition)
    assert sender.flush(30) == 0
    reader = QueueEnds(bootstrap, topics)
    try:
        assert reader.ends({"t0-0", "t0-1", "t7-0"}) == {"t0-0": 0, "t0-1": 25, "t7-0": None}
    finally:
        reader.close()
        topics.delete_all()


def test_sigint_keeps_the_history_collects_logs_and_tears_down(
    cluster: str, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    proc = subprocess.Popen(
        with_default_sigint([
            INSYNC,
            "run",
            "--cluster-name",
            cluster,
            "--time-limit",
            "60",
            "--seed",
            "3",
            "--results-dir",
            str(results),
            "--teardown",
        ]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 240
        history = None
        while time.monotonic() < deadline:
            found = list(results.glob("*/*/history.jsonl"))
            if found and found[0].stat().st_size > 20_000:
                history = found[0]
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.5)
        assert history is not None, "the run never got going"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 1, 2), (proc.returncode, err.decode()[-2000:])
    assert b"Traceback" not in err
    check = subprocess.run([INSYNC, "check", str(history.parent)], capture_output=True, check=False)
    assert check.returncode in (0, 1, 2), check.stderr
    results_json = orjson.loads((history.parent / "results.json").read_bytes())
    assert results_json["run"]["interrupted"] is True
    for node in ("n1", "n2", "n3"):
        assert list((history.parent / "nodes" / node).iterdir()), f"no logs of {node}"
    assert labelled_ids("container", CLUSTER) == [], "containers left behind"
    assert labelled_ids("network", CLUSTER) == [], "network left behind"
