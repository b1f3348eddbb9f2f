"""The small cluster edit the clock nemesis needs: brokers under libfaketime on request."""

from __future__ import annotations

from fakes import fake_cluster

from cluster.kafka_node import FAKETIME_CONTROL, FAKETIME_LIB
from cluster.spec import ClusterSpec


def test_faketime_off_by_default_and_survives_the_spec_label() -> None:
    assert ClusterSpec().faketime is False
    spec = ClusterSpec(name="x", faketime=True)
    assert ClusterSpec.from_json(spec.to_json()) == spec


def test_brokers_start_preloaded_with_the_control_file_at_zero_only_when_asked() -> None:
    cluster, fakes = fake_cluster(1, faketime=True)
    node = cluster.nodes["n1"]
    env = node.broker.env
    assert env["LD_PRELOAD"] == FAKETIME_LIB
    assert env["FAKETIME_TIMESTAMP_FILE"] == FAKETIME_CONTROL
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"
    assert env["FAKETIME_FORCE_MONOTONIC_FIX"] == "0"
    fakes["n1"].stat = "Z"
    node.start()
    (start,) = fakes["n1"].scripts  # one command: the control file, then the broker
    assert f'ctl="$root"{FAKETIME_CONTROL};' in start
    assert '[ -s "$ctl" ] || echo +0 > "$ctl"' in start
    assert start.index(FAKETIME_CONTROL) < start.index("setsid")
    assert f"LD_PRELOAD={FAKETIME_LIB}" in start and "setsid" in start

    plain, plain_fakes = fake_cluster(1, faketime=False)
    assert "LD_PRELOAD" not in plain.nodes["n1"].broker.env
    plain_fakes["n1"].stat = "Z"
    plain.nodes["n1"].start()
    assert not any(FAKETIME_CONTROL in s or "LD_PRELOAD" in s for s in plain_fakes["n1"].scripts)
