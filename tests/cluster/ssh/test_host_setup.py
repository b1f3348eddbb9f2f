"""What a host lacks (one error for all), and jars copied over SFTP only when their hash changed."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import paramiko
import pytest
from fake_remote import FakeRemote

from cluster.ssh.host_setup import (
    FUSE_NEEDS,
    MANIFEST,
    java_major,
    local_manifest,
    missing,
    sync_jars,
    try_fuse,
)
from cluster.ssh.inventory import Host
from cluster.ssh.provisioner import _refuse_gaps
from cluster.ssh.ssh_remote import Connection, SSHRemote
from harness.base.errors import EnvironmentProblem
from tests.cluster.ssh.sshd import running, write_key


@pytest.mark.parametrize(("line", "major"), [
    ('openjdk version "17.0.9" 2023-10-17', 17),
    ('openjdk version "21" 2023-09-19', 21),
    ('java version "1.8.0_392"', 8),
    ("bash: java: command not found", None),
], ids=["17", "21", "1.8", "garbage"])
def test_java_major(line: str, major: int | None) -> None:
    assert java_major(line) == major


def test_every_gap_of_every_host_is_in_one_error() -> None:
    def probe(out: str) -> FakeRemote:
        return FakeRemote("n", lambda argv, stdin: (0, out, ""))

    gaps = {
        "n1": missing(probe("missing iptables\nmissing libfaketime\n"
                            'java openjdk version "11.0.2"\n')),
        "n2": missing(probe('java openjdk version "17.0.9"\niptables-denied\n')),
        "n3": missing(probe('java openjdk version "17.0.9"\n')),
    }
    assert gaps["n3"] == []
    with pytest.raises(EnvironmentProblem) as err:
        _refuse_gaps(gaps)
    line = err.value.one_line()
    assert "n1: iptables (partition faults), libfaketime" in line
    assert "Java 17 or later (found: openjdk version \"11.0.2\")" in line
    assert "n2: permission to run iptables" in line
    assert "n3" not in line


def test_the_power_loss_filesystem_is_asked_for_only_when_the_cluster_uses_it() -> None:
    scripts: list[str] = []

    def host_without_fuse(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        scripts.append(argv[2])
        out = 'java openjdk version "17.0.9"\n'
        if "pyfuse3" in argv[2]:  # the FUSE probe's three checks, all failing
            out += "missing pyfuse3\nmissing fusermount3\nmissing /dev/fuse\n"
        return 0, out, ""

    remote = FakeRemote("n1", host_without_fuse)
    assert missing(remote) == [] and "pyfuse3" not in scripts[-1]
    gaps = missing(remote, fuse=True)
    assert gaps == list(FUSE_NEEDS.values())
    assert "Debian: python3-pyfuse3" in gaps[0] and "Debian: fuse3" in gaps[1]
    assert "--device /dev/fuse" in gaps[2]


def test_a_host_that_cannot_mount_says_why_in_one_phrase() -> None:
    said = ("  pyfuse3.init(ops, mountpoint, options)\n"
            "RuntimeError: fuse_session_mount failed\n")
    refused = FakeRemote("n1", lambda argv, stdin: (1, said, ""))
    why = try_fuse(refused, "/srv/insync")
    assert why == ("mounting the power-loss filesystem failed: pyfuse3.init(ops, mountpoint, "
                   "options) | RuntimeError: fuse_session_mount failed")
    (call,) = refused.calls
    assert call[-2:] == ("/srv/insync/lib/fuse-trial", "/srv/insync/lib")  # paths as arguments
    assert try_fuse(FakeRemote("n1", lambda argv, stdin: (0, "", "")), "/srv/insync") is None
    silent = FakeRemote("n1", lambda argv, stdin: (1, "", ""))
    assert try_fuse(silent, "/srv/insync") == "mounting the power-loss filesystem failed (exit 1)"


def test_jars_are_copied_cold_then_not_again_then_only_what_changed(tmp_path: Path) -> None:
    key = paramiko.RSAKey.generate(1024)
    dist = tmp_path / "dist"
    (dist / "libs").mkdir(parents=True)
    (dist / "config").mkdir()
    for i in range(3):
        (dist / "libs" / f"j{i}.jar").write_bytes(bytes([i]) * 5000)
    (dist / "config" / "log4j.properties").write_text("x=1\n")
    home = str(tmp_path / "host" / "kafka" / "4.1.2")
    with running(getpass.getuser(), key) as sshd:
        host = Host("n1", "127.0.0.1", sshd.port, getpass.getuser(),
                    write_key(key, tmp_path / "id"), str(tmp_path / "host"))
        remote = SSHRemote("n1", Connection(host, tmp_path / "kh", accept_new_host_keys=True))

        cold = sync_jars(remote, dist, home, local_manifest(dist))
        assert (cold.copied, cold.removed, cold.bytes) == (4, 0, 15004)
        assert (Path(home) / "libs" / "j2.jar").read_bytes() == bytes([2]) * 5000
        assert json.loads((Path(home) / MANIFEST).read_text()) == local_manifest(dist)

        warm = sync_jars(remote, dist, home, local_manifest(dist))
        assert (warm.copied, warm.removed) == (0, 0)

        (dist / "libs" / "j1.jar").write_bytes(b"new")
        (dist / "libs" / "j0.jar").unlink()
        changed = sync_jars(remote, dist, home, local_manifest(dist))
        assert (changed.copied, changed.removed, changed.bytes) == (1, 1, 3)
        assert sorted(p.name for p in (Path(home) / "libs").iterdir()) == ["j1.jar", "j2.jar"]
        assert (Path(home) / "libs" / "j1.jar").read_bytes() == b"new"
        assert sshd.connections == 1
