"""A partition's leader and ISR as ZooKeeper holds them, read over ZooKeeper's own protocol.

In ZooKeeper mode the partition's state znode
(``/brokers/topics/<topic>/partitions/<n>/state``) is where the leader writes an
ISR change first; the brokers' metadata follows only when the controller tells
them. A 0.8.2 broker's metadata is not told at all (its ISR stayed at what the
last leader election wrote while the state znode shrank and grew back), so what
must see each ISR change reads the znode. This is the smallest client that can:
one session, one ``getData`` (no watches), the request and reply layouts of
ZooKeeper's jute encoding (``ConnectRequest``, ``RequestHeader`` with op 4,
``ReplyHeader``), which every ZooKeeper from 3.4 on serves.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

GET_DATA = 4
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


def get_data_request(path: str, xid: int = 1) -> bytes:
    raw = path.encode()
    return struct.pack(">ii", xid, GET_DATA) + struct.pack(">i", len(raw)) + raw + b"\0"


def parse_get_data(reply: bytes) -> bytes | None:
    """The znode's data from a ``getData`` reply; None if the znode does not exist."""
    _xid, _zxid, err = struct.unpack_from(">iqi", reply, 0)
    if err == NO_NODE:
        return None
    if err != 0:
        raise ConnectionError(f"ZooKeeper answered getData with error {err}")
    length = struct.unpack_from(">i", reply, 16)[0]
    return b"" if length < 0 else reply[20:20 + length]


def get_data(address: str, path: str, timeout_s: float = 3.0) -> bytes | None:
    """The data of znode ``path`` on the ZooKeeper server at ``host:port``."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=timeout_s) as sock:
        sock.sendall(_frame(connect_request()))
        _read_frame(sock)  # ConnectResponse: the session, which we do not reuse
        sock.sendall(_frame(get_data_request(path)))
        return parse_get_data(_read_frame(sock))


def partition_state(zookeeper: str, topic: str, partition: int,
                    timeout_s: float = 3.0) -> dict[str, Any] | None:
    """``{"leader": 2, "isr": [2, 3, 1], ...}`` from the first server of ``zookeeper``
    (a connect string) that answers; None if the partition has no state yet."""
    last: Exception | None = None
    for address in zookeeper.split(","):
        try:
            data = get_data(address.strip(), state_path(topic, partition), timeout_s)
        except (OSError, ConnectionError, struct.error) as err:
            last = err
            continue
        return None if data is None else dict(json.loads(data.decode()))
    raise ConnectionError(f"no ZooKeeper server of {zookeeper} answered: {last}")
