"""confluent-kafka clients pointed at a cluster, with librdkafka's chatter tamed.

librdkafka logs every refused connection to stderr; during fault injection
that is thousands of lines. Route its logs into Python logging instead, where
``-v`` can show them.

Brokers older than 0.10.0 cannot tell a client their version (no ApiVersions
request), and brokers older than 0.10.1 have no CreateTopics request. A cluster
of such brokers registers its addresses here once (``speak_to``), with the
settings its version needs (``KafkaVersion.client_config``; ceilings on a consumer's
settings, ``KafkaVersion.consumer_limits``) and the admin client
that creates its topics some other way; every client made for a bootstrap naming
one of those addresses then gets them. So the many places that make a client from
a bootstrap string alone (readiness, workloads, metadata) need not know the version.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

LOG = logging.getLogger("insync.librdkafka")

#: ``host:port`` -> what clients of that broker need (see the module's docstring).
_SETTINGS: dict[str, dict[str, Any]] = {}
_ADMINS: dict[str, Callable[[dict[str, Any]], AdminClient]] = {}
_LIMITS: dict[str, dict[str, int]] = {}
_LOCK = threading.Lock()


def _swallow(err: Any) -> None:
    LOG.debug("librdkafka error: %s", err)


def speak_to(addresses: Iterable[str], settings: Iterable[tuple[str, str]],
             admin_factory: Callable[[dict[str, Any]], AdminClient] | None = None,
             limits: Iterable[tuple[str, int]] = ()) -> None:
    """Every client of a bootstrap naming one of ``addresses`` (``host:port``) gets
    ``settings``, every consumer is held at or below ``limits``
    (``KafkaVersion.consumer_limits``), and ``admin`` makes its admin clients with
    ``admin_factory`` (given the client configuration). Nothing is registered for a
    version that needs none of these."""
    conf, caps = dict(settings), dict(limits)
    with _LOCK:
        for address in addresses:
            if conf:
                _SETTINGS[address] = conf
            else:
                _SETTINGS.pop(address, None)
            if caps:
                _LIMITS[address] = caps
            else:
                _LIMITS.pop(address, None)
            if admin_factory is not None:
                _ADMINS[address] = admin_factory
            else:
                _ADMINS.pop(address, None)


def _registered(bootstrap: str) -> str | None:
    with _LOCK:
        for address in bootstrap.split(","):
            if address.strip() in _SETTINGS or address.strip() in _ADMINS \
                    or address.strip() in _LIMITS:
                return address.strip()
    return None


def base_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "logger": LOG,
        "error_cb": _swallow,
        "socket.connection.setup.timeout.ms": 5000,
    }
    address = _registered(bootstrap)
    if address is not None:
        conf.update(_SETTINGS.get(address, {}))
    conf.update(extra)
    if address is not None and "group.id" in conf:  # a consumer: held to the brokers' ceilings
        for key, most in _LIMITS.get(address, {}).items():
            conf[key] = min(int(conf.get(key, most)), most)
    return conf


def admin(bootstrap: str, **extra: Any) -> AdminClient:
    conf = base_config(bootstrap, **extra)
    address = _registered(bootstrap)
    factory = _ADMINS.get(address) if address is not None else None
    return factory(conf) if factory is not None else AdminClient(conf)


def producer(bootstrap: str, **extra: Any) -> Producer:
    return Producer(base_config(bootstrap, **extra))


def consumer(bootstrap: str, **extra: Any) -> Consumer:
    conf = {"group.id": "insync-probe", "enable.auto.commit": False}
    conf.update(extra)
    return Consumer(base_config(bootstrap, **conf))
