"""``hosts.toml``: read, and every mistake one ``UsageError`` naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.ssh.inventory import load_inventory
from harness.base.errors import UsageError

GOOD = """
known_hosts = "{tmp}/kh"
[n2]
address = "10.0.0.12"
user = "kafka"
key_file = "~/.ssh/id_ed25519"
base_dir = "/srv/insync/"
[n1]
address = "10.0.0.11"
port = 2222
user = "kafka"
key_file = "/keys/id"
base_dir = "/srv/insync"
sudo = true
"""


def test_a_good_inventory_is_read_in_node_order(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(GOOD.format(tmp=tmp_path))
    inv = load_inventory(path)
    assert list(inv.hosts) == ["n1", "n2"]
    n1, n2 = inv.hosts["n1"], inv.hosts["n2"]
    assert (n1.address, n1.port, n1.user, n1.sudo, n1.base_dir) == (
        "10.0.0.11", 2222, "kafka", True, "/srv/insync")
    assert (n2.port, n2.sudo, n2.base_dir) == (22, False, "/srv/insync")
    assert n2.key_file == Path("~/.ssh/id_ed25519").expanduser()
    assert inv.known_hosts == tmp_path / "kh"
    assert list(inv.for_nodes(["n1"])) == ["n1"]
    with pytest.raises(UsageError, match=r"no host for node\(s\) n3"):
        inv.for_nodes(["n1", "n2", "n3"])


HOST = 'address = "a"\nuser = "u"\nkey_file = "k"\nbase_dir = "/srv/i"\n'

BAD = [
    ("not-toml", "[n1\n", "not valid TOML"),
    ("empty", "", "names no host"),
    ("unknown-top-key", "nodes = 3\n", "unknown key 'nodes'"),
    ("bad-node-name", "[node1]\n" + HOST, "unknown key 'node1'"),
    ("n0", "[n0]\n" + HOST, "unknown key 'n0'"),
    ("missing-address", "[n1]\nuser = \"u\"\nkey_file = \"k\"\nbase_dir = \"/srv/i\"\n",
     r"\[n1\] address must be a non-empty string, got nothing"),
    ("port-text", "[n1]\n" + HOST + "port = \"22\"\n", r"\[n1\] port must be a whole number"),
    ("port-zero", "[n1]\n" + HOST + "port = 0\n", r"\[n1\] port must be a whole number"),
    ("sudo-text", "[n1]\n" + HOST + "sudo = \"yes\"\n", r"\[n1\] sudo must be true or false"),
    ("typo-key", "[n1]\n" + HOST + "adress = \"b\"\n", r"\[n1\] unknown key 'adress'"),
    ("relative-base", "[n1]\n" + HOST.replace("/srv/i", "srv/i"), "must be an absolute path"),
    ("dotdot-base", "[n1]\n" + HOST.replace("/srv/i", "/srv/../etc"), "without '..'"),
    ("root-base", "[n1]\n" + HOST.replace("/srv/i", "/"), "is a system directory"),
    ("var-base", "[n1]\n" + HOST.replace("/srv/i", "/var/"), "is a system directory"),
    ("same-host-twice", "[n1]\n" + HOST + "[n2]\n" + HOST, r"\[n2\] has the address and port"),
    ("known-hosts-number", "known_hosts = 3\n[n1]\n" + HOST, "known_hosts must be a path"),
]


@pytest.mark.parametrize(("text", "message"), [(t, m) for _, t, m in BAD],
                         ids=[i for i, _, _ in BAD])
def test_each_mistake_is_one_usage_line_naming_the_file(
        tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message) as err:
        load_inventory(path)
    assert err.value.exit_code == 64
    assert str(path) in err.value.one_line()
    assert "\n" not in err.value.one_line()


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_inventory(tmp_path / "nope.toml")
