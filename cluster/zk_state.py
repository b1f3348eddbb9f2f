"""A partition's leader and ISR as ZooKeeper holds them, read over ZooKeeper's own protocol.

In ZooKeeper mode the partition's state znode
(``/brokers/topics/<topic>/partitions/<n>/state``) is where the leader writes an
ISR change first; the brokers' metadata follows only when the controller tells
them. A 0.8.2 broker's metadata is not told at all (its ISR stayed at what the
last leader election wrote while the state znode shrank and grew back), so what
must see each ISR change reads the znode. This is the smallest client that can:
one session, one ``getData`` or ``getChildren`` (no watches), the request and reply
layouts of ZooKeeper's jute encoding (``ConnectRequest``, ``RequestHeader`` with op 4
or 8, ``ReplyHeader``), which every ZooKeeper from 3.4 on serves. The brokers
registered (``/brokers/ids``) are read the same way where the metadata cannot say:
a 0.8.2 broker's metadata lists no broker while the cluster has no topic.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

GET_DATA = 4
GET_CHILDREN = 8
#: ZooKeeper's error code for a znode that does not exist.
NO_NODE = -101


def state_path(topic: str, partition: int) -> str:
    return f"/brokers/topics/{topic}/partitions/{partition}/state"


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _read_frame(sock: socket.socket) -> bytes:
    head = _read_exactly(sock, 4)
    return _read_exactly(sock, struct.unpack(">i", head)[0])


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("ZooKeeper closed the connection")
        out += chunk
    return out


def connect_request(timeout_ms: int = 10_000) -> bytes:
    """protocolVersion, lastZxidSeen, timeOut, sessionId, passwd (16 zero bytes)."""
    return struct.pack(">iqiqi", 0, 0, timeout_ms, 0, 16) + b"\0" * 16


def get_data_request(path: str, xid: int = 1, op: int = GET_DATA) -> bytes:
    """``getData`` (or, with ``op``, ``getChildren``) of ``path``, without a watch."""
    raw = path.encode()
    return struct.pack(">ii", xid, op) + struct.pack(">i", len(raw)) + raw + b"\0"


def _found(reply: bytes, call: str) -> bool:
    """Whether the reply's header says the znode exists (``NO_NODE``: it does not);
    ``ConnectionError`` for any other error code."""
    err: int = struct.unpack_from(">iqi", reply, 0)[2]
    if err not in (0, NO_NODE):
        raise ConnectionError(f"ZooKeeper answered {call} with error {err}")
    return err == 0


def parse_get_children(reply: bytes) -> list[str] | None:
    """The children's names from a ``getChildren`` reply; None if the znode does not exist."""
    if not _found(reply, "getChildren"):
        return None
    count = struct.unpack_from(">i", reply, 16)[0]
    at, out = 20, []
    for _ in range(max(count, 0)):
        length = struct.unpack_from(">i", reply, at)[0]
        out.append(reply[at + 4:at + 4 + length].decode())
        at += 4 + length
    return out


def parse_get_data(reply: bytes) -> bytes | None:
    """The znode's data from a ``getData`` reply; None if the znode does not exist."""
    if not _found(reply, "getData"):
        return None
    length = struct.unpack_from(">i", reply, 16)[0]
    return b"" if length < 0 else reply[20:20 + length]


def _ask(address: str, request: bytes, timeout_s: float) -> bytes:
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=timeout_s) as sock:
        sock.sendall(_frame(connect_request()))
        _read_frame(sock)  # ConnectResponse: the session, which we do not reuse
        sock.sendall(_frame(request))
        return _read_frame(sock)


def get_data(address: str, path: str, timeout_s: float = 3.0) -> bytes | None:
    """The data of znode ``path`` on the ZooKeeper server at ``host:port``."""
    return parse_get_data(_ask(address, get_data_request(path), timeout_s))


def _first_answer(zookeeper: str, ask: Any) -> Any:
    last: Exception | None = None
    for address in zookeeper.split(","):
        try:
            return ask(address.strip())
        except (OSError, ConnectionError, struct.error) as err:
            last = err
    raise ConnectionError(f"no ZooKeeper server of {zookeeper} answered: {last}")


def registered_ids(zookeeper: str, timeout_s: float = 3.0) -> list[int]:
    """The ids of the brokers registered in ZooKeeper (``/brokers/ids``)."""
    names = _first_answer(zookeeper, lambda a: parse_get_children(
        _ask(a, get_data_request("/brokers/ids", op=GET_CHILDREN), timeout_s)))
    return sorted(int(n) for n in names or [])


def controller_id(zookeeper: str, timeout_s: float = 3.0) -> int | None:
    """The broker id ZooKeeper's ``/controller`` names, from the first server of
    ``zookeeper`` that answers; None while no broker is the controller."""
    data = _first_answer(zookeeper, lambda a: get_data(a, "/controller", timeout_s))
    return None if data is None else int(json.loads(data.decode())["brokerid"])


def partition_state(zookeeper: str, topic: str, partition: int,
                    timeout_s: float = 3.0) -> dict[str, Any] | None:
    """``{"leader": 2, "isr": [2, 3, 1], ...}`` from the first server of ``zookeeper``
    (a connect string) that answers; None if the partition has no state yet."""
    data = _first_answer(zookeeper, lambda a: get_data(a, state_path(topic, partition),
                                                        timeout_s))
    return None if data is None else dict(json.loads(data.decode()))
