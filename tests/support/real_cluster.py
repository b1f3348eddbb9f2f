"""A real 3-node Docker cluster shared by one module of integration tests.

Built once per module because bringing brokers up costs most of such a test's
time; removed at the end, and the end checks that nothing of it (container or
network) is left behind, as ``insync cluster down`` promises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cluster import provisioner_for
from cluster.docker.containers import labelled_ids
from cluster.spec import ClusterSpec


@contextmanager
def three_nodes(name: str) -> Iterator[str]:
    """Bring up cluster ``name`` (3 nodes, the defaults), yield its name, then remove it."""
    try:
        provisioner_for().up(ClusterSpec(name=name, nodes=3), say=lambda _msg: None)
        yield name
    finally:
        provisioner_for().down(name)
        assert labelled_ids("container", name) == [], "containers left behind"
        assert labelled_ids("network", name) == [], "network left behind"
