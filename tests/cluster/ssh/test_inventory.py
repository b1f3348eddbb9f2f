"""``hosts.toml``: read, and every mistake one ``UsageError`` naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.ssh.inventory import load_inventory
from harness.base.errors import UsageError
from tests.cluster.ssh.sshd import new_key, write_key


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real private key: key_file must parse before anything is contacted."""
    path = tmp_path_factory.mktemp("keys") / "id"
    write_key(new_key(), path)
    return path

GOOD = """
known_hosts = "{tmp}/kh"
[n2]
address = "10.0.0.12"
user = "kafka"
key_file = "{key}"
base_dir = "/srv/insync/"
[n1]
address = "10.0.0.11"
port = 2222
user = "kafka"
key_file = "{key}"
base_dir = "/srv/insync"
sudo = true
"""


def test_a_good_inventory_is_read_in_node_order(tmp_path: Path, key: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(GOOD.format(tmp=tmp_path, key=key).replace("10.0.0.12", "kafka-2.lan"))
    inv = load_inventory(path)
    assert list(inv.hosts) == ["n1", "n2"]
    n1, n2 = inv.hosts["n1"], inv.hosts["n2"]
    assert (n1.address, n1.port, n1.user, n1.sudo, n1.base_dir) == (
        "10.0.0.11", 2222, "kafka", True, "/srv/insync")
    assert (n2.port, n2.sudo, n2.base_dir) == (22, False, "/srv/insync")
    assert n2.key_file == key and n2.address == "kafka-2.lan"
    assert inv.known_hosts == tmp_path / "kh"
    assert list(inv.for_nodes(["n1"])) == ["n1"]
    with pytest.raises(UsageError, match=r"no host for node\(s\) n3"):
        inv.for_nodes(["n1", "n2", "n3"])


HOST = 'address = "a"\nuser = "u"\nkey_file = "KEY"\nbase_dir = "/srv/i"\n'


def host(**values: str) -> str:
    """``HOST`` with some values replaced (TOML basic strings: escapes as in TOML)."""
    text = HOST
    for name, value in values.items():
        text = text.replace({"address": '"a"', "user": '"u"', "key_file": '"KEY"',
                             "base_dir": '"/srv/i"'}[name], f'"{value}"')
    return "[n1]\n" + text


BAD = [
    ("not-toml", "[n1\n", "not valid TOML"),
    ("empty", "", "names no host"),
    ("unknown-top-key", "nodes = 3\n", "unknown key 'nodes'"),
    ("bad-node-name", "[node1]\n" + HOST, "unknown key 'node1'"),
    ("n0", "[n0]\n" + HOST, "unknown key 'n0'"),
    ("n01", "[n01]\n" + HOST, "unknown key 'n01'"),
    ("n-superscript-2", "[\"n\u00b2\"]\n" + HOST, "unknown key 'n\u00b2'"),
    ("n-arabic-indic-1", "[\"n\u0661\"]\n" + HOST, "unknown key 'n\u0661'"),
    ("missing-address", "[n1]\nuser = \"u\"\nkey_file = \"k\"\nbase_dir = \"/srv/i\"\n",
     r"\[n1\] address must be a non-empty string, got nothing"),
    ("address-semicolon", host(address="10.0.0.1;touch x"), "address must be an IP address"),
    ("address-option", host(address="-oProxyCommand=touch x"), "address must be an IP address"),
    ("address-space", host(address="10.0.0.1 "), "address must be an IP address"),
    ("address-dollar", host(address="$(reboot)"), "address must be an IP address"),
    ("address-label-dash", host(address="a-.lan"), "address must be an IP address"),
    ("user-newline", host(user="u\\nroot"), "user must be a POSIX user name"),
    ("user-dash", host(user="-u"), "user must be a POSIX user name"),
    ("user-quote", host(user="u'"), "user must be a POSIX user name"),
    ("port-text", "[n1]\n" + HOST + "port = \"22\"\n", r"\[n1\] port must be a whole number"),
    ("port-zero", "[n1]\n" + HOST + "port = 0\n", r"\[n1\] port must be a whole number"),
    ("port-65536", "[n1]\n" + HOST + "port = 65536\n", r"\[n1\] port must be a whole number"),
    ("sudo-text", "[n1]\n" + HOST + "sudo = \"yes\"\n", r"\[n1\] sudo must be true or false"),
    ("typo-key", "[n1]\n" + HOST + "adress = \"b\"\n", r"\[n1\] unknown key 'adress'"),
    ("relative-base", host(base_dir="srv/i"), "must be an absolute, normalised path"),
    ("dotdot-base", host(base_dir="/srv/../etc"), "without '..'"),
    ("root-base", host(base_dir="/"), "is a system directory"),
    ("double-slash-base", host(base_dir="//"), "is a system directory"),
    ("double-slash-etc", host(base_dir="//etc"), "must be an absolute, normalised path"),
    ("dot-base", host(base_dir="/srv/./i"), "must be an absolute, normalised path"),
    ("glob-base", host(base_dir="/*"), "may hold only letters"),
    ("glob-deep-base", host(base_dir="/srv/insync?"), "may hold only letters"),
    ("tab-base", host(base_dir="/srv/insync\\t/"), "may hold only letters"),
    ("semicolon-base", host(base_dir="/srv/insync;touch x;"), "may hold only letters"),
    ("space-base", host(base_dir="/srv/my insync"), "may hold only letters"),
    ("var-base", host(base_dir="/var/"), "is a system directory"),
    ("etc-base", host(base_dir="/etc"), "is a system directory"),
    ("lib32-base", host(base_dir="/lib32"), "is a system directory"),
    ("one-level-base", host(base_dir="/insync"), "at least two levels deep"),
    ("same-host-twice", "[n1]\n" + HOST + "[n2]\n" + HOST, r"\[n2\] has the address of \[n1\]"),
    ("same-address-other-port", "[n1]\n" + HOST + "[n2]\n" + HOST + "port = 2222\n",
     r"\[n2\] has the address of \[n1\]"),
    ("known-hosts-number", "known_hosts = 3\n[n1]\n" + HOST, "known_hosts must be a path"),
    ("key-missing", host(key_file="/nonexistent/id"), "key_file /nonexistent/id does not exist"),
    ("key-directory", host(key_file="/"), "key_file / is not a regular file"),
    ("key-not-a-key", host(key_file="NOTKEY"), "is not a private key insync can use"),
]


@pytest.mark.parametrize(("text", "message"), [(t, m) for _, t, m in BAD],
                         ids=[i for i, _, _ in BAD])
def test_each_mistake_is_one_usage_line_naming_the_file(
        tmp_path: Path, key: Path, text: str, message: str) -> None:
    path = tmp_path / "hosts.toml"
    not_a_key = tmp_path / "not-a-key"
    not_a_key.write_text("ssh-ed25519 AAAA a public key, not a private one\n")
    path.write_text(text.replace("NOTKEY", str(not_a_key)).replace("KEY", str(key)))
    with pytest.raises(UsageError, match=message) as err:
        load_inventory(path)
    assert err.value.exit_code == 64
    assert str(path) in err.value.one_line()
    assert "\n" not in err.value.one_line()


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_inventory(tmp_path / "nope.toml")
