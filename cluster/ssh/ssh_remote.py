"""``SSHRemote``: the ``Remote`` of a host, over one paramiko transport kept for the whole run.

A connection's handshake and key exchange cost tens of milliseconds and a
round trip or three; a fault must land within one replica fetch. So each
host gets one :class:`Connection` (one transport), and every ``exec`` opens a
channel on it: paramiko's transport multiplexes channels and is safe to use
from several threads, which is how the deploy and the nemesis act on nodes in
parallel. SFTP (uploads, log downloads) shares the transport too, through
one SFTP client per host guarded by a lock (``SFTPClient`` is not
thread-safe). A transport that died (host rebooted, network blip longer than
the keepalive) is reopened once, on the next use.
"""

from __future__ import annotations

import contextlib
import logging
import select
import shlex
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from cluster.remote import ExecResult, RemoteCommandFailed
from cluster.ssh.host_keys import KnownHostsPolicy, changed, load_known
from cluster.ssh.inventory import Host, read_key
from harness.base.errors import ClusterError, InsyncError, UsageError

# paramiko's transport thread logs a failed handshake (a host that accepts TCP and hangs
# up) with its whole traceback; with no handler of its own that went to stderr through
# logging's last resort, 20-odd lines before insync's one-line error. A NullHandler here
# keeps it out of a plain command's output; -v (a configured root logger) still shows it.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

CONNECT_TIMEOUT_S = 15.0
KEEPALIVE_S = 15


@dataclass
class Connection:
    """One host's SSH transport and SFTP session, opened on first use and kept."""

    host: Host
    known_hosts: Path
    accept_new_host_keys: bool = False
    _client: paramiko.SSHClient | None = field(default=None, init=False, repr=False)
    _sftp: paramiko.SFTPClient | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _sftp_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def transport(self) -> paramiko.Transport:
        """The live transport, connecting (or reconnecting) if need be."""
        with self._lock:
            client = self._client
            transport = client.get_transport() if client is not None else None
            if transport is None or not transport.is_active():
                self._close_locked()
                client = self._connect()
                self._client = client
                transport = client.get_transport()
                assert transport is not None  # connect() succeeded
                transport.set_keepalive(KEEPALIVE_S)
            return transport

    def _connect(self) -> paramiko.SSHClient:
        host = self.host
        pkey = _private_key(host)
        client = paramiko.SSHClient()
        load_known(client, self.known_hosts)
        client.set_missing_host_key_policy(
            KnownHostsPolicy(host.node, self.known_hosts, accept_new=self.accept_new_host_keys)
        )
        try:
            client.connect(
                host.address,
                port=host.port,
                username=host.user,
                pkey=pkey,
                look_for_keys=False,
                allow_agent=False,
                timeout=CONNECT_TIMEOUT_S,
                banner_timeout=CONNECT_TIMEOUT_S,
                auth_timeout=CONNECT_TIMEOUT_S,
            )
        except InsyncError:
            client.close()
            raise
        except paramiko.BadHostKeyException as err:
            client.close()
            name = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
            raise changed(host.node, name, err, self.known_hosts) from None
        except paramiko.AuthenticationException as err:
            client.close()
            raise ClusterError(
                f"{host.node} ({host.user}@{host.address}:{host.port}): authentication "
                f"failed: {err}",
                hint=f"check user and key_file ({host.key_file}) in the inventory",
            ) from None
        except (OSError, paramiko.SSHException, EOFError) as err:
            client.close()
            raise ClusterError(
                f"{host.node}: cannot connect to {host.address}:{host.port}: "
                f"{type(err).__name__}: {err}",
                hint="is sshd running there and the address right?",
            ) from None
        return client

    def sftp(self) -> paramiko.SFTPClient:
        """The host's SFTP session (use under :meth:`sftp_lock`)."""
        transport = self.transport()
        if self._sftp is None or self._sftp.get_channel() is None or (
            self._sftp.get_channel().closed  # type: ignore[union-attr]
        ):
            client = paramiko.SFTPClient.from_transport(transport)
            if client is None:
                raise ClusterError(f"{self.host.node}: the host refused an SFTP session")
            self._sftp = client
        return self._sftp

    @property
    def sftp_lock(self) -> threading.Lock:
        return self._sftp_lock

    def _close_locked(self) -> None:
        if self._sftp is not None:
            with contextlib.suppress(Exception):
                self._sftp.close()
            self._sftp = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def close(self) -> None:
        with self._lock:
            self._close_locked()


def _private_key(host: Host) -> paramiko.PKey:
    """The inventory's ``key_file``, read here so a bad file is named as such."""
    try:
        return read_key(host.key_file)
    except ValueError as err:
        raise UsageError(
            f"{host.node}: cannot use key_file {host.key_file}: {err}",
            hint="key_file must be an unencrypted private key (ssh-keygen -N '')",
        ) from None


def command_line(argv: Sequence[str], *, sudo: bool = False) -> str:
    """The one place an argv becomes shell text: SSH runs a command line in the user's
    shell, so every argument is quoted here, once (``shlex.join``), and nowhere else."""
    command = shlex.join(argv)
    return f"sudo -n -- {command}" if sudo else command  # -n: fail, never ask a password


@dataclass(frozen=True)
class SSHRemote:
    """Reach node ``name`` over its host's shared :class:`Connection`."""

    name: str
    connection: Connection

    def exec(
        self,
        argv: Sequence[str],
        *,
        input: str | None = None,
        timeout: float = 60.0,
        check: bool = True,
    ) -> ExecResult:
        command = command_line(argv, sudo=self.connection.host.sudo)
        try:
            channel = self.connection.transport().open_session(timeout=CONNECT_TIMEOUT_S)
        except paramiko.SSHException as err:
            raise ClusterError(f"on {self.name}: cannot open an SSH channel: {err}") from err
        try:
            code, out, errs = _run(channel, command, input, timeout, self.name)
        finally:
            channel.close()
        result = ExecResult(tuple(argv), code, out, errs)
        if check and not result.ok:
            raise RemoteCommandFailed(self.name, result)
        return result

    def unreachable(self, timeout: float) -> str | None:
        """``true`` run on the host (``cluster.remote.Reachable``): a host that no longer
        answers (down, unplugged, its sshd gone) fails it within ``timeout``."""
        try:
            self.exec(["true"], timeout=timeout, check=True)
        except InsyncError as err:
            why = err.message
        except Exception as err:  # paramiko's own: a transport that died under the call
            why = str(err) or type(err).__name__
        else:
            return None
        return f"its host {self.connection.host.address} does not answer over SSH ({why})"

    def upload(self, local: Path, remote_path: str) -> None:
        with self.connection.sftp_lock:
            try:
                self.connection.sftp().put(str(local), remote_path)
            except OSError as err:
                raise ClusterError(
                    f"on {self.name}: cannot upload {local} to {remote_path}: {err}"
                ) from err

    def download(self, remote_path: str, local: Path) -> None:
        local.parent.mkdir(parents=True, exist_ok=True)
        with self.connection.sftp_lock:
            try:
                self.connection.sftp().get(remote_path, str(local))
            except OSError as err:
                raise ClusterError(
                    f"on {self.name}: cannot copy {remote_path}: {err}"
                ) from err


def _run(channel: paramiko.Channel, command: str, stdin: str | None, timeout: float,
         node: str) -> tuple[int, str, str]:
    """Run ``command`` on ``channel``: feed ``stdin``, read both streams, wait for the status.

    Waits on the channel's file descriptor (readable when either stream has
    data), so a command that answers in a millisecond is read in a millisecond.
    """
    deadline = time.monotonic() + timeout
    channel.settimeout(timeout)
    channel.exec_command(command)
    if stdin is not None:
        channel.sendall(stdin.encode("utf-8"))
    channel.shutdown_write()
    out: list[bytes] = []
    err: list[bytes] = []
    while True:
        busy = False
        if channel.recv_ready():
            out.append(channel.recv(65536))
            busy = True
        if channel.recv_stderr_ready():
            err.append(channel.recv_stderr(65536))
            busy = True
        if busy:
            continue
        if channel.exit_status_ready() and channel.eof_received:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            raise ClusterError(f"on {node}: `{command}` still running after {timeout:.0f}s")
        select.select([channel], [], [], min(left, 0.05))
    code = channel.recv_exit_status()
    decode = b"".join
    return code, decode(out).decode("utf-8", "replace"), decode(err).decode("utf-8", "replace")
