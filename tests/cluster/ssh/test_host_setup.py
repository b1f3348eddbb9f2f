"""What a host lacks (one error for all), and jars copied over SFTP only when their hash changed."""

from __future__ import annotations

import getpass
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
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


def _fuse_host(mounts: bool, log: str = "") -> FakeRemote:
    """A host whose lazyfs daemon mounts (``mounts``) or exits at once, writing ``log``."""
    started: list[bool] = []

    def handler(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        text = " ".join(argv)
        if "/proc/mounts && stat" in text:  # is_mounted
            return (0 if mounts and started else 1), "", ""
        if "setsid" in argv:  # the daemon's launch
            started.append(True)
            return 0, "stopped 4242\n", ""
        if "ps -o stat=" in text and "kill -" not in text:  # the daemon's state
            return 0, ("4242 S\n" if mounts else ""), ""
        if "insync-signal" in argv:  # the daemon's kill
            return 0, ("running 4242\n" if started and mounts else "stopped\n"), ""
        if argv[0] == "tail":
            return 0, log, ""
        return 0, "", ""

    return FakeRemote("n1", handler)


def test_a_host_that_cannot_mount_says_why_in_one_phrase() -> None:
    said = ("=== insync: starting lazyfs at 2026-11-29T04:00:00Z\n"
            "  pyfuse3.init(ops, mountpoint, options)\n"
            "RuntimeError: fuse_session_mount failed\n")
    refused = _fuse_host(mounts=False, log=said)
    why = try_fuse(refused, "/srv/insync")
    assert why == ("mounting the power-loss filesystem failed: === insync: starting lazyfs at "
                   "2026-11-29T04:00:00Z | pyfuse3.init(ops, mountpoint, options) | "
                   "RuntimeError: fuse_session_mount failed")
    trial = "/srv/insync/lib/fuse-trial"
    (launch,) = [c for c in refused.calls if "setsid" in c]
    # the trial runs the broker mount's own commands, rooted at the scratch directory,
    # with every path an argument
    assert launch[-5:] == ("python3", "-m", "lazyfs", f"{trial}/var/lib/kafka/durable",
                           f"{trial}/var/lib/kafka/data")
    assert "PYTHONPATH=/srv/insync/lib" in launch and f"{trial}/var/lib/kafka/data" in launch
    assert refused.calls[0] == ("rm", "-rf", "--", trial)
    assert refused.calls[-1] == ("rm", "-rf", "--", trial)  # taken away, refused or not
    silent = _fuse_host(mounts=False)
    assert try_fuse(silent, "/srv/insync") == (
        "mounting the power-loss filesystem failed: on n1: lazyfs exited before mounting "
        f"{trial}/var/lib/kafka/data: see {trial}/var/log/kafka/lazyfs.log")


def test_a_host_that_mounts_passes_the_trial_and_keeps_nothing() -> None:
    host = _fuse_host(mounts=True)
    assert try_fuse(host, "/srv/insync") is None
    trial = "/srv/insync/lib/fuse-trial"
    kills = [c for c in host.calls if "insync-signal" in c]
    assert kills and "KILL" in kills[-1]  # the daemon is stopped after the trial
    assert host.calls[-1] == ("rm", "-rf", "--", trial)


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


@dataclass
class _TreeRemote(FakeRemote):
    """A fake node that also takes many files in one transfer (``TreeUpload``)."""

    trees: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def upload_tree(self, root: Path, paths: Sequence[str], remote_dir: str) -> None:
        self.trees.append((remote_dir, tuple(paths)))
        for rel in paths:
            self.files[f"{remote_dir}/{rel}"] = (root / rel).read_bytes()


def test_a_node_that_takes_trees_gets_every_changed_file_in_one_transfer(
        tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    (dist / "libs").mkdir(parents=True)
    for i in range(3):
        (dist / "libs" / f"j{i}.jar").write_bytes(bytes([i]) * 10)
    home = "/opt/kafka/builds/4.4.0"
    remote = _TreeRemote("n1", lambda argv, stdin: (0, "", ""))
    synced = sync_jars(remote, dist, home, local_manifest(dist))
    assert remote.trees == [(home, ("libs/j0.jar", "libs/j1.jar", "libs/j2.jar"))]
    assert (synced.copied, synced.bytes) == (3, 30)
    assert remote.files[f"{home}/libs/j1.jar"] == bytes([1]) * 10
    assert ("mkdir", "-p", "--", home, f"{home}/libs") in remote.calls
