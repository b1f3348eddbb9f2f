"""confluent-kafka clients pointed at a cluster, with librdkafka's chatter tamed.

librdkafka logs every refused connection to stderr; during fault injection
that is thousands of lines. Route its logs into Python logging instead, where
``-v`` can show them.
"""

from __future__ import annotations

import logging
from typing import Any

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

LOG = logging.getLogger("insync.librdkafka")


def _swallow(err: Any) -> None:
    LOG.debug("librdkafka error: %s", err)


def base_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "logger": LOG,
        "error_cb": _swallow,
        "socket.connection.setup.timeout.ms": 5000,
    }
    conf.update(extra)
    return conf


def admin(bootstrap: str, **extra: Any) -> AdminClient:
    return AdminClient(base_config(bootstrap, **extra))


def producer(bootstrap: str, **extra: Any) -> Producer:
    return Producer(base_config(bootstrap, **extra))


def consumer(bootstrap: str, **extra: Any) -> Consumer:
    conf = {"group.id": "insync-probe", "enable.auto.commit": False}
    conf.update(extra)
    return Consumer(base_config(bootstrap, **conf))
