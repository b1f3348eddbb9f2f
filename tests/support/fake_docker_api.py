"""A fake Docker Engine API on a unix socket, answered by handler functions.

insync reaches Docker only through the Docker SDK, which speaks HTTP to
``DOCKER_HOST``. Pointing ``DOCKER_HOST`` at this server runs the real SDK
code (request building, the hijacked exec stream, archives) against answers a
test states in a few lines:

- ``handler(call)`` answers every request but execs: ``(status, body)``, where a
  body that is not ``bytes`` is sent as JSON;
- ``exec_handler(container, argv, stdin)`` answers an exec: ``(exit, stdout, stderr)``.
  The exec endpoints (create, start with the connection upgraded to Docker's
  multiplexed stream, inspect) are served here, as the engine does: stdin is
  read until the client half-closes, and the exit code is reported
  ``exit_lag`` inspections after the stream ended (the engine's race).

Every request is recorded in ``calls`` as ``"METHOD /path"`` (API version prefix
dropped), and in ``log`` if given, so a test can prove nothing reached an engine.
"""

from __future__ import annotations

import itertools
import json
import re
import socketserver
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

API_VERSION = "1.41"


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # without the /v1.xx prefix
    query: dict[str, list[str]]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


Handler = Callable[[Call], tuple[int, Any]]
ExecHandler = Callable[[str, tuple[str, ...], bytes | None], tuple[int, bytes, bytes]]


def version_only(call: Call) -> tuple[int, Any]:
    """An engine that says its version and refuses everything else."""
    if call.path == "/version":
        return 200, {"Version": "28.2.2", "ApiVersion": API_VERSION}
    return 500, {"message": f"fake engine refuses {call.method} {call.path}"}


@dataclass
class _Exec:
    container: str
    argv: tuple[str, ...]
    stdin: bool
    code: int | None = None
    inspections: int = 0


@dataclass
class FakeDockerApi:
    socket_path: Path
    handler: Handler = version_only
    exec_handler: ExecHandler | None = None
    log: Path | None = None
    exit_lag: int = 0
    calls: list[str] = field(default_factory=list)
    execs: dict[str, _Exec] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        api = self

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        class Conn(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                api._serve(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

        self._server = Server(str(self.socket_path), Conn)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def __enter__(self) -> FakeDockerApi:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- serving ------------------------------------------------------------------
    def _record(self, line: str) -> None:
        with self._lock:
            self.calls.append(line)
            if self.log is not None:
                with self.log.open("a") as fh:
                    fh.write(f"docker {line}\n")

    def _serve(self, conn: BaseHTTPRequestHandler) -> None:
        url = urlsplit(conn.path)
        path = re.sub(r"^/v\d+\.\d+", "", url.path)
        call = Call(conn.command, path, parse_qs(url.query), _body(conn))
        self._record(f"{call.method} {path}")
        found = re.fullmatch(r"/(containers/([^/]+)/exec|exec/([^/]+)/(start|json))", path)
        if found and self.exec_handler is not None:
            if found.group(2):
                self._exec_create(conn, found.group(2), call)
            elif found.group(4) == "start":
                self._exec_start(conn, found.group(3))
            else:
                self._exec_inspect(conn, found.group(3))
            return
        status, body = self.handler(call)
        _reply(conn, status, body)

    def _exec_create(self, conn: BaseHTTPRequestHandler, container: str, call: Call) -> None:
        spec = call.json()
        exec_id = f"exec{next(self._ids)}"
        self.execs[exec_id] = _Exec(container, tuple(spec["Cmd"]), bool(spec.get("AttachStdin")))
        _reply(conn, 201, {"Id": exec_id})

    def _exec_start(self, conn: BaseHTTPRequestHandler, exec_id: str) -> None:
        assert self.exec_handler is not None
        ex = self.execs[exec_id]
        conn.wfile.write(b"HTTP/1.1 101 UPGRADED\r\n"
                         b"Content-Type: application/vnd.docker.multiplexed-stream\r\n"
                         b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
        conn.wfile.flush()
        stdin = conn.rfile.read() if ex.stdin else None  # until the client half-closes
        code, out, err = self.exec_handler(ex.container, ex.argv, stdin)
        for stream, data in ((1, out), (2, err)):
            if data:
                conn.wfile.write(struct.pack(">BxxxL", stream, len(data)) + data)
        conn.wfile.flush()
        ex.code = code
        conn.close_connection = True

    def _exec_inspect(self, conn: BaseHTTPRequestHandler, exec_id: str) -> None:
        ex = self.execs[exec_id]
        ex.inspections += 1
        running = ex.code is None or ex.inspections <= self.exit_lag
        _reply(conn, 200, {"ID": exec_id, "Running": running,
                           "ExitCode": None if running else ex.code})


def _body(conn: BaseHTTPRequestHandler) -> bytes:
    if conn.headers.get("Transfer-Encoding", "").lower() == "chunked":
        data = bytearray()
        while True:
            size = int(conn.rfile.readline().strip() or b"0", 16)
            if size == 0:
                conn.rfile.readline()
                return bytes(data)
            data.extend(conn.rfile.read(size))
            conn.rfile.readline()
    length = int(conn.headers.get("Content-Length") or 0)
    return conn.rfile.read(length) if length else b""


def _reply(conn: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.send_response(status)
    kind = "application/x-tar" if isinstance(body, bytes) else "application/json"
    conn.send_header("Content-Type", kind)
    conn.send_header("Content-Length", str(len(data)))
    conn.end_headers()
    conn.wfile.write(data)
