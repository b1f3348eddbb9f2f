"""``cluster``'s public names, pinned: changing them is a decision, not an accident.

Importing ``cluster`` must stay cheap and provisioner-free: the Docker
provisioner and the Kafka client library load only when something asks for them.
"""

from __future__ import annotations

import subprocess
import sys

import cluster

PUBLIC = [
    "BROKER_PORT",
    "DEFAULT_PROVISIONER",
    "Cluster",
    "ClusterSpec",
    "ExecResult",
    "KafkaNode",
    "KafkaVersion",
    "Placement",
    "Provisioner",
    "Remote",
    "RemoteCommandFailed",
    "Say",
    "each_node",
    "provisioner_for",
    "resolve_version",
]


def test_the_public_names_are_exactly_these() -> None:
    assert cluster.__all__ == PUBLIC
    missing = [name for name in PUBLIC if not hasattr(cluster, name)]
    assert missing == []


def test_importing_cluster_loads_no_provisioner_and_no_kafka_client() -> None:
    probe = (
        "import sys, cluster; "
        "print(sorted(m for m in sys.modules "
        "if m.startswith(('cluster.docker', 'confluent_kafka', 'cluster.deploy'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
