"""Render ``server.properties`` for one node from typed settings.

insync owns a small set of cluster-wide defaults (replication of internal
topics, no auto-created topics, no rebalance delay, unclean election off)
and the listener/quorum wiring; the user adds ``--broker-config key=value``
overrides, which win. Defaults whose key the Kafka version does not know
(``transaction.state.log.*`` before 0.11, say) are left out, so one renderer
serves every version in the table; user overrides are never dropped silently:
an unknown one is rejected earlier by ``cluster.config_keys.validate_keys``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cluster.spec import BROKER_PORT, CONTROLLER_PORT, ZK_CLIENT_PORT, ClusterSpec, Mode

DATA_DIR = "/var/lib/kafka/data"
CONFIG_PATH = "/etc/kafka/server.properties"


@dataclass(frozen=True)
class BrokerProperties:
    """The typed content of one node's ``server.properties``."""

    node_id: int
    mode: Mode
    is_controller: bool
    advertised_host: str
    replication_factor: int
    controller_voters: tuple[tuple[int, str], ...] = ()
    zookeeper_connect: str | None = None
    overrides: Mapping[str, str] = field(default_factory=dict)
    data_dir: str = DATA_DIR
    #: A dynamic KRaft quorum (``ClusterSpec.kraft_quorum``): the voters are found
    #: through ``controller.quorum.bootstrap.servers`` and live in the metadata log.
    dynamic_quorum: bool = False


#: insync's ``replica.lag.time.max.ms`` (see ``_defaults``): a random fault is held long
#: enough (``fault_hold_s``) for the ISR to shrink inside it.
REPLICA_LAG_MS = 5000
#: insync's ``controller.socket.timeout.ms`` (see ``_defaults``), also in ``fault_hold_s``.
CONTROLLER_SOCKET_TIMEOUT_MS = 5000
#: insync's ``leader.imbalance.check.interval.seconds`` (see ``_defaults``).
LEADER_REBALANCE_S = 10


#: The broker setting that turns the leader check off (``--leader-check false``).
LEADER_CHECK_SWITCH = "auto.leader.rebalance.enable"


def leader_check_s(overrides: Mapping[str, str]) -> float | None:
    """Seconds between the brokers' preferred-leader checks, None when they are off.

    Each check moves the leadership of every partition whose preferred replica is
    in the ISR back to it: a planned leader move, which acks=1 writes not yet under
    the high watermark do not survive (KAFKA-20554). So a run records it as one of
    its sources of leader moves (test.json's ``cluster.leader_check_s``)."""
    if overrides.get(LEADER_CHECK_SWITCH, "true").strip().lower() == "false":
        return None
    try:
        return float(overrides.get("leader.imbalance.check.interval.seconds",
                                   LEADER_REBALANCE_S))
    except ValueError:  # refused by Kafka at start
        return float(LEADER_REBALANCE_S)


def _seconds(overrides: Mapping[str, str], key: str, default_ms: int) -> float:
    try:
        return float(overrides.get(key, default_ms)) / 1000
    except ValueError:  # refused by Kafka at start; the default is as good a guess here
        return default_ms / 1000


def replica_lag_s(overrides: Mapping[str, str]) -> float:
    """Seconds a follower may lag before it leaves the ISR, with ``overrides`` applied."""
    return _seconds(overrides, "replica.lag.time.max.ms", REPLICA_LAG_MS)


def fault_hold_s(overrides: Mapping[str, str]) -> float:
    """Seconds a random fault is held by default, so acks=all writes resume inside it.

    A follower cut off at the fault's start leaves the ISR within 1.5 replica lags
    (the leader checks every half lag). If the fault also cut the active KRaft
    controller off, the shrink's AlterPartition first goes to that old controller
    and is re-sent to the new one only after ``controller.socket.timeout.ms``. Twice
    the lag plus that timeout leaves writes a few seconds inside the fault.
    """
    return 2 * replica_lag_s(overrides) + _seconds(
        overrides, "controller.socket.timeout.ms", CONTROLLER_SOCKET_TIMEOUT_MS)


def properties_for(
    spec: ClusterSpec,
    node: str,
    address: str,
    *,
    peers: Mapping[str, str] | None = None,
    data_dir: str = DATA_DIR,
) -> BrokerProperties:
    """The settings of ``node`` in ``spec``, advertising ``address`` to clients.

    ``peers`` maps node names to the addresses the nodes reach each other at; a
    name missing from it is used as a host name (Docker's network aliases
    resolve ``n1``; hosts from an SSH inventory may not). ``data_dir`` is where
    the node keeps its log segments (under an SSH host's base directory).
    """
    at = peers or {}
    return BrokerProperties(
        node_id=spec.node_id(node),
        mode=spec.mode,
        is_controller=node in spec.controller_nodes,
        advertised_host=address,
        replication_factor=spec.replication_factor(),
        controller_voters=tuple((spec.node_id(n), at.get(n, n)) for n in spec.controller_nodes),
        zookeeper_connect=",".join(
            f"{at.get(n, n)}:{ZK_CLIENT_PORT}" for n in spec.zookeeper_nodes
        ) or None,
        overrides=dict(spec.broker_config),
        data_dir=data_dir,
        dynamic_quorum=spec.kraft_quorum == "dynamic",
    )


def _defaults(props: BrokerProperties) -> dict[str, str]:
    """Cluster-wide settings chosen for verification runs (overridable)."""
    rf = props.replication_factor
    return {
        "auto.create.topics.enable": "false",
        # The default was false before 1.0: a run's topics were then never deleted, and a
        # catalogue reusing one 0.10.2 cluster kept every earlier run's partitions (each
        # run's DeleteTopics timed out), so later runs shared the brokers with them.
        "delete.topic.enable": "true",
        "default.replication.factor": str(rf),
        "offsets.topic.replication.factor": str(rf),
        "offsets.topic.num.partitions": "6",
        "transaction.state.log.replication.factor": str(rf),
        "transaction.state.log.min.isr": str(min(2, rf)),
        "transaction.state.log.num.partitions": "6",
        "group.initial.rebalance.delay.ms": "0",
        # The default was true before 0.11: say it explicitly so runs compare.
        "unclean.leader.election.enable": "false",
        # Kafka's default (30 s since 2.5; 10 s before) keeps a dead or cut-off
        # follower in the ISR that long, and every acks=all write to its
        # partitions waits for it: a fault shorter than that tests only a stall.
        # 5 s lets the ISR shrink inside a fault, where the loss windows are.
        "replica.lag.time.max.ms": str(REPLICA_LAG_MS),
        # A broker's AlterPartition channel keeps the controller it knew until a request
        # fails: with the active controller cut off (no reset, packets dropped), an ISR
        # shrink waited for this timeout, Kafka's default 30 s, and every acks=all write
        # with it (measured on 4.1.2: writes resumed only at the heal). 5 s, so they
        # resume inside the fault (``fault_hold_s``).
        "controller.socket.timeout.ms": str(CONTROLLER_SOCKET_TIMEOUT_MS),
        # After a broker restarts, the controller moves its partitions' leadership back to
        # it only at this check, every 300 s by Kafka's default: longer than most runs. So
        # one fault left every leader on the nodes it spared, and the next fault taking
        # one of them took every leader of the keys being written (a 3-node 4.1.2 run:
        # the active controller led all of them, was paused, and no send was acknowledged
        # in the 15 s pause). 10 s, so each fault meets the leaders spread again.
        "leader.imbalance.check.interval.seconds": str(LEADER_REBALANCE_S),
        "num.network.threads": "2",
        "num.io.threads": "4",
        "log.dirs": props.data_dir,
    }


#: The keys that said where a broker listens before ``listeners`` (0.9.0, KIP-2); a
#: version whose own key set lacks ``listeners`` is wired with these.
HOST_PORT_KEYS = ("host.name", "port", "advertised.host.name", "advertised.port")


def _wiring(props: BrokerProperties, known_keys: frozenset[str] | None = None
            ) -> dict[str, str]:
    """Identity, listeners and quorum: not overridable, or the cluster breaks."""
    advertised = f"PLAINTEXT://{props.advertised_host}:{BROKER_PORT}"
    if props.mode == "zookeeper":
        wiring = {
            "broker.id": str(props.node_id),
            "zookeeper.connect": props.zookeeper_connect or "",
        }
        if known_keys is not None and "listeners" not in known_keys:
            return {**wiring, **dict(zip(HOST_PORT_KEYS, (
                "0.0.0.0", str(BROKER_PORT), props.advertised_host, str(BROKER_PORT)),
                strict=True))}
        return {**wiring, "listeners": f"PLAINTEXT://0.0.0.0:{BROKER_PORT}",
                "advertised.listeners": advertised}
    listeners = [f"PLAINTEXT://0.0.0.0:{BROKER_PORT}"]
    if props.is_controller:
        listeners.append(f"CONTROLLER://0.0.0.0:{CONTROLLER_PORT}")
    return {
        "process.roles": "broker,controller" if props.is_controller else "broker",
        "node.id": str(props.node_id),
        **_quorum(props),
        "controller.listener.names": "CONTROLLER",
        "listeners": ",".join(listeners),
        "advertised.listeners": _advertised(props, advertised),
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    }


def controller_endpoints(props: BrokerProperties) -> str:
    """``host:port`` of each controller, at the address the nodes reach it at: where a node
    of a dynamic quorum asks for the voter set, and where the quorum tool sends its
    requests (``cluster.admin_tools.quorum_args``)."""
    return ",".join(f"{host}:{CONTROLLER_PORT}" for _, host in props.controller_voters)


def _quorum(props: BrokerProperties) -> dict[str, str]:
    """Where a node finds the controller quorum: the fixed voter set (static), or the
    controllers to ask for the voter set the metadata log holds (dynamic, KIP-853)."""
    if props.dynamic_quorum:
        return {"controller.quorum.bootstrap.servers": controller_endpoints(props)}
    return {"controller.quorum.voters": ",".join(
        f"{i}@{host}:{CONTROLLER_PORT}" for i, host in props.controller_voters)}


def _advertised(props: BrokerProperties, broker: str) -> str:
    """``advertised.listeners``: a controller of a dynamic quorum advertises its
    controller endpoint too, at the address the other nodes reach it at, since that
    endpoint is what ``add-controller`` registers in the voter set."""
    mine = dict(props.controller_voters).get(props.node_id)
    if not (props.dynamic_quorum and props.is_controller and mine is not None):
        return broker
    return f"{broker},CONTROLLER://{mine}:{CONTROLLER_PORT}"


def initial_controllers(props: BrokerProperties, directories: Mapping[int, str]) -> str:
    """``kafka-storage format --initial-controllers``: ``id@host:port:directory`` of each
    voter, the same text on every node; ``directories`` maps each voter's id to the
    directory id its metadata log dir is formatted with."""
    return ",".join(f"{i}@{host}:{CONTROLLER_PORT}:{directories[i]}"
                    for i, host in props.controller_voters)


#: Keys insync sets itself; overriding them would break the cluster's wiring.
def reserved_keys(mode: Mode) -> frozenset[str]:
    probes = [BrokerProperties(node_id=1, mode=mode, is_controller=True, advertised_host="x",
                               replication_factor=1, dynamic_quorum=dynamic)
              for dynamic in (False, True)]
    wired = frozenset(k for probe in probes for k in _wiring(probe))
    return wired | (frozenset(HOST_PORT_KEYS) if mode == "zookeeper" else frozenset())


def render(props: BrokerProperties, known_keys: frozenset[str] | None = None) -> str:
    """The ``server.properties`` text, keys sorted, overrides applied last."""
    settings = {k: v for k, v in _defaults(props).items() if known_keys is None or k in known_keys}
    settings.update(props.overrides)
    settings.update(_wiring(props, known_keys))
    lines = [f"# written by insync for node {props.node_id} ({props.mode})"]
    lines += [f"{key}={value}" for key, value in sorted(settings.items())]
    return "\n".join(lines) + "\n"


def parse_overrides(items: list[str], mode: Mode) -> dict[str, str]:
    """Parse ``key=value`` items from the command line; reject reserved keys."""
    from harness.base.errors import UsageError

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--broker-config takes key=value, got {item!r}")
        if key in reserved_keys(mode):
            raise UsageError(
                f"--broker-config {key} is set by insync (listeners, ids and quorum wiring)",
                hint="choose another key; the wiring follows --nodes, --mode and --controllers",
            )
        out[key] = value.strip()
    return out


#: ``zookeeper.session.timeout.ms`` by default: 6 s until 2.5, 18 s since (KIP-537).
ZK_SESSION_DEFAULT_MS = {(0,): 6000, (2, 5): 18000}
#: ZooKeeper expires sessions in buckets of its tick (insync's ``tickTime`` is 2 s), and
#: a second more lets the controller see the broker's registration go.
ZK_EXPIRY_SLACK_S = 3


def zk_reregister_wait_s(version: tuple[int, ...], overrides: Mapping[str, str]) -> int:
    """How long after a SIGKILL a ZooKeeper-mode broker must wait before it starts again.

    The killed broker's registration (``/brokers/ids/N``, an ephemeral node) lives until
    its session expires. A broker started before that, from 0.11 on, dies at startup
    ("A broker is already registered on the path /brokers/ids/2 ... restarted it faster
    than the zookeeper timeout"), measured on 0.11.0, and on 2.8 ("node already exists and
    owner ... does not match current session"); 0.10.2 waits for the node itself.
    """
    configured = overrides.get("zookeeper.session.timeout.ms")
    if configured is not None and configured.strip().isdigit():
        ms = int(configured)
    else:
        ms = ZK_SESSION_DEFAULT_MS[max(k for k in ZK_SESSION_DEFAULT_MS if version >= k)]
    return -(-ms // 1000) + ZK_EXPIRY_SLACK_S
