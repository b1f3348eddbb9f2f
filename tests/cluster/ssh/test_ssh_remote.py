"""``SSHRemote`` over a real SSH server on 127.0.0.1 (``sshd.py``): exec, files, host keys."""

from __future__ import annotations

import getpass
import threading
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from cluster.remote import RemoteCommandFailed
from cluster.ssh.host_keys import HostKeyRefused, fingerprint
from cluster.ssh.inventory import Host
from cluster.ssh.ssh_remote import Connection, SSHRemote
from harness.base.errors import UsageError
from tests.cluster.ssh.sshd import Sshd, new_key, running, write_key

USER = getpass.getuser()


@pytest.fixture(scope="module")
def client_key() -> paramiko.RSAKey:
    return paramiko.RSAKey.generate(1024)


@pytest.fixture
def sshd(client_key: paramiko.RSAKey) -> Iterator[Sshd]:
    with running(USER, client_key) as server:
        yield server


def _host(tmp_path: Path, key: paramiko.RSAKey, port: int, sudo: bool = False) -> Host:
    key_file = tmp_path / "id_rsa"
    if not key_file.exists():
        write_key(key, key_file)
    return Host("n1", "127.0.0.1", port, USER, key_file, str(tmp_path / "base"), sudo)


def _remote(tmp_path: Path, key: paramiko.RSAKey, server: Sshd, *, accept: bool = True
            ) -> SSHRemote:
    conn = Connection(_host(tmp_path, key, server.port), tmp_path / "known_hosts",
                      accept_new_host_keys=accept)
    return SSHRemote("n1", conn)


def test_exec_returns_output_exit_code_and_reads_stdin(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    remote = _remote(tmp_path, client_key, sshd)
    got = remote.exec(["sh", "-c", 'read x; echo "got $x"; echo oops >&2; exit 3'],
                      input="hello\n", check=False)
    assert (got.exit_code, got.stdout, got.stderr) == (3, "got hello\n", "oops\n")
    with pytest.raises(RemoteCommandFailed, match="exited 3: oops"):
        remote.exec(["sh", "-c", "echo oops >&2; exit 3"])


def test_arguments_reach_the_host_unsplit(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    remote = _remote(tmp_path, client_key, sshd)
    out = remote.exec(["printf", "%s|", "a b", "it's", "$HOME"]).stdout
    assert out == "a b|it's|$HOME|"


def test_a_command_past_its_timeout_is_a_cluster_error(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    remote = _remote(tmp_path, client_key, sshd)
    with pytest.raises(Exception, match="still running after 1s"):
        remote.exec(["sleep", "5"], timeout=1)


def test_one_transport_serves_parallel_commands(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    remote = _remote(tmp_path, client_key, sshd)
    results: dict[int, str] = {}

    def run(i: int) -> None:
        results[i] = remote.exec(["sh", "-c", f"sleep 0.2; echo {i}"]).stdout.strip()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: str(i) for i in range(8)}
    assert sshd.connections == 1


def test_sudo_prefixes_every_command(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    conn = Connection(_host(tmp_path, client_key, sshd.port, sudo=True),
                      tmp_path / "known_hosts", accept_new_host_keys=True)
    SSHRemote("n1", conn).exec(["true"], check=False)
    assert sshd.commands == ["sudo -n -- true"]


def test_upload_and_download_over_sftp(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    remote = _remote(tmp_path, client_key, sshd)
    local = tmp_path / "jar.bin"
    local.write_bytes(bytes(range(256)) * 1000)
    there = tmp_path / "host" / "jar.bin"
    there.parent.mkdir()
    remote.upload(local, str(there))
    assert there.read_bytes() == local.read_bytes()
    back = tmp_path / "back" / "copy.bin"
    remote.download(str(there), back)
    assert back.read_bytes() == local.read_bytes()
    with pytest.raises(Exception, match="cannot copy /nonexistent"):
        remote.download("/nonexistent", tmp_path / "x")


def test_an_unknown_host_key_is_refused_naming_host_fingerprint_and_flag(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    remote = _remote(tmp_path, client_key, sshd, accept=False)
    with pytest.raises(HostKeyRefused) as err:
        remote.exec(["true"])
    line = err.value.one_line()
    assert f"n1 ([127.0.0.1]:{sshd.port}): unknown host key" in line
    assert fingerprint(sshd.host_key) in line
    assert "--accept-new-host-keys" in line
    assert sshd.commands == []
    assert not (tmp_path / "known_hosts").exists()


def test_accepting_writes_the_key_and_later_connections_need_no_flag(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    _remote(tmp_path, client_key, sshd, accept=True).exec(["true"])
    known = (tmp_path / "known_hosts").read_text()
    assert known == (f"[127.0.0.1]:{sshd.port} {sshd.host_key.get_name()} "
                     f"{sshd.host_key.get_base64()}\n")
    assert _remote(tmp_path, client_key, sshd, accept=False).exec(["echo", "ok"]).stdout == "ok\n"


def test_a_changed_host_key_is_refused_even_with_the_accept_flag(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    _remote(tmp_path, client_key, sshd, accept=True).exec(["true"])
    old, sshd.host_key = sshd.host_key, new_key()  # the same address answers with another key
    with pytest.raises(HostKeyRefused) as err:
        _remote(tmp_path, client_key, sshd, accept=True).exec(["echo", "impostor"])
    assert sshd.commands == ["true"]
    line = err.value.one_line()
    assert "host key CHANGED" in line
    assert fingerprint(sshd.host_key) in line and fingerprint(old) in line
    assert "ssh-keygen" in line


def test_a_wrong_client_key_is_an_authentication_error(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    other = tmp_path / "other"
    other.mkdir()
    remote = _remote(other, paramiko.RSAKey.generate(1024), sshd, accept=True)
    with pytest.raises(Exception, match="authentication failed"):
        remote.exec(["true"])


def test_an_unreadable_key_file_is_a_usage_error_naming_it(
        tmp_path: Path, client_key: paramiko.RSAKey, sshd: Sshd) -> None:
    (tmp_path / "id_rsa").write_text("not a key\n")
    remote = _remote(tmp_path, client_key, sshd, accept=True)
    with pytest.raises(UsageError, match=f"cannot use key_file {tmp_path / 'id_rsa'}"):
        remote.exec(["true"])
    assert sshd.connections == 0
