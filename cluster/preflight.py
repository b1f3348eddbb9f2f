"""What can be wrong with a :class:`ClusterSpec`, found without Docker or the network.

A provisioner's ``up`` checks the same things (``cluster.deploy.release_for``),
but only once it is called; a command calls :func:`check` first, before it
makes a run directory, asks Docker about an existing cluster or downloads
anything, so bad input costs nothing and touches nothing. (``ClusterSpec``
itself already refused bad node counts, controllers, heap sizes, names and
reserved broker keys when it was built.)
"""

from __future__ import annotations

from cluster.config_keys import known_broker_keys, validate_keys
from cluster.distribution import distribution_dir, load_distribution
from cluster.kafka_dist import spec_version
from cluster.spec import ClusterSpec
from cluster.versions import KafkaVersion
from harness.base.errors import EnvironmentProblem

__all__ = ["check"]


def check(spec: ClusterSpec) -> KafkaVersion:
    """The spec's Kafka version; ``UsageError`` for a version, mode or key that cannot work.

    Broker config keys are checked against the version's own key list when its
    jars are already cached (reading the list then needs at most a local JVM,
    never Docker or Maven); otherwise ``up`` checks them after the download, still
    before it contacts the engine.
    """
    version = spec_version(spec)
    if not spec.broker_config or spec.kafka_dist is not None:
        return version  # a build's keys are read once its jars are laid out (``up``)
    dist = load_distribution(version, distribution_dir(version))
    if dist is None:
        return version
    try:
        known = known_broker_keys(dist)
    except EnvironmentProblem:
        return version  # no JDK here: `up` reports that, in its place
    validate_keys(spec.broker_config.keys(), known)
    return version
