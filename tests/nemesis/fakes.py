"""A fake cluster for nemesis unit tests: nodes are ``FakeRemote``s over a tiny node model.

Each ``FakeNode`` answers the commands the nemesis issues (iptables scripts,
the broker's pidfile probe and signals, the faketime control file, tc, and the
listings ``nemesis.residue`` reads), and
records every shell script, so tests assert on what really would have run.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fake_remote import FakeRemote, Handler

from cluster import Cluster
from cluster.kafka_node import FAKETIME_CONTROL, KafkaNode
from cluster.spec import ClusterSpec
from cluster.versions import resolve_version
from nemesis.net import IPT
from tests.support.shell_text import script_text

GATEWAY = "172.30.0.1"


@dataclass
class FakeNode:
    """One node: a broker process, a control file, and the scripts it was asked to run."""

    name: str
    netem: bool = False
    pid: int | None = 100
    stat: str = "Sl"
    next_pid: int = 500
    clock: str = "+0"
    scripts: list[str] = field(default_factory=list)
    signals: list[tuple[str, int]] = field(default_factory=list)
    fail_on: str | None = None  # a substring: scripts containing it exit 1
    rules: list[str] = field(default_factory=list)  # what ``iptables -S`` prints
    qdiscs: list[str] = field(default_factory=list)  # what ``tc qdisc show`` prints
    commands: int = 0  # every command run on the node: a fault should cost one per node
    linger: bool = False  # the broker outlives SIGTERM (a stuck controlled shutdown)

    def signal_if(self, sig: str, want: list[str]) -> tuple[int, str, str]:
        """``cluster.daemon.SIGNAL_SCRIPT``: signal if the state is wanted; a KILL reaps."""
        if self.fail_on is not None and self.fail_on in f"kill -{sig}":
            return 1, "", "injected failure"
        if self.pid is None or self.stat == "Z":
            return 0, "stopped\n", ""
        state = "paused" if self.stat.startswith("T") else "running"
        if state not in want:
            return 0, f"{state}\n", ""
        self.signals.append((sig, self.pid))
        if sig == "TERM" and self.linger:  # a JVM that will not exit: the reap wait says so
            return 0, f"{state} {self.pid} alive\n", ""
        self.stat = {"KILL": "Z", "TERM": "Z", "STOP": "T", "CONT": "Sl"}.get(sig, self.stat)
        return 0, f"{state} {self.pid}\n", ""

    def handle(self, argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
        self.commands += 1
        if argv[3:4] == ("insync-signal",):
            self.scripts.append(f"insync-signal {' '.join(argv[5:])}")
            return self.signal_if(argv[5], argv[6].split())
        if argv[0] == "kill":
            sig, pid = argv[1].lstrip("-"), int(argv[2])
            if sig == "0":  # exists? a killed fake process is reaped at once
                return (0, "", "") if pid == self.pid and self.stat != "Z" else (1, "", "")
            self.signals.append((sig, pid))
            if pid == self.pid:
                self.stat = {"KILL": "Z", "STOP": "T", "CONT": "Sl"}.get(sig, self.stat)
            return 0, "", ""
        script = script_text(argv)
        self.scripts.append(script)
        if self.fail_on is not None and self.fail_on in script:
            return 1, "", "injected failure"
        if "ip -4 route show default" in script:
            return 0, f"default via {GATEWAY} dev eth0\n", ""
        # The start script probes with ps too: recognise it first.
        if "setsid" in script:
            if self.pid is not None and self.stat != "Z":
                return 0, f"{'paused' if self.stat == 'T' else 'running'} {self.pid}\n", ""
            self.next_pid += 1
            self.pid, self.stat = self.next_pid, "Sl"
            return 0, f"stopped {self.pid}\n", ""
        if "ps -o stat=" in script:
            if self.pid is None or self.stat == "Z":
                return 0, "", ""
            return 0, f"{self.pid} {self.stat}\n", ""
        if "netem delay 0ms" in script:
            return (0, "", "") if self.netem else (2, "", "Specified qdisc kind is unknown.")
        written = re.search(r"printf '%s\\n' (.+?) > " + re.escape(FAKETIME_CONTROL), script)
        if written:
            self.clock = shlex.split(written.group(1))[0]
        if script.startswith("date +%s.%N"):
            return 0, "1800000000.250000000\n", ""
        frozen = re.match(r"s=\$\(\( \(\$\(date \+%s%N\) \+ (-?\d+)\) / 1000000000 \)\)", script)
        if frozen:  # the freeze script: this node's clock reads 1800000000.25
            at = (1_800_000_000_250_000_000 + int(frozen.group(1))) // 1_000_000_000
            self.clock = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))
            return 0, f"{self.clock}\n", ""
        if script.startswith("ps -eo pid=,stat=,comm="):  # every process, for residue
            alive = self.pid is not None and self.stat != "Z"
            return 0, f"{self.pid} {self.stat} java\n" if alive else "", ""
        if script.startswith(f"cat -- {FAKETIME_CONTROL}"):
            return 0, f"{self.clock}\n", ""
        if script == f"{IPT} -S":
            return 0, "".join(f"{r}\n" for r in self.rules), ""
        if script == "tc qdisc show":
            return 0, "".join(f"{q}\n" for q in self.qdiscs), ""
        return 0, "", ""

    def iptables(self) -> list[str]:
        """Every iptables command issued, one per line, in order."""
        cmds = [c.strip() for s in self.scripts for c in re.split(r";|&&|\|\|", s)]
        return [c for c in cmds if c.startswith("iptables")]


def fake_cluster(n: int = 3, *, faketime: bool = False, netem: bool = False,
                 controllers: int | None = None) -> tuple[Cluster, dict[str, FakeNode]]:
    spec = ClusterSpec(name="fake", nodes=n, controllers=controllers or min(3, n),
                       faketime=faketime)
    fakes = {name: FakeNode(name, netem=netem) for name in spec.node_names}
    return cluster_of(spec, {name: f.handle for name, f in fakes.items()}), fakes


def cluster_of(spec: ClusterSpec, handlers: Mapping[str, Handler], *,
               client_source: str = GATEWAY) -> Cluster:
    """A 4.1 cluster of ``spec`` whose node ``nK`` (at ``10.0.0.K``) answers through
    ``handlers[nK]``: the one place the nemesis tests build their fake clusters."""
    version = resolve_version("4.1.x")
    nodes = {
        name: KafkaNode(name, f"10.0.0.{i + 1}", FakeRemote(name, handlers[name]), spec,
                        version, kafka_home="/opt/kafka", client_source=client_source)
        for i, name in enumerate(spec.node_names)
    }
    return Cluster(spec, version, nodes)


def down_nodes(fakes: dict[str, FakeNode]) -> tuple[set[str], set[str]]:
    """(killed, paused) as the fake nodes really are: what a fault left them in."""
    killed = {n for n, fk in fakes.items() if fk.pid is None or fk.stat == "Z"}
    paused = {n for n, fk in fakes.items() if fk.stat == "T"} - killed
    return killed, paused


DROP = re.compile(r"-A INSYNC -s (\S+) -j DROP")
RESET = re.compile(r"-[FX] INSYNC(\s|$)")  # flushed or removed: INSYNC, not INSYNC-LOSS


def grudge_in_force(cluster: Cluster, fakes: dict[str, FakeNode]) -> dict[str, frozenset[str]]:
    """The partition really in force: per node, the peers its last INSYNC rules drop
    (read back from the iptables scripts it ran, the client gateway left out)."""
    by_address = {node.address: name for name, node in cluster.nodes.items()}
    grudge: dict[str, frozenset[str]] = {}
    for name, fk in fakes.items():
        last = [s for s in fk.scripts if RESET.search(s)]
        sources = DROP.search(last[-1]) if last else None
        peers = {by_address[a] for a in sources.group(1).split(",")
                 if a in by_address} if sources else set()
        if peers:
            grudge[name] = frozenset(peers)
    return grudge


def landed(out: dict[str, Any]) -> dict[str, Any]:
    """A completion (or its value) without its ``spread-ms``, which must be there and sane:
    the first-to-last node spread is measured, so tests compare everything else."""
    value = out.get("value", out)
    spread = value.pop("spread-ms")
    assert isinstance(spread, float) and 0 <= spread < 5_000, spread
    return out


class FakeTime:
    """A clock that moves only when slept on (for ``RecoveryNemesis``)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, dt: float) -> None:
        self.slept.append(dt)
        self.now += dt
