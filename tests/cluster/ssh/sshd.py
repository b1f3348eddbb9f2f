"""A real SSH server on 127.0.0.1, in this process: paramiko's ``ServerInterface``.

It lets ``SSHRemote`` be tested for real (handshake, host-key checks, public-key
auth, exec with stdin and exit codes, SFTP) without Docker or a system sshd.
Commands run as local ``sh -c`` processes of the test user; SFTP serves the
local filesystem. Its host key is generated per server, so a test can start a
second server with another key on the same address to play a re-keyed host.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paramiko
from paramiko.sftp_attr import SFTPAttributes
from paramiko.sftp_handle import SFTPHandle
from paramiko.sftp_server import SFTPServer
from paramiko.sftp_si import SFTPServerInterface


def new_key() -> paramiko.Ed25519Key | paramiko.RSAKey:
    """A fresh key (RSA: paramiko can generate it; 1024 bits keeps tests fast)."""
    return paramiko.RSAKey.generate(1024)


class _Server(paramiko.ServerInterface):
    def __init__(self, user: str, client_key: paramiko.PKey, sshd: Sshd) -> None:
        self.user = user
        self.client_key = client_key
        self.sshd = sshd

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        if username == self.user and key.asbytes() == self.client_key.asbytes():
            return paramiko.AUTH_SUCCESSFUL
        return paramiko.AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return paramiko.OPEN_SUCCEEDED
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED_OPEN_REQUEST_FAILED

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes) -> bool:
        self.sshd.commands.append(command.decode())
        threading.Thread(target=_exec, args=(channel, command.decode()), daemon=True).start()
        return True


def _exec(channel: paramiko.Channel, command: str) -> None:
    proc = subprocess.Popen(["sh", "-c", command], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            while data := channel.recv(65536):
                proc.stdin.write(data)
                proc.stdin.flush()
        with contextlib.suppress(OSError):
            proc.stdin.close()

    def pump(src: Any, send: Any) -> None:
        # The client may hang up first (a refused host key, a killed command): the
        # command's output then has nowhere to go, which is no error of the fake.
        # Reading goes on so that the command never blocks on a full pipe.
        listening = True
        while data := src.read1(65536):
            if listening:
                try:
                    send(data)
                except (EOFError, OSError, paramiko.SSHException):
                    listening = False

    threads = [threading.Thread(target=feed, daemon=True),
               threading.Thread(target=pump, args=(proc.stdout, channel.sendall), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, channel.sendall_stderr),
                                daemon=True)]
    for t in threads:
        t.start()
    code = proc.wait()
    for t in threads[1:]:
        t.join()
    proc.stdout.close()
    proc.stderr.close()
    with contextlib.suppress(EOFError, OSError, paramiko.SSHException):
        channel.send_exit_status(code)
        channel.shutdown_write()
        channel.close()


class _Handle(SFTPHandle):
    def stat(self) -> SFTPAttributes | int:
        f = getattr(self, "readfile", None) or getattr(self, "writefile", None)
        return SFTPAttributes.from_stat(os.fstat(f.fileno()))


class _Files(SFTPServerInterface):
    """The local filesystem, as an SFTP server sees it."""

    def open(self, path: str, flags: int, attr: SFTPAttributes) -> SFTPHandle | int:
        try:
            fd = os.open(path, flags | getattr(os, "O_BINARY", 0), 0o644)
        except OSError as err:
            return SFTPServer.convert_errno(err.errno)
        mode = "wb" if flags & os.O_WRONLY else ("r+b" if flags & os.O_RDWR else "rb")
        if flags & os.O_APPEND:
            mode = "ab"
        handle = _Handle(flags)
        f = os.fdopen(fd, mode)
        handle.readfile = f  # type: ignore[attr-defined]
        handle.writefile = f  # type: ignore[attr-defined]
        return handle

    def stat(self, path: str) -> SFTPAttributes | int:
        try:
            return SFTPAttributes.from_stat(os.stat(path))
        except OSError as err:
            return SFTPServer.convert_errno(err.errno)

    lstat = stat

    def chattr(self, path: str, attr: SFTPAttributes) -> int:
        return paramiko.SFTP_OK

    def canonicalize(self, path: str) -> str:
        return os.path.normpath(path if os.path.isabs(path) else os.path.join("/", path))


@dataclass
class Sshd:
    """A listening server: ``port``, its ``host_key``; every command it ran in ``commands``."""

    user: str
    client_key: paramiko.PKey
    host_key: paramiko.PKey = field(default_factory=new_key)
    port: int = 0
    commands: list[str] = field(default_factory=list)
    connections: int = 0
    _sock: socket.socket | None = None
    _transports: list[paramiko.Transport] = field(default_factory=list)

    def start(self) -> Sshd:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(16)
        self.port = sock.getsockname()[1]
        self._sock = sock
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self) -> None:
        assert self._sock is not None
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            transport = paramiko.Transport(conn)
            transport.add_server_key(self.host_key)
            transport.set_subsystem_handler("sftp", SFTPServer, _Files)
            self._transports.append(transport)
            with contextlib.suppress(Exception):
                transport.start_server(server=_Server(self.user, self.client_key, self))

    def stop(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
        for t in self._transports:
            t.close()


@contextlib.contextmanager
def running(user: str, client_key: paramiko.PKey, port: int = 0,
            host_key: paramiko.PKey | None = None) -> Iterator[Sshd]:
    server = Sshd(user, client_key, host_key or new_key(), port).start()
    try:
        yield server
    finally:
        server.stop()


def write_key(key: paramiko.RSAKey, path: Path) -> Path:
    key.write_private_key_file(str(path))
    return path
