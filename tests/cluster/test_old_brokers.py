"""Brokers before 0.10.1 (0.8.2, 0.9.0): each quirk from the version's data, no Docker.

What the clients are told, how topics are made through ZooKeeper, how a 0.8.2 broker
is wired and where its config keys come from, how the partition state is read from
ZooKeeper, and what is refused in one line before anything starts.
"""

from __future__ import annotations

import json
import struct
import zipfile
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.cimpl import NewTopic

from cluster import kafka_clients
from cluster.broker_config import HOST_PORT_KEYS, properties_for, render, reserved_keys
from cluster.config_keys import class_strings, keys_in_jar
from cluster.spec import ClusterSpec
from cluster.versions import release
from cluster.zk_state import (
    GET_CHILDREN,
    NO_NODE,
    connect_request,
    get_data_request,
    parse_get_children,
    parse_get_data,
)
from cluster.zk_topics import ZooKeeperTopicAdmin, create_args, outcome
from harness.base.errors import UsageError
from nemesis.kinds.burst import validate as burst_problem
from workloads.queue.combinations import validate
from workloads.queue.options import QueueSettings

# --- clients: the version's settings reach every client of the cluster's addresses ---


@pytest.fixture
def old_cluster() -> Any:
    addresses = ["10.9.0.2:9092", "10.9.0.3:9092"]
    kafka_clients.speak_to(addresses, release("0.9.0.1").client_config)
    yield addresses
    kafka_clients.speak_to(addresses, ())


def test_clients_of_a_registered_broker_get_its_version_settings(old_cluster: Any) -> None:
    conf = kafka_clients.base_config("10.9.0.3:9092,10.9.0.2:9092", acks="all")
    assert conf["api.version.request"] == "false"
    assert conf["broker.version.fallback"] == "0.9.0.1"
    assert conf["acks"] == "all"


def test_clients_of_other_brokers_are_as_they_were(old_cluster: Any) -> None:
    conf = kafka_clients.base_config("10.9.1.2:9092")
    assert "api.version.request" not in conf and "broker.version.fallback" not in conf


def test_releases_with_api_versions_register_nothing() -> None:
    kafka_clients.speak_to(["10.9.2.2:9092"], release("0.10.2.2").client_config)
    assert "broker.version.fallback" not in kafka_clients.base_config("10.9.2.2:9092")


def _cluster_of(version: str, host: str) -> Any:
    """A ``Cluster`` of one node at ``host`` on ``version``: making it registers what
    its clients need, as a provisioner's cluster does."""
    from types import SimpleNamespace

    from cluster.model import Cluster

    spec = ClusterSpec(name="q", nodes=1, kafka_version=version, mode="zookeeper")
    node = SimpleNamespace(name="n1", address=host)
    return Cluster(spec, release(version), {"n1": node})  # type: ignore[dict-item]


@pytest.mark.parametrize(("version", "session_ms"), [("0.9.0.1", 30_000), ("2.8.2", None)])
def test_a_consumer_of_0_9_is_held_to_its_brokers_session_ceiling(
        version: str, session_ms: int | None) -> None:
    """0.9.0.1's group coordinator refuses session.timeout.ms above 30 s (its
    group.max.session.timeout.ms), below librdkafka's 45 s default: every consumer of
    its brokers gets at most 30 s, from the version's data; a newer one is left alone."""
    address = _cluster_of(version, f"10.9.{version.replace('.', '')[:3]}.2").bootstrap
    try:
        default = kafka_clients.base_config(address, **{"group.id": "g"})
        asked = kafka_clients.base_config(address, **{"group.id": "g",
                                                      "session.timeout.ms": 45_000})
        lower = kafka_clients.base_config(address, **{"group.id": "g",
                                                      "session.timeout.ms": 10_000})
        producer = kafka_clients.base_config(address, acks="all")
        assert default.get("session.timeout.ms") == session_ms
        assert asked["session.timeout.ms"] == (session_ms or 45_000)
        assert lower["session.timeout.ms"] == 10_000
        assert "session.timeout.ms" not in producer  # not a consumer: nothing to hold
    finally:
        kafka_clients.speak_to([address], ())


def test_the_session_ceiling_is_0_9_s_alone() -> None:
    assert release("0.9.0.1").consumer_limits == (("session.timeout.ms", 30_000),)
    assert release("0.10.0.1").consumer_limits == (("session.timeout.ms", 30_000),)
    for later in ("0.10.1.1", "0.10.2.2", "4.1.2"):
        assert release(later).consumer_limits == (), later
    assert release("0.8.2.2").consumer_limits == ()  # no group coordinator to refuse it


# --- topics through ZooKeeper (kafka-topics --zookeeper) ---


def test_create_args_are_kafka_topics_with_the_topic_s_configs() -> None:
    topic = NewTopic("r-t0", num_partitions=3, replication_factor=3,
                     config={"min.insync.replicas": "1", "unclean.leader.election.enable": "true"})
    assert create_args("10.0.0.2:2181", topic) == [
        "--zookeeper", "10.0.0.2:2181", "--create", "--topic", "r-t0", "--partitions", "3",
        "--replication-factor", "3", "--config", "min.insync.replicas=1",
        "--config", "unclean.leader.election.enable=true"]


@pytest.mark.parametrize(("output", "code", "error"), [
    ('Created topic "r-t0".', 0, None),
    ('Error while executing topic command Topic "r-t0" already exists.', 0,
     KafkaError.TOPIC_ALREADY_EXISTS),
    ("Error while executing topic command replication factor: 3 larger than available "
     "brokers: 2", 0, KafkaError.UNKNOWN),
    ("", 1, KafkaError.UNKNOWN),
])
def test_the_tool_s_words_become_an_admin_client_s_errors(output: str, code: int,
                                                           error: int | None) -> None:
    found = outcome(output, code)
    assert (found.args[0].code() if found is not None else None) == error


def test_the_admin_answers_with_futures_as_an_admin_client_does() -> None:
    ran: list[list[str]] = []

    def tool(args: list[str]) -> tuple[str, int]:
        ran.append(args)
        return ("Topic \"b\" already exists." if "b" in args else "Created topic.", 0)

    client = ZooKeeperTopicAdmin({"bootstrap.servers": "127.0.0.1:1"}, tool, "z:2181")
    futures = client.create_topics([NewTopic("a", num_partitions=1, replication_factor=1),
                                    NewTopic("b", num_partitions=1, replication_factor=1)])
    assert isinstance(futures["a"], Future)
    assert futures["a"].result(10) is None
    with pytest.raises(KafkaException) as err:
        futures["b"].result(10)
    assert err.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS
    assert client.delete_topics(["a"])["a"].result(10) is None
    assert ["--zookeeper", "z:2181", "--delete", "--topic", "a"] in ran


# --- 0.8.2: host.name/port wiring and keys read from KafkaConfig's constants ---


def _props(text: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in text.splitlines() if ln and not ln.startswith("#"))


def test_a_version_without_listeners_is_wired_with_host_and_port() -> None:
    spec = ClusterSpec(nodes=3, mode="zookeeper", kafka_version="0.8.2.2")
    known = frozenset({"log.dirs", "broker.id", "zookeeper.connect", "delete.topic.enable"})
    props = _props(render(properties_for(spec, "n2", "10.0.0.2"), known))
    assert (props["host.name"], props["port"]) == ("0.0.0.0", "9092")
    assert (props["advertised.host.name"], props["advertised.port"]) == ("10.0.0.2", "9092")
    assert "listeners" not in props and "advertised.listeners" not in props
    assert "unclean.leader.election.enable" not in props  # a default it does not know


def test_a_version_with_listeners_is_wired_as_before() -> None:
    spec = ClusterSpec(nodes=3, mode="zookeeper", kafka_version="0.9.0.1")
    known = frozenset({"listeners", "advertised.listeners", "log.dirs"})
    props = _props(render(properties_for(spec, "n2", "10.0.0.2"), known))
    assert props["advertised.listeners"] == "PLAINTEXT://10.0.0.2:9092"
    assert not set(HOST_PORT_KEYS) & set(props)
    assert set(HOST_PORT_KEYS) <= reserved_keys("zookeeper")


def _class_file(strings: list[str]) -> bytes:
    """A class file's head and constant pool: Utf8s, an Integer, and a Long (two slots)."""
    pool = b""
    count = 1
    for s in strings:
        raw = s.encode()
        pool += struct.pack(">BH", 1, len(raw)) + raw
        pool += struct.pack(">Bi", 3, 7)  # Integer
        pool += struct.pack(">Bq", 5, 9)  # Long: the next index is skipped
        count += 4
    return struct.pack(">IHHH", 0xCAFEBABE, 0, 52, count) + pool + b"\0" * 8


def test_class_strings_walks_the_constant_pool() -> None:
    assert class_strings(_class_file(["log.dirs", "props", "x.y"])) == ["log.dirs", "props", "x.y"]


def test_keys_in_the_jar_are_its_key_like_constants(tmp_path: Path) -> None:
    jar = tmp_path / "kafka_2.11-0.8.2.2.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("kafka/server/KafkaConfig.class",
                   _class_file(["replica.lag.max.messages", "brokerId", "Lkafka/X;"]))
        z.writestr("kafka/utils/ZKConfig.class", _class_file(["zookeeper.connect"]))
    assert keys_in_jar(jar) == {"replica.lag.max.messages", "zookeeper.connect"}


# --- the partition state znode over ZooKeeper's protocol ---


def test_zookeeper_requests_are_jute_encoded() -> None:
    assert connect_request(6000)[:16] == struct.pack(">iqi", 0, 0, 6000)
    req = get_data_request("/brokers/topics/t/partitions/0/state", xid=1)
    assert req[:8] == struct.pack(">ii", 1, 4)
    assert req[12:-1] == b"/brokers/topics/t/partitions/0/state" and req[-1:] == b"\0"


def test_a_get_data_reply_gives_the_state_or_none() -> None:
    state = json.dumps({"leader": 2, "isr": [2, 3, 1]}).encode()
    reply = struct.pack(">iqi", 1, 5, 0) + struct.pack(">i", len(state)) + state + b"\0" * 68
    assert json.loads(parse_get_data(reply) or b"") == {"leader": 2, "isr": [2, 3, 1]}
    assert parse_get_data(struct.pack(">iqi", 1, 5, NO_NODE)) is None


def test_a_get_children_reply_gives_the_registered_ids() -> None:
    names = b"".join(struct.pack(">i", len(n)) + n for n in (b"1", b"3"))
    reply = struct.pack(">iqi", 1, 5, 0) + struct.pack(">i", 2) + names
    assert parse_get_children(reply) == ["1", "3"]
    assert get_data_request("/brokers/ids", op=GET_CHILDREN)[4:8] == struct.pack(">i", 8)
    assert parse_get_children(struct.pack(">iqi", 1, 5, NO_NODE)) is None


# --- refused in one line before anything starts ---


def test_subscribe_is_refused_before_0_9_and_allowed_from_it() -> None:
    with pytest.raises(UsageError, match=r"--sub-via subscribe needs Kafka 0\.9\.0\+") as err:
        validate(QueueSettings(sub_via="subscribe"), release("0.8.2.2"))
    assert "\n" not in err.value.one_line() and "--sub-via assign" in err.value.one_line()
    validate(QueueSettings(sub_via="subscribe"), release("0.9.0.1"))
    validate(QueueSettings(), release("0.8.2.2"))


@pytest.mark.parametrize(("f", "value", "ok"), [
    ("start-burst", "t0-0", True), ("start-burst", {"key": "t1-2"}, True),
    ("start-burst", "t0", False), ("start-burst", {"key": "t0-0", "rate": 5}, False),
    ("stop-burst", "all", True), ("stop-burst", None, True), ("stop-burst", "x", False),
])
def test_burst_values(f: str, value: Any, ok: bool) -> None:
    assert (burst_problem(f, value, 3) is None) is ok


def test_the_controller_is_read_from_the_first_zookeeper_server_that_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cluster import zk_state

    asked: list[tuple[str, str]] = []
    answers: dict[str, bytes | None] = {"zk2:2181": b'{"version":1,"brokerid":2}'}

    def get_data(address: str, path: str, timeout_s: float = 3.0) -> bytes | None:
        asked.append((address, path))
        if address not in answers:
            raise ConnectionRefusedError(address)
        return answers[address]

    monkeypatch.setattr(zk_state, "get_data", get_data)
    assert zk_state.controller_id("zk1:2181, zk2:2181") == 2
    assert asked == [("zk1:2181", "/controller"), ("zk2:2181", "/controller")]
    answers["zk2:2181"] = None  # no controller elected right now
    assert zk_state.controller_id("zk2:2181") is None
    with pytest.raises(ConnectionError, match="no ZooKeeper server of zk1:2181 answered"):
        zk_state.controller_id("zk1:2181")


@pytest.mark.parametrize(("f", "refused_on", "runs_on"), [
    ("elect-leader", ("0.8.2.2", "0.9.0.1", "2.3.1"), ("2.4.1", "4.1.2")),
    ("reassign", ("0.8.2.2", "0.9.0.1", "2.5.1"), ("2.6.3", "4.1.2")),
])
def test_an_op_whose_tool_the_version_lacks_is_refused_up_front(
        tmp_path: Path, f: str, refused_on: tuple[str, ...], runs_on: tuple[str, ...]) -> None:
    """0.8.2 and 0.9 ship only the ZooKeeper tools (kafka-preferred-replica-election,
    kafka-reassign-partitions --zookeeper): asked for at random or in a script, the op is
    refused in one line before anything starts, not recorded as a failed op mid-run."""
    from nemesis.settings import NemesisOptions

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"at": 1, "f": f, "value": {"key": "t0-0"}}) + "\n")
    for nopts in (NemesisOptions(faults=frozenset({f})), NemesisOptions(schedule=script)):
        for version in refused_on:
            with pytest.raises(UsageError, match=f"^{f} needs .*Kafka {version} lacks") as err:
                nopts.check_version(release(version))
            assert "\n" not in err.value.one_line()
        for version in runs_on:
            nopts.check_version(release(version))


def test_a_wait_on_the_isr_is_refused_where_the_metadata_keeps_a_stale_isr(
        tmp_path: Path) -> None:
    """0.8.2's brokers' metadata keeps the ISR of the last election; 0.9.0 propagates
    ISR changes (/isr_change_notification). A wait on the leader or on recovery reads
    nothing the metadata keeps stale, and runs on both."""
    from nemesis.settings import NemesisOptions

    isr = tmp_path / "isr.jsonl"
    isr.write_text('{"at": 1, "f": "kill", "value": "n2"}\n'
                   '{"wait": "isr-is-leader", "key": "t0-0", "timeout": 30}\n')
    with pytest.raises(UsageError, match=r"^wait isr-is-leader reads the ISR .* Kafka "
                                         r"0\.8\.2\.2 does not update .*0\.9\.0\+"):
        NemesisOptions(schedule=isr).check_version(release("0.8.2.2"))
    NemesisOptions(schedule=isr).check_version(release("0.9.0.1"))
    other = tmp_path / "other.jsonl"
    other.write_text('{"at": 1, "f": "kill", "value": "leader:t0-0"}\n'
                     '{"wait": "leader-changed", "key": "t0-0", "timeout": 30}\n'
                     '{"wait": "recovered", "timeout": 30}\n')
    NemesisOptions(schedule=other).check_version(release("0.8.2.2"))


def test_the_run_refuses_them_before_its_directory_exists(tmp_path: Path) -> None:
    from harness.run import parse
    from harness.run.setup import preflight

    opts = parse(["--results-dir", str(tmp_path / "r"), "--kafka-version", "0.9.0.1",
                  "--mode", "zookeeper", "--nemesis", "reassign"]).validate().resolved()
    with pytest.raises(UsageError, match=r"^reassign needs"):
        preflight(opts)
    assert not (tmp_path / "r").exists()


def test_topics_through_zookeeper_run_the_one_tool_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-topics runs as every other tool does (``cluster.tool_run.run_tool``: its argv,
    its timeout), on the first node that answers."""
    from types import SimpleNamespace

    from cluster import tool_run
    from cluster.zk_topics import TOPIC_COMMAND, admin_factory

    asked: list[tuple[str, list[str], float]] = []

    def remote(name: str, down: bool) -> Any:
        def run(argv: list[str], *, timeout: float, check: bool, **_: Any) -> Any:
            asked.append((name, list(argv), timeout))
            if down:
                raise ConnectionError(f"{name} is down")
            return SimpleNamespace(exit_code=0, stdout='Created topic "t".', stderr="")
        return SimpleNamespace(exec=run)

    version = release("0.9.0.1")
    nodes = [SimpleNamespace(name=n, version=version, kafka_home="/opt/kafka",
                             remote=remote(n, down=n == "n1")) for n in ("n1", "n2")]
    ran: list[str] = []
    real = tool_run.run_tool

    def counted(node: Any, args: Any, file: Any) -> Any:
        ran.append(node.name)
        return real(node, args, file)

    monkeypatch.setattr("cluster.zk_topics.run_tool", counted)
    client = admin_factory(nodes, "zk:2181")({"bootstrap.servers": "127.0.0.1:1"})  # type: ignore[arg-type]
    new = NewTopic("t", num_partitions=1, replication_factor=1)
    client.create_topics([new])["t"].result(5)
    assert ran == ["n1", "n2"]
    expected = tool_run.jvm.tool_argv(version, TOPIC_COMMAND, create_args("zk:2181", new),
                                      kafka_home="/opt/kafka")
    assert [(n, t) for n, _, t in asked] == [("n1", tool_run.TOOL_TIMEOUT_S),
                                            ("n2", tool_run.TOOL_TIMEOUT_S)]
    assert asked[1][1] == list(expected)
