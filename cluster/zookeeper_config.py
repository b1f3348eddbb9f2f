"""``zoo.cfg`` for the ZooKeeper ensemble co-located on the first nodes."""

from __future__ import annotations

from cluster.spec import ZK_CLIENT_PORT, ZK_ELECTION_PORT, ZK_PEER_PORT, ClusterSpec

ZK_CONFIG_PATH = "/etc/zookeeper/zoo.cfg"
ZK_DATA_DIR = "/var/lib/zookeeper"
ZK_LOG_DIR = "/var/log/zookeeper"


def render_zoo_cfg(spec: ClusterSpec) -> str:
    servers = [
        f"server.{spec.node_id(n)}={n}:{ZK_PEER_PORT}:{ZK_ELECTION_PORT}"
        for n in spec.zookeeper_nodes
    ]
    lines = [
        "# written by insync",
        "tickTime=2000",
        "initLimit=10",
        "syncLimit=5",
        f"dataDir={ZK_DATA_DIR}",
        f"clientPort={ZK_CLIENT_PORT}",
        "quorumListenOnAllIPs=true",
        "4lw.commands.whitelist=srvr,ruok,stat,mntr",
        "admin.enableServer=false",
        *servers,
    ]
    return "\n".join(lines) + "\n"
