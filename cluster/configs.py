"""Dynamic topic and broker configs, read and changed over the Admin API of the cluster.

An operator changes ``min.insync.replicas`` or ``unclean.leader.election.enable``
at run time (``kafka-configs --alter``), and the brokers apply it without a
restart. The Admin API calls (DescribeConfigs, IncrementalAlterConfigs) are the
same ones ``kafka-configs`` makes, answered by the brokers under test; they
are made from the harness's admin client, so a change lands in milliseconds,
where a tool's JVM takes seconds to start on a node.

A resource is ``("topic", name)`` or ``("broker", id)``; the broker id ``""`` is
the cluster-wide default every broker takes (``--entity-default``). A value of
``None`` deletes the dynamic setting, so the static one (or Kafka's default)
applies again: that is how a change to a key that had no dynamic value is undone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from cluster.kafka_clients import admin
from harness.base.errors import ClusterError

if TYPE_CHECKING:
    from confluent_kafka.admin._config import ConfigResource

Resource = tuple[str, str]
#: Seconds an Admin API call may take.
TIMEOUT_S = 15.0


def _resource(res: Resource) -> ConfigResource:
    from confluent_kafka.admin._config import ConfigResource
    from confluent_kafka.admin._resource import ResourceType

    kind = {"topic": ResourceType.TOPIC, "broker": ResourceType.BROKER}[res[0]]
    return ConfigResource(kind, res[1])


def describe(bootstrap: str, resources: Iterable[Resource], keys: Iterable[str]
             ) -> dict[Resource, dict[str, str | None]]:
    """The *dynamic* value of each of ``keys`` on each resource (None: none is set, the
    static or default value applies): what an undo must put back."""
    client = admin(bootstrap)  # keep a reference: a collected client cancels its futures
    wanted = list(keys)
    out: dict[Resource, dict[str, str | None]] = {}
    for res in resources:
        try:
            found = client.describe_configs([_resource(res)], request_timeout=TIMEOUT_S)
            entries = next(iter(found.values())).result(TIMEOUT_S)
        except Exception as err:
            raise ClusterError(f"cannot describe the configs of {res[0]} {res[1]!r}: "
                               f"{err}") from err
        out[res] = {k: _dynamic(entries.get(k), res) for k in wanted}
    return out


def _dynamic(entry: object, res: Resource) -> str | None:
    """The entry's value if it is set dynamically on ``res`` itself, else None."""
    from confluent_kafka.admin._config import ConfigSource

    if entry is None:
        return None
    raw = getattr(entry, "source", None)
    source = getattr(raw, "value", raw)  # the enum, or its number
    own = {"topic": (ConfigSource.DYNAMIC_TOPIC_CONFIG.value,),
           "broker": ((ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value,) if res[1] == ""
                      else (ConfigSource.DYNAMIC_BROKER_CONFIG.value,))}[res[0]]
    return str(getattr(entry, "value", None)) if source in own else None


def effective(bootstrap: str, res: Resource, keys: Iterable[str]) -> dict[str, str | None]:
    """The value in force of each of ``keys`` on ``res`` (a topic, or a broker by id),
    whatever its source."""
    client = admin(bootstrap)
    try:
        found = client.describe_configs([_resource(res)], request_timeout=TIMEOUT_S)
        entries = next(iter(found.values())).result(TIMEOUT_S)
    except Exception as err:
        raise ClusterError(f"cannot describe the configs of {res[0]} {res[1]!r}: {err}") from err
    return {k: (None if entries.get(k) is None else str(entries[k].value)) for k in keys}


def alter(bootstrap: str, res: Resource, changes: Mapping[str, str | None]) -> None:
    """Set (or, for None, delete) each dynamic value of ``changes`` on ``res``."""
    from confluent_kafka.admin._config import AlterConfigOpType, ConfigEntry

    resource = _resource(res)
    for key, value in changes.items():
        op = AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET
        resource.add_incremental_config(ConfigEntry(key, value or "",
                                                    incremental_operation=op))
    client = admin(bootstrap)
    try:
        for fut in client.incremental_alter_configs([resource],
                                                    request_timeout=TIMEOUT_S).values():
            fut.result(TIMEOUT_S)
    except Exception as err:
        raise ClusterError(f"cannot alter the configs of {res[0]} {res[1]!r}: {err}") from err
