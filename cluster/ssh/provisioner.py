"""``SSHProvisioner``: a cluster on hosts an inventory names, reached over SSH only.

Layout on each host, all under the inventory's ``base_dir`` (``KafkaNode.root``)::

    <base_dir>/kafka/<version>/        the Kafka distribution, synced by hash (kept by down)
    <base_dir>/lib/lazyfs/             the power-loss filesystem, when the cluster uses it (kept)
    <base_dir>/cluster.json            the spec of the cluster running here (for attach)
    <base_dir>/etc, var/...            configs, data, logs, pidfiles, the faketime file

``up`` resolves the Kafka build first (``cluster.deploy``), connects to every
host at once (host keys checked, ``cluster.ssh.host_keys``), says in one error
what any host lacks, syncs the jars (and, for a cluster on the power-loss
filesystem, its package, mounted once to prove FUSE works), then reuses a
matching running cluster or stops what runs, wipes the cluster state and hands
the nodes to ``cluster.deploy``. ``down`` stops every daemon insync started there
(brokers, ZooKeeper, a clock strobe loop, the power-loss filesystem; SIGCONT
first, so a paused one dies too), takes away the FUSE mounts under base_dir,
removes insync's iptables chains and the cluster state, and keeps the synced
jars (the next ``up`` is warm). Nothing outside ``base_dir`` is created or
removed, except insync's own iptables chains, and under it ``down`` removes
only the paths ``up`` recorded creating (``cluster.ssh.created``): a host
without that manifest is refused, not cleared. Every command takes its values
(paths, addresses) as arguments, never as shell text (``cluster.remote.sh``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from cluster import deploy
from cluster.daemon import RUN_DIR
from cluster.kafka_dist import home_name
from cluster.kafka_node import KafkaNode
from cluster.model import Cluster, NotReady, Say, stage
from cluster.remote import Remote, read_if_there, sh, write_file
from cluster.spec import ClusterSpec
from cluster.ssh import created, host_setup
from cluster.ssh.inventory import Host, Inventory, load_inventory
from cluster.ssh.ssh_remote import Connection, SSHRemote
from cluster.versions import KafkaVersion
from harness.base.errors import ClusterError, EnvironmentProblem, InsyncError

LOG = logging.getLogger("insync.cluster")
T = TypeVar("T")
STATE_FILE = "cluster.json"
#: Every iptables chain the nemesis adds starts with this (``nemesis.net.CHAINS``; a test
#: holds the two together): ``down`` removes them without importing the nemesis.
CHAIN_PREFIX = "INSYNC"
#: What insync writes under base_dir besides the jars; ``down`` removes exactly these.
STATE_DIRS = ("etc", "var", STATE_FILE)


def kafka_home(host: Host, spec: ClusterSpec) -> str:
    """Where the spec's jars live on ``host``: one directory per release or build."""
    return f"{host.base_dir}/kafka/{home_name(spec)}"


#: Stop every process insync started on the host ($1: its pidfile directory), take away
#: the FUSE mounts under its base directory ($2) and remove insync's iptables chains.
#: Pidfiles name the processes (brokers, ZooKeeper, the clock strobe loop, the power-loss
#: filesystem's daemon, stopped last: the broker may write until it dies); each gets
#: SIGCONT (a paused one), SIGTERM, then SIGKILL after 20 s. A dead filesystem daemon
#: leaves its mount behind, which nothing under it could be removed through.
HEAL_SCRIPT = f"""
stop() {{
  f=$1; [ -f "$f" ] || return 0
  p=$(cat "$f"); case "$p" in ''|*[!0-9]*) rm -f "$f"; return 0;; esac
  kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null
  i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
  kill -KILL "$p" 2>/dev/null
  rm -f "$f"
}}
for f in "$1"/*.pid; do [ "${{f##*/}}" = lazyfs.pid ] || stop "$f"; done
stop "$1/lazyfs.pid"
awk -v d="$2/" 'index($2, d) == 1 && $3 ~ /^fuse/ {{print $2}}' /proc/mounts |
  while read -r m; do fusermount3 -u -z -- "$m" 2>/dev/null || umount -l -- "$m"; done
ipt="iptables -w 10"
for c in $($ipt -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^{CHAIN_PREFIX}/ {{print $2}}'); do
  while $ipt -D INPUT -j "$c" 2>/dev/null; do :; done
  $ipt -F "$c" 2>/dev/null; $ipt -X "$c" 2>/dev/null
done
true
"""


def heal(remote: Remote, host: Host) -> None:
    """Run ``HEAL_SCRIPT`` on the host, its pidfile and base directories as ``$1``, ``$2``."""
    sh(remote, HEAL_SCRIPT, f"{host.base_dir}{RUN_DIR}", host.base_dir, timeout=120)


@dataclass
class SSHProvisioner:
    """Nodes are the hosts of ``inventory`` (a ``hosts.toml``), one node per host."""

    inventory: Path
    accept_new_host_keys: bool = False
    _connections: dict[str, Connection] = field(default_factory=dict, init=False, repr=False)

    def _inventory(self) -> Inventory:
        return load_inventory(self.inventory)

    def _connection(self, inv: Inventory, host: Host) -> Connection:
        """The host's one connection, kept for every later call of this provisioner."""
        conn = self._connections.get(host.node)
        if conn is None or conn.host != host:
            conn = Connection(host, inv.known_hosts, self.accept_new_host_keys)
            self._connections[host.node] = conn
        return conn

    def up(
        self,
        spec: ClusterSpec,
        *,
        fresh: bool = False,
        say: Say = print,
        ready_timeout_s: float = 180.0,
    ) -> Cluster:
        inv = self._inventory()
        hosts = inv.for_nodes(spec.node_names)
        started = time.monotonic()
        with stage(say, f"Kafka {spec.kafka_version} jars ready"):
            release = deploy.release_for(spec)
        with stage(say, f"{len(hosts)} host(s) connected and checked"):
            remotes = _each(hosts, lambda h: SSHRemote(h.node, self._connection(inv, h)))
            gaps = _each(hosts, lambda h: host_setup.missing(remotes[h.node],
                                                             fuse=spec.power_loss_fs))
            _refuse_gaps(gaps)
        with stage(say, f"Kafka {release.version.version} jars synced to {len(hosts)} host(s)"):
            manifest = host_setup.local_manifest(release.root)
            synced = _each(hosts, lambda h: host_setup.sync_jars(
                remotes[h.node], release.root, kafka_home(h, spec), manifest))
            copied = sum(s.copied for s in synced.values())
            size = sum(s.bytes for s in synced.values())
            say(f"copied {copied} file(s), {size / 2**20:.1f} MiB "
                f"({'cold' if copied else 'warm'})")
        if spec.power_loss_fs:
            with stage(say, f"power-loss filesystem mounted on {len(hosts)} host(s)"):
                _each(hosts, lambda h: host_setup.sync_lazyfs(remotes[h.node], h.base_dir))
                failed = _each(hosts, lambda h: host_setup.try_fuse(remotes[h.node], h.base_dir))
                _refuse_gaps({n: [why] for n, why in failed.items() if why})
        cluster = self._cluster(spec, release.version, inv, hosts)
        running = _each(hosts, lambda h: _state_of(remotes[h.node], h))
        same = not fresh and all(s == spec for s in running.values())
        if same and deploy.reuse(cluster, say=say, ready_timeout_s=ready_timeout_s):
            return cluster
        if any(s is not None for s in running.values()):
            say(f"stopping the cluster found on the hosts ({'--fresh' if fresh else 'it differs'})")
        try:
            with stage(say, f"Kafka {release.version.version} started on {spec.nodes} host(s)"):
                _each(hosts, lambda h: _reset(remotes[h.node], h, spec))
                deploy.start(cluster, release.known_keys)
            with stage(say, f"cluster {spec.name!r} ready"):
                deploy.wait_until_ready(cluster, ready_timeout_s=ready_timeout_s)
        except Exception as err:  # started here: the caller decides whether it stays
            raise NotReady(cluster, err, f"insync cluster down --hosts {self.inventory}") from err
        LOG.info("cluster %s up over SSH in %.1fs", spec.name, time.monotonic() - started)
        return cluster

    def attach(self, name: str = "insync") -> Cluster:
        inv = self._inventory()
        specs = _each(
            inv.hosts, lambda h: _state_of(SSHRemote(h.node, self._connection(inv, h)), h)
        )
        found = [s for s in specs.values() if s is not None and s.name == name]
        if not found:
            raise ClusterError(
                f"no cluster named {name!r} runs on the hosts of {inv.path}",
                hint=f"start one with `insync cluster up --hosts {inv.path}`",
            )
        spec = found[0]
        hosts = inv.for_nodes(spec.node_names)
        return self._cluster(spec, deploy.check_version(spec), inv, hosts)

    def down(self, name: str | None) -> str:
        """Stop, heal and clear every host of the inventory (whose cluster is ``name``)."""
        inv = self._inventory()
        errors: dict[str, str] = {}

        def clear(host: Host) -> bool:
            return clear_host(SSHRemote(host.node, self._connection(inv, host)), host, name)

        cleared = []
        with ThreadPoolExecutor(max_workers=max(1, len(inv.hosts))) as pool:
            futures = {n: pool.submit(clear, h) for n, h in inv.hosts.items()}
        for node, fut in futures.items():
            try:
                if fut.result():
                    cleared.append(node)
            except Exception as err:  # keep going: teardown must run every step
                text = err.message if isinstance(err, InsyncError) else str(err)
                errors[node] = text.removeprefix(f"{node}: ")  # the line names it once
        if errors:
            raise ClusterError(
                "teardown incomplete: " + "; ".join(f"{n}: {e}" for n, e in errors.items()),
                hint=f"run `insync cluster down --hosts {inv.path}` again",
            )
        return f"{len(cleared)} host(s) stopped, healed and cleared (jars kept)"

    def prepare(self, *, rebuild: bool = False) -> str:
        """Refuse hosts that lack what Kafka and the faults need; say whether they can
        also run the power-loss filesystem (only power-loss and disk faults need it)."""
        inv = self._inventory()
        gaps = _each(inv.hosts, lambda h: host_setup.missing(
            SSHRemote(h.node, self._connection(inv, h)), fuse=True))
        fuse = {n: [g for g in found if g in host_setup.FUSE_NEEDS.values()]
                for n, found in gaps.items()}
        _refuse_gaps({n: [g for g in found if g not in fuse[n]] for n, found in gaps.items()})
        lacking = "; ".join(f"{n}: {', '.join(g)}" for n, g in fuse.items() if g)
        return (f"{len(inv.hosts)} host(s) of {inv.path} have what Kafka and the faults need"
                + (f"; power-loss and disk faults need what some lack ({lacking})"
                   if lacking else ", the power-loss filesystem's included"))

    def _cluster(self, spec: ClusterSpec, version: KafkaVersion, inv: Inventory,
                 hosts: Mapping[str, Host]) -> Cluster:
        peers = {n: h.address for n, h in hosts.items()}
        nodes = {}
        for n, h in hosts.items():
            conn = self._connection(inv, h)
            nodes[n] = KafkaNode(
                n, h.address, SSHRemote(n, conn), spec, version,
                kafka_home=kafka_home(h, spec),
                client_source=_local_address(conn),
                root=h.base_dir,
                peers=peers,
                control_ports=(h.port,),
                lazyfs_home=host_setup.lazyfs_home(h.base_dir),
            )
        return Cluster(spec, version, nodes)


def _local_address(conn: Connection) -> str:
    """This machine's address as the host sees it: the local end of the SSH socket."""
    sock = conn.transport().sock
    name = sock.getsockname() if hasattr(sock, "getsockname") else ("",)
    return str(name[0])


def clear_host(remote: Remote, host: Host, name: str | None) -> bool:
    """Stop and heal the host and remove what ``up`` created there (its manifest);
    ``False``: the host runs another cluster than ``name``, left alone."""
    state = _state_of(remote, host)
    if name is not None and state is not None and state.name != name:
        return False  # another cluster's host: not ours to touch
    paths = created.read(remote, host.base_dir)  # refuses before anything is stopped
    heal(remote, host)
    created.remove(remote, host.base_dir, paths)
    created.forget(remote, host.base_dir)
    return True


def _state_of(remote: Remote, host: Host) -> ClusterSpec | None:
    """The spec of the cluster the host runs (its state file), or ``None``."""
    text = read_if_there(remote, f"{host.base_dir}/{STATE_FILE}")
    try:
        return ClusterSpec.from_json(text) if text.strip() else None
    except (ValueError, TypeError) as err:
        LOG.warning("%s: unreadable %s: %s", host.node, STATE_FILE, err)
        return None


def _reset(remote: Remote, host: Host, spec: ClusterSpec) -> None:
    """Stop what insync runs on the host, clear the old state, record ``spec``.

    The manifest is written before anything of the state is created, so a
    ``down`` after an interrupted ``up`` still finds every path to remove.
    """
    heal(remote, host)
    paths = [f"{host.base_dir}/{p}" for p in STATE_DIRS]
    created.record(remote, host.base_dir, paths)
    remote.exec(["rm", "-rf", "--", *paths])
    write_file(remote, f"{host.base_dir}/{STATE_FILE}", spec.to_json())


def _refuse_gaps(gaps: Mapping[str, list[str]]) -> None:
    lacking = {n: g for n, g in gaps.items() if g}
    if lacking:
        raise EnvironmentProblem(
            "hosts lack what Kafka or the faults need: "
            + "; ".join(f"{n}: {', '.join(g)}" for n, g in lacking.items()),
            hint="install them (see docs/GUIDE.md: real hosts over SSH) and run again",
        )


def _each(hosts: Mapping[str, Host], fn: Callable[[Host], T]) -> dict[str, T]:
    """``fn`` on every host at once; the first failure is raised after all finish."""
    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool:
        futures = {n: pool.submit(fn, h) for n, h in hosts.items()}
    return {n: f.result() for n, f in futures.items()}
