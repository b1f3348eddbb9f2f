"""``--hosts`` on every command that makes or finds a cluster: a bad inventory is refused
(exit 64, one line) before any host or Docker engine is contacted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from tests.cluster.ssh.sshd import new_key, write_key

HOST = 'address = "192.0.2.1"\nuser = "u"\nkey_file = "KEY"\nbase_dir = "/srv/i"\n'


@pytest.mark.parametrize(("argv", "inventory", "message"), [
    (["cluster", "up"], None, "no such file"),
    (["cluster", "down"], "[n1\n", "not valid TOML"),
    (["cluster", "status"], "[n1]\n" + HOST + "adress = 1\n", "unknown key 'adress'"),
    (["cluster", "up", "--nodes", "3"], "[n1]\n" + HOST, r"no host for node\(s\) n2, n3"),
    (["run", "--time-limit", "1"], "[n1]\n" + HOST.replace("/srv/i", "/"), "system directory"),
    (["cluster", "up", "--accept-new-host-keys"], "", "--accept-new-host-keys needs --hosts"),
    (["cluster", "down"], "[n1]\n" + HOST.replace("/srv/i", "//"), "system directory"),
    (["cluster", "down"], "[n1]\n" + HOST.replace("/srv/i", "/srv/i;touch x;"),
     "base_dir may hold only"),
    (["matrix", "--runs", "1", "--results-dir", "RESULTS"],
     "[n1]\n" + HOST.replace("192.0.2.1", "-oProxyCommand=x"), "address must be an IP address"),
    (["cluster", "up"], "[n1]\n" + HOST.replace("KEY", "/nonexistent/k"), "does not exist"),
    (["cluster", "up"], '["n\u00b2"]\n' + HOST, "unknown key 'n\u00b2'"),
], ids=["up-missing-file", "down-bad-toml", "status-bad-key", "up-too-few-hosts",
        "run-root-base-dir", "accept-without-hosts", "down-double-slash-base-dir",
        "down-injected-base-dir", "matrix-option-address", "up-missing-key", "up-n-squared"])
def test_a_bad_inventory_is_one_usage_line_before_anything_is_contacted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *, argv: list[str], inventory: str | None, message: str) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # a docker or ssh call would fail differently
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    path = tmp_path / "hosts.toml"
    key = write_key(new_key(), tmp_path / "id")
    if inventory:
        path.write_text(inventory.replace("KEY", str(key)))
    if inventory == "":
        args = argv
    else:
        args = [*argv, "--hosts", str(path), "--results-dir", str(tmp_path)] if argv[0] == "run" \
            else [*argv, "--hosts", str(path)]
    code = main([str(tmp_path) if a == "RESULTS" else a for a in args])
    err = capsys.readouterr().err.strip()
    assert code == 64, err
    assert len(err.splitlines()) == 1
    assert err.startswith("insync: ") and re.search(message, err)
