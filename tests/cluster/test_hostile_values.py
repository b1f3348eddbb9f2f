"""No value from outside (an inventory, a scenario, a schedule, a flag) is ever shell text.

Every command builder that reaches a node is walked here with hostile values
(spaces, tabs, newlines, ``;``, ``$()``, backticks, quotes, a leading ``-``) in
every place a value can come from: the host's ``base_dir`` (a node's root), its
address and its peers', the Kafka home, a daemon's argv and environment, a
partition directory, clock offsets. The inventory and the option checks refuse
all of these long before; this test takes those fences away on purpose and
holds the second one: commands are argument lists, and a value is only ever a
whole argument of its own, which the ``Remote`` quotes once.

A ``Strict`` remote records every argv and fails the test on:

* a hostile value (each carries the marker ``ZQ``) inside the text of an
  ``sh -c`` script: scripts are insync's own text, values go as ``$1``, ...;
* a hostile value starting with ``-`` as a plain command's argument before
  ``--`` (it would be read as an option).

Then every recorded argv goes through the SSH seam (``command_line``) and a
real ``sh`` on this machine, printing its arguments back: they must arrive
unchanged, one for one.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import pytest
from fake_remote import FakeRemote, Handler

from cluster import Cluster
from cluster.daemon import Daemon
from cluster.kafka_node import KafkaNode
from cluster.replica_logs import read_replica
from cluster.spec import ClusterSpec
from cluster.ssh import created, host_setup
from cluster.ssh.inventory import Host
from cluster.ssh.provisioner import STATE_DIRS, clear_host
from cluster.ssh.provisioner import _reset as reset_host
from cluster.ssh.ssh_remote import command_line
from cluster.versions import resolve_version
from harness.base.errors import ClusterError
from nemesis.clock import ClockNemesis, faked_now, write_control
from nemesis.kinds import clock as clock_kind
from nemesis.nodes import Resolver, controller_of
from nemesis.packet import PacketNemesis
from nemesis.partition import PartitionNemesis
from nemesis.targets import Facts
from tests.nemesis.fakes import FakeNode

MARK = "ZQ"
#: Each is a value a shell would split, run or read as an option if it saw it as text.
HOSTILE = {
    "space": f"/srv/my {MARK} dir",
    "tab": f"/srv/a\t{MARK}",
    "newline": f"/srv/a\n{MARK}",
    "semicolon": f"/srv/a;touch {MARK};",
    "command-substitution": f"/srv/$(touch {MARK})",
    "backticks": f"/srv/`touch {MARK}`",
    "single-quote": f"/srv/it's-{MARK}",
    "double-quote": f'/srv/"{MARK}"',
    "glob": f"/srv/{MARK}*",
    "leading-dash": f"-{MARK}rf",
}


class Strict:
    """Records every argv; ``problems`` says each place a value became shell text."""

    def __init__(self, answer: Handler) -> None:
        self.answer = answer
        self.argvs: list[tuple[str, ...]] = []
        self.problems: list[str] = []

    def __call__(self, argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        self.argvs.append(argv)
        if argv[:2] == ("sh", "-c"):
            if MARK in argv[2]:
                self.problems.append(f"a value inside the script text: {argv[2]!r}")
        else:
            ended = False
            for arg in argv[1:]:
                ended = ended or arg == "--"
                # ``-Dk=VALUE`` is insync's option carrying a value: only a leading value counts
                if MARK in arg and arg.startswith("-") and "=" not in arg.split(MARK)[0] \
                        and not ended:
                    self.problems.append(f"a value read as an option: {argv!r}")
        return self.answer(argv, stdin)


def arrives_intact(argv: tuple[str, ...]) -> bool:
    """``argv`` as the SSH seam sends it, run by a real ``sh`` that prints its arguments
    back (each NUL-terminated): the same arguments, unchanged, one for one."""
    line = command_line(("printf", "%s\\0", *argv))
    out = subprocess.run(["sh", "-c", line], capture_output=True, check=True).stdout
    return tuple(out.decode().split("\0")[:-1]) == argv


def as_path(value: str) -> str:
    """``value`` as a directory: paths are absolute by construction (every one is built
    under a root), so a leading ``-`` is tried where a value can begin an argument:
    addresses, names, environment values, partition directories."""
    return value if value.startswith("/") else f"/{value}"


def hostile_cluster(value: str) -> tuple[Cluster, dict[str, Strict], dict[str, FakeNode]]:
    """Three fake nodes whose root, addresses, Kafka home and client address are ``value``."""
    root = as_path(value)
    spec = ClusterSpec(name="h", nodes=3, faketime=True)
    version = resolve_version("4.1.x")
    fakes = {n: FakeNode(n) for n in spec.node_names}

    def answer(fake: FakeNode) -> Handler:
        def handle(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
            if argv[:1] == ("env",) and "date" in argv:  # faked_now
                return 0, "1800000000.0\n", ""
            return fake.handle(argv, stdin)
        return handle

    stricts = {n: Strict(answer(fakes[n])) for n in spec.node_names}
    nodes = {
        n: KafkaNode(n, f"{value}{i}", FakeRemote(n, stricts[n]), spec, version,
                     kafka_home=f"{root}/kafka", client_source=f"{value}-client",
                     root=root, peers={m: f"{value}{j}" for j, m in enumerate(spec.node_names)},
                     control_ports=(22,))
        for i, n in enumerate(spec.node_names)
    }
    return Cluster(spec, version, nodes), stricts, fakes


def node_commands(node: KafkaNode, value: str) -> None:
    """Every command ``KafkaNode`` and its daemons build."""
    node.configure(None)
    node.start()
    node.state()
    node.kill_if_up()
    node.start_if_down()
    node.pause_if_running()
    node.resume_if_paused()
    node.broker.stop(timeout_s=0.05)  # the fake ignores TERM: no 30 s wait for it
    node.wipe_data()
    node.log_files()
    node.tail_log()
    read_replica(node, f"t{value}-0")
    root = as_path(value)
    Daemon(node.remote, "d", ["java", value, "-cp", value], f"{root}/out.log",
           {"V": value}, workdir=root, run_dir=f"{root}/run").launch()


def nemesis_commands(cluster: Cluster) -> None:
    """Every command the partition, packet and clock faults build, and their heals."""
    parts = Resolver(0, lambda _c: Facts(partitions=lambda: {}, controller=lambda: "n1"))
    partition = PartitionNemesis(parts, partition_clients=True)
    partition.setup(cluster)
    partition.invoke(cluster, {"f": "start-partition", "value": "majority"})
    partition.invoke(cluster, {"f": "stop-partition"})
    partition.teardown(cluster)
    packet = PacketNemesis(Resolver(0))
    packet.setup(cluster)
    packet.invoke(cluster, {"f": "start-packet", "value": {"loss": 0.1, "rate-kbit": 100}})
    packet.invoke(cluster, {"f": "stop-packet"})
    packet.teardown(cluster)
    clock = ClockNemesis(Resolver(0))
    clock.setup(cluster)
    for f, value in [("bump-clock", {"target": "all", "delta-ms": 1500}),
                     ("strobe-clock", {"target": "n1", "delta-ms": 100, "period-ms": 10,
                                       "duration-s": 1}),
                     ("freeze-clock", {"target": "n2"}), ("reset-clock", {"target": "all"})]:
        clock.invoke(cluster, {"f": f, "value": value})
    clock.teardown(cluster)
    node = cluster.nodes["n1"]
    write_control(node.remote, "+1.000", node.root)
    faked_now(node.remote, node.root)
    clock_kind.residue(node)
    with contextlib.suppress(ClusterError):  # the fake has no quorum: its tool is asked too
        controller_of(cluster)


def ssh_host_commands(value: str, tmp_path: Path) -> Strict:
    """The SSH provisioner's own commands on a host whose base_dir is ``value``: jar sync,
    reset (manifest first), and down (heal, then remove what the manifest names)."""
    files: dict[str, str] = {}

    def answer(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        if argv[:2] == ("sh", "-c") and "write_file" in argv and stdin is not None:
            files[argv[argv.index("write_file") + 1]] = stdin
        if argv[:2] == ("sh", "-c") and argv[2].startswith("cat -- "):
            there = files.get(argv[4])
            return (0, there, "") if there is not None else (1, "", "")
        if argv[:2] == ("sh", "-c") and "java -version" in argv[2]:
            return 0, 'java version "17.0.9"\n', ""
        return 0, "", ""

    strict = Strict(answer)
    remote = FakeRemote("n1", strict)
    value = as_path(value)
    host = Host("n1", "10.0.0.1", 22, "kafka", tmp_path / "id", value)
    jars = tmp_path / "jars"
    (jars / "libs").mkdir(parents=True)
    (jars / "libs" / f"odd {MARK}.jar").write_text("x")
    home = f"{value}/kafka/4.1.2"
    host_setup.missing(remote)
    host_setup.sync_jars(remote, jars, home, host_setup.local_manifest(jars))
    host_setup.sync_jars(remote, jars, home, {})  # the odd jar is stale now: removed
    reset_host(remote, host, ClusterSpec(name="h"))
    assert clear_host(remote, host, "h")
    return strict


def removals(strict: Strict) -> list[tuple[str, ...]]:
    return [a for a in strict.argvs if a[:1] == ("rm",)]


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_values_stay_whole_arguments(value: str, tmp_path: Path) -> None:
    cluster, stricts, fakes = hostile_cluster(value)
    node_commands(cluster.nodes["n1"], value)
    nemesis_commands(cluster)
    ssh = ssh_host_commands(value, tmp_path)
    everyone = [*stricts.values(), ssh]
    problems = [p for s in everyone for p in s.problems]
    assert problems == []
    argvs = [a for s in everyone for a in s.argvs]
    assert len(argvs) > 80, "the builders ran"
    carried = [a for a in argvs if any(MARK in x for x in a)]
    assert len(carried) > 30, "the hostile value reached the commands, as arguments"
    broken = [a for a in carried if not arrives_intact(a)]
    assert broken == []
    # down removed exactly what up recorded, each path a whole argument after --
    recorded = [f"{as_path(value)}/{p}" for p in STATE_DIRS]
    manifest = f"{as_path(value)}/{created.MANIFEST}"
    assert removals(ssh)[-1:] == [("rm", "-rf", "--", *sorted(recorded))]
    assert manifest in ssh.argvs[-1], "then the manifest is emptied"
    assert fakes["n1"].iptables(), "the partition's rules were issued"


def manifest_host(text: str | None) -> tuple[FakeRemote, Host, list[tuple[str, ...]]]:
    """A host whose manifest holds ``text`` (``None``: no manifest)."""
    argvs: list[tuple[str, ...]] = []

    def answer(argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
        argvs.append(argv)
        if argv[:2] == ("sh", "-c") and argv[2].startswith("cat -- "):
            if argv[4].endswith(created.MANIFEST) and text is not None:
                return 0, text, ""
            return 1, "", ""
        return 0, "", ""

    host = Host("n1", "10.0.0.1", 22, "kafka", Path("/k"), "/srv/insync")
    return FakeRemote("n1", answer), host, argvs


@pytest.mark.parametrize(("manifest", "message"), [
    (None, "no /srv/insync/.insync-created.json"),
    ("", "no /srv/insync/.insync-created.json"),
    ("{not json", "is not a list of paths"),
    ('{"etc": 1}', "is not a list of paths"),
    (json.dumps(["/srv/insync/etc", "/etc"]), "names '/etc', outside /srv/insync"),
    (json.dumps(["/srv/insync/../../etc"]), "outside /srv/insync"),
    (json.dumps(["/srv/insync"]), "names '/srv/insync', outside"),
    (json.dumps(["/srv/insyncx/etc"]), "outside /srv/insync"),
], ids=["missing", "empty", "not-json", "not-a-list", "names-etc", "dotdot", "base-itself",
        "sibling-prefix"])
def test_down_refuses_without_a_manifest_of_paths_under_base_dir(
        manifest: str | None, message: str) -> None:
    remote, host, argvs = manifest_host(manifest)
    with pytest.raises(Exception, match=message) as err:
        clear_host(remote, host, None)
    assert "\n" not in str(err.value)
    assert not [a for a in argvs if a[:1] == ("rm",)], "nothing removed"
    assert not [a for a in argvs if a[:2] == ("sh", "-c") and "kill" in a[2]], "nothing stopped"


def test_down_removes_only_what_the_manifest_names() -> None:
    remote, host, argvs = manifest_host(json.dumps(["/srv/insync/etc", "/srv/insync/var"]))
    assert clear_host(remote, host, None)
    assert [a for a in argvs if a[:1] == ("rm",)] == [
        ("rm", "-rf", "--", "/srv/insync/etc", "/srv/insync/var")]
    assert f"/srv/insync/{created.MANIFEST}" in argvs[-1], "the manifest emptied last"


def test_a_down_repeated_on_a_cleared_host_clears_nothing_and_passes() -> None:
    remote, host, argvs = manifest_host("[]\n")  # what a finished down leaves
    assert clear_host(remote, host, None)
    assert not [a for a in argvs if a[:1] == ("rm",)], "nothing to remove"


def test_the_seam_check_itself_catches_text_and_options() -> None:
    """The checker is not vacuous: a value pasted into a script, or passed as an option,
    is reported, and a value split by the shell does not arrive intact."""
    strict = Strict(lambda _a, _s: (0, "", ""))
    remote = FakeRemote("n1", strict)
    remote.exec(["sh", "-c", f"rm -rf {HOSTILE['space']}"])
    remote.exec(["rm", "-rf", HOSTILE["leading-dash"]])
    assert len(strict.problems) == 2
    assert arrives_intact(("rm", HOSTILE["space"]))
    line = f"printf '%s\\0' {' '.join(('rm', HOSTILE['space']))}"  # pasted, not quoted
    out = subprocess.run(["sh", "-c", line], capture_output=True, check=True).stdout
    assert tuple(out.decode().split("\0")[:-1]) != ("rm", HOSTILE["space"])
