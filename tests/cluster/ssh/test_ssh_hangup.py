"""A host that accepts TCP and hangs up is one line, not paramiko's traceback.

paramiko's transport thread logs a failed handshake with its traceback; with no
handler configured, logging's last resort printed it to stderr ahead of insync's
own one-line error. The check runs in a fresh interpreter, as the CLI does: under
pytest the root logger has handlers, so the last resort would never speak.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.ssh.sshd import new_key, write_key

SCRIPT = """
import sys
from pathlib import Path
from cluster.ssh.inventory import Host
from cluster.ssh.ssh_remote import Connection
from harness.base.errors import InsyncError
port, key, known = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
host = Host("n1", "127.0.0.1", port, "insync", key, "/tmp/insync")
try:
    Connection(host, known).transport()
except InsyncError as err:
    print(err.one_line())
"""


@pytest.fixture
def hangs_up() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    server.close()
    thread.join(5)


def test_a_host_that_hangs_up_is_one_line(hangs_up: int, tmp_path: Path) -> None:
    key = tmp_path / "id"
    write_key(new_key(), key)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(hangs_up), str(key), str(tmp_path / "known_hosts")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.stderr == "", proc.stderr
    (line,) = proc.stdout.splitlines()
    assert line.startswith("n1: cannot connect to 127.0.0.1:") and "banner" in line, line
