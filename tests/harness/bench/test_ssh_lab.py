"""The SSH lab's inventory is one the real inventory loader reads back host for host
(the lab itself needs Docker: ``tests/cluster/ssh/test_ssh_integration.py``)."""

from __future__ import annotations

from pathlib import Path

from cluster.ssh.inventory import load_inventory
from harness.bench._ssh_lab import BASE_DIR, client_key, inventory_text


def test_the_lab_inventory_names_every_host_as_root_with_the_key(tmp_path: Path) -> None:
    key = tmp_path / "id"
    public = client_key(key)
    assert public.split()[0] in {"ssh-ed25519", "ssh-rsa"} and key.read_text().startswith("---")
    known = tmp_path / "known_hosts"
    hosts = [("n1", "172.30.0.2"), ("n2", "172.30.0.3"), ("n3", "172.30.0.4")]
    path = tmp_path / "hosts.toml"
    path.write_text(inventory_text(known, hosts, key))
    inv = load_inventory(path)
    assert inv.known_hosts == known
    assert [(h.node, h.address, h.port, h.user, h.key_file, h.base_dir)
            for h in inv.hosts.values()] == [
        (node, address, 22, "root", key, BASE_DIR) for node, address in hosts]
