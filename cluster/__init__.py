"""insync's clusters: real Kafka nodes, made by a provisioner, reached through a ``Remote``.

The public surface is below (``__all__``, pinned by ``tests/cluster/test_public_surface.py``).
Get a provisioner with :func:`provisioner_for` and call ``up`` / ``attach`` /
``down`` on it; what comes back is a :class:`Cluster` of :class:`KafkaNode`s.
Submodules hold the details (``cluster.metadata`` for leaders and controllers,
``cluster.kafka_clients`` for configured clients, ``cluster.deploy`` for the
Kafka side of ``up``); ``cluster.docker`` is the Docker provisioner's own
business and is imported only through ``provisioner_for``.
"""

from cluster.kafka_node import KafkaNode
from cluster.model import Cluster, Say, each_node
from cluster.provisioner import DEFAULT_PROVISIONER, Placement, Provisioner, provisioner_for
from cluster.remote import ExecResult, Remote, RemoteCommandFailed
from cluster.spec import BROKER_PORT, ClusterSpec
from cluster.versions import KafkaVersion, resolve_version

__all__ = [
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
