"""``insync cluster up|status|logs|down|smoke``: a real Kafka cluster in Docker.

The cluster's settings are the rows of ``harness.run.cluster_options``, the
same flags, converters, ranges and messages as ``insync run`` and ``insync
matrix`` (``--cluster-name``, ``--nodes``, ...). Every option is checked before
Docker is asked anything: values and ranges, names, the Kafka version and its
mode (``cluster.preflight``). ``up``, ``smoke`` and ``down`` then hold the
cluster's name (``cluster.lock``; ``down --all`` every name): while another
command holds it they are refused in one line, exit 69. ``status`` and ``logs``
only read, and take no lock. ``smoke`` removes the cluster at the end only if
``up`` returned it: a failure before that leaves a cluster of the same name
alone (and a half-built one stays for ``insync cluster logs``, as the
provisioner says).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.base.errors import ClusterError
from harness.run.cluster_options import CLUSTER_BY_NAME, CLUSTER_OPTIONS, ClusterOptions
from harness.run.values import Range, Spec, number, usable_dir, whole

READY_TIMEOUT = Spec("ready_timeout", number, "seconds to wait for the cluster (default: 180)",
                     "SECONDS", range=Range(0, 3600, open_lo=True))  # fmt: skip
LINES = Spec("lines", whole, "log lines per node (default: 40)", range=Range(1, 100_000))


def _add_name(p: argparse.ArgumentParser) -> None:
    """``--cluster-name`` and where its nodes are (``--hosts``, ``--accept-new-host-keys``)."""
    for name in ("cluster_name", "hosts", "accept_new_host_keys"):
        CLUSTER_BY_NAME[name].add_to(p)


def _options(args: argparse.Namespace) -> ClusterOptions:
    """The cluster settings given (or their defaults), checked before Docker is asked."""
    return ClusterOptions.from_flags(
        vars(args), hint=f"see `insync cluster {args.cluster_command} --help`"
    )


def _name(args: argparse.Namespace) -> str:
    """``--cluster-name``, checked (``down --cluster-name ''`` is not "every cluster")."""
    return _options(args).cluster_name


def _add_spec_options(p: argparse.ArgumentParser) -> None:
    for spec in CLUSTER_OPTIONS:
        spec.add_to(p)
    p.add_argument("--fresh", action="store_true", help="rebuild even if a matching cluster runs")
    p.add_argument("--ready-timeout", type=READY_TIMEOUT.arg_type(), default=180.0,
                   metavar="SECONDS", help=READY_TIMEOUT.help)  # fmt: skip


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "cluster", help="bring a real Kafka cluster up or down in Docker"
    )
    cmds = parser.add_subparsers(dest="cluster_command", metavar="ACTION")
    cmds.required = True

    p_up = cmds.add_parser("up", help="create (or reuse) a cluster and wait until it is ready")
    _add_spec_options(p_up)
    p_up.set_defaults(handler=_up)

    p_smoke = cmds.add_parser(
        "smoke", help="up, write and read back an acks=all check message, then down"
    )
    _add_spec_options(p_smoke)
    p_smoke.add_argument("--keep", action="store_true", help="leave the cluster running")
    p_smoke.set_defaults(handler=_smoke)

    p_status = cmds.add_parser("status", help="show each node: address, role, pid, status")
    _add_name(p_status)
    p_status.set_defaults(handler=_status)

    p_logs = cmds.add_parser("logs", help="show a node's log, or save every log to a directory")
    p_logs.add_argument("node", nargs="?", help="node to show (default: all)")
    _add_name(p_logs)
    p_logs.add_argument("--lines", type=LINES.arg_type(), default=40, help=LINES.help)
    p_logs.add_argument("--out", type=Path, default=None, help="save all log files here")
    p_logs.set_defaults(handler=_logs)

    p_down = cmds.add_parser("down", help="remove the cluster's containers, network and volumes")
    _add_name(p_down)
    p_down.add_argument("--all", action="store_true", help="every cluster insync created")
    p_down.set_defaults(handler=_down)


def _spec(args: argparse.Namespace) -> Any:
    """The cluster asked for, checked as far as it can be without Docker (or raise)."""
    from cluster import preflight

    spec = _options(args).cluster_spec()
    preflight.check(spec)
    return spec


def _say(text: str) -> None:
    print(f"insync: {text}", file=sys.stderr)


def _bring_up(args: argparse.Namespace, spec: Any) -> Any:
    """The provisioner's ``up``; a cluster it made that never became ready is kept for
    ``insync cluster logs``, and the error's one line says how to remove it."""
    from cluster import provisioner_for
    from cluster.model import NotReady

    try:
        return provisioner_for(_options(args).placement()).up(
            spec, fresh=args.fresh, say=_say, ready_timeout_s=args.ready_timeout
        )
    except NotReady as err:
        err.settle(removed=False)
        raise


def _up(args: argparse.Namespace) -> int:
    from cluster.lock import cluster_lock

    spec = _spec(args)
    started = time.monotonic()
    with cluster_lock(spec.name):
        cluster = _bring_up(args, spec)
    _say(
        f"cluster {spec.name!r} ready in {time.monotonic() - started:.1f}s; "
        f"bootstrap {cluster.bootstrap}"
    )
    _print_table(cluster)
    return 0


def _smoke(args: argparse.Namespace) -> int:
    from cluster.lock import cluster_lock

    spec = _spec(args)
    with cluster_lock(spec.name):
        _smoke_locked(args, spec)
    return 0


def _smoke_locked(args: argparse.Namespace, spec: Any) -> None:
    """up, the check message, down: with the cluster's name held by ``_smoke``."""
    from cluster import provisioner_for
    from cluster.eras import release
    from cluster.smoke import write_and_read_back

    started = time.monotonic()
    owned = False  # up() returned the cluster: from then on it is ours to remove
    try:
        cluster = _bring_up(args, spec)
        owned = True
        _say(f"cluster ready in {time.monotonic() - started:.1f}s")
        _print_table(cluster)
        offset, message = write_and_read_back(
            cluster.bootstrap, spec.replication_factor(),
            release(spec.kafka_version),
        )
        print(f"ok: wrote {message!r} with acks=all at offset {offset} and read it back")
    finally:
        if owned and not args.keep:
            removed = provisioner_for(_options(args).placement()).down(spec.name)
            _say(f"cluster {spec.name!r} removed ({removed})")


def _status(args: argparse.Namespace) -> int:
    from cluster import provisioner_for

    cluster = provisioner_for(_options(args).placement()).attach(_name(args))
    _print_table(cluster, with_controller=True)
    return 0


def _print_table(cluster: Any, with_controller: bool = False) -> None:
    from cluster.metadata import active_controller
    from cluster.metadata import registered as registered_of

    caption = None
    try:
        registered = registered_of(cluster)
    except Exception as err:  # refused or timed out: the table still shows the nodes
        registered = set()
        caption = f"which brokers are registered is unknown: {err}"
    controller = None
    if with_controller:
        try:
            controller = active_controller(cluster)
        except ClusterError:
            controller = None
    table = Table(
        title=f"cluster {cluster.spec.name}: Kafka {cluster.version.version} ({cluster.spec.mode})",
        caption=caption,
    )
    for col in ("node", "address", "role", "pid", "status"):
        table.add_column(col)
    for node in cluster.nodes.values():
        roles = node.roles
        if controller == node.name:
            roles = [*roles, "active-controller"]
        state = node.state()
        status = (
            state
            if state != "running"
            else ("registered" if node.name in registered else "running")
        )
        table.add_row(node.name, node.address, ",".join(roles), str(node.pid() or "-"), status)
    Console().print(table)


def _logs(args: argparse.Namespace) -> int:
    from cluster import provisioner_for

    name = _name(args)
    if args.out is not None:
        usable_dir(args.out, "--out")
    cluster = provisioner_for(_options(args).placement()).attach(name)
    nodes = [cluster.node(args.node)] if args.node else list(cluster.nodes.values())
    if args.out is not None:
        for node in nodes:
            saved = node.collect_logs(args.out)
            _say(f"{node.name}: saved {len(saved)} file(s) under {args.out / node.name}")
        return 0
    for node in nodes:
        print(f"==> {node.name} <==")
        print(node.tail_log(args.lines), end="")
    return 0


def _down(args: argparse.Namespace) -> int:
    from cluster import provisioner_for
    from cluster.lock import cluster_lock, every_cluster_lock

    name = _name(args)
    placement = _options(args).placement()
    with every_cluster_lock() if args.all else cluster_lock(name):
        removed = provisioner_for(placement).down(None if args.all else name)
    what = "every insync cluster" if args.all else f"cluster {name!r}"
    _say(f"removed {what}: {removed}")
    return 0
