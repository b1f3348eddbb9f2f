"""``DockerProvisioner``: a cluster as one labelled container per node.

``up`` resolves the Kafka build first (``cluster.deploy``), then the engine and
the image, then reuses or replaces the cluster's containers, bind-mounts the
host's Kafka distribution at ``KAFKA_MOUNT`` in each, and hands the nodes to
``cluster.deploy`` to configure, start and wait for. The containers' labels
hold the spec, so ``attach`` and ``down`` need no state file.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from cluster import deploy
from cluster.docker import containers
from cluster.docker.client import inspect_one
from cluster.docker.docker_remote import DockerRemote
from cluster.docker.engine import ensure_engine
from cluster.docker.image import build_image, ensure_image
from cluster.kafka_node import KafkaNode
from cluster.model import Cluster, NotReady, Say, stage
from cluster.spec import ClusterSpec
from cluster.versions import KafkaVersion
from harness.base.errors import ClusterError

LOG = logging.getLogger("insync.cluster")


class DockerProvisioner:
    """Nodes are containers on the local Docker engine (installed and started if need be)."""

    def up(
        self,
        spec: ClusterSpec,
        *,
        fresh: bool = False,
        say: Say = print,
        ready_timeout_s: float = 180.0,
    ) -> Cluster:
        started = time.monotonic()
        with stage(say, f"Kafka {spec.kafka_version} jars ready"):
            release = deploy.release_for(spec)
        with stage(say, "Docker engine ready"):
            ensure_engine()
        with stage(say, "node image ready"):
            image = ensure_image(spec.base_image)

        existing = containers.cluster_nodes(spec.name)
        if existing and not fresh:
            reusable = (
                all(c.running and c.spec == spec for c in existing) and len(existing) == spec.nodes
            )
            if reusable:
                cluster = _cluster(spec, release.version, existing)
                if deploy.reuse(cluster, say=say, ready_timeout_s=ready_timeout_s):
                    return cluster
            say(f"removing leftover cluster {spec.name!r} (its settings or state differ)")
        if existing or containers.cluster_names().count(spec.name):
            removed = containers.remove(spec.name)
            if existing:
                LOG.info("removed %s", removed)

        with stage(say, f"{spec.nodes} node container(s) created"):
            made = _create(spec, release, image)
        try:
            with stage(say, f"Kafka {release.version.version} started on {spec.nodes} node(s)"):
                deploy.start(made, release.known_keys)
            with stage(say, f"cluster {spec.name!r} ready"):
                deploy.wait_until_ready(made, ready_timeout_s=ready_timeout_s)
        except Exception as err:  # created here: the caller decides whether it stays
            raise NotReady(made, err, f"insync cluster down --cluster-name {spec.name}") from err
        LOG.info("cluster %s up in %.1fs", spec.name, time.monotonic() - started)
        return made

    def attach(self, name: str = "insync") -> Cluster:
        found = containers.cluster_nodes(name)
        if not found:
            raise ClusterError(
                f"no cluster named {name!r} is running", hint="start one with `insync cluster up`"
            )
        spec = found[0].spec
        return _cluster(spec, deploy.check_version(spec), found)

    def down(self, name: str | None) -> str:
        return str(containers.remove(name))

    def prepare(self, *, rebuild: bool = False) -> str:
        ensure_engine()
        ref = build_image(rebuild=rebuild).ref
        size = (inspect_one("image", ref) or {}).get("Size", 0)
        return f"image {ref}: {size / 2**20:.0f} MiB"


def _create(spec: ClusterSpec, release: deploy.Release, image: str) -> Cluster:
    """A fresh network and one idle container per node, Kafka mounted, nothing started."""
    t0 = time.monotonic()
    containers.create_network(spec)
    with ThreadPoolExecutor(max_workers=spec.nodes) as pool:
        list(
            pool.map(
                lambda n: containers.create_node(spec, n, image, release.root),
                spec.node_names,
            )
        )
    cluster = _cluster(spec, release.version, containers.cluster_nodes(spec.name))
    LOG.info("containers created in %.1fs", time.monotonic() - t0)
    return cluster


def _cluster(
    spec: ClusterSpec, version: KafkaVersion, found: list[containers.NodeContainer]
) -> Cluster:
    nodes = {
        c.node: KafkaNode(
            c.node,
            c.address,
            DockerRemote(c.node, c.container),
            spec,
            version,
            kafka_home=containers.KAFKA_MOUNT,
            client_source=c.gateway,
        )
        for c in found
    }
    return Cluster(spec, version, nodes)
