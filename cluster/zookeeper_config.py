"""``zoo.cfg`` for the ZooKeeper ensemble co-located on the first nodes."""

from __future__ import annotations

from collections.abc import Mapping

from cluster.spec import ZK_CLIENT_PORT, ZK_ELECTION_PORT, ZK_PEER_PORT, ClusterSpec

ZK_CONFIG_PATH = "/etc/zookeeper/zoo.cfg"
ZK_DATA_DIR = "/var/lib/zookeeper"
ZK_LOG_DIR = "/var/log/zookeeper"


def render_zoo_cfg(
    spec: ClusterSpec, *, peers: Mapping[str, str] | None = None, data_dir: str = ZK_DATA_DIR
) -> str:
    """``zoo.cfg``; ``peers`` and ``data_dir`` as in ``broker_config.properties_for``."""
    at = peers or {}
    servers = [
        f"server.{spec.node_id(n)}={at.get(n, n)}:{ZK_PEER_PORT}:{ZK_ELECTION_PORT}"
        for n in spec.zookeeper_nodes
    ]
    lines = [
        "# written by insync",
        "tickTime=2000",
        "initLimit=10",
        "syncLimit=5",
        f"dataDir={data_dir}",
        f"clientPort={ZK_CLIENT_PORT}",
        # ZooKeeper caps a client's session at 20 ticks (40 s) by default; a scenario may
        # need a broker's session to outlast another broker's start (hw-truncation: 60 s).
        "maxSessionTimeout=120000",
        "quorumListenOnAllIPs=true",
        "4lw.commands.whitelist=srvr,ruok,stat,mntr",
        "admin.enableServer=false",
        *servers,
    ]
    return "\n".join(lines) + "\n"
