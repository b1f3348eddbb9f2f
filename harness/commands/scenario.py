"""``insync scenario list|show|run``: the catalogue of reported Kafka bugs, as data.

Scenarios are TOML files (``harness/scenario/catalogue/``, format in its
README); ``--scenario-dir DIR`` and ``--scenario-file FILE`` (both repeatable)
add the user's own, read and checked by the same loader, so a malformed file
is one line, exit 64, naming the file and the key, whichever command reads it.

``run`` exits 0 when every run ended as the scenario expects on that version
(``Expectation.matches``; an ``unknown`` verdict never does), 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run import RunOptions, RunResult
    from harness.scenario import Scenario
    from harness.scenario.runs import Case, CaseResult


def _add_sources(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scenario-dir", action="append", default=[], metavar="DIR",
                   help="also read every *.toml scenario in DIR (repeatable)")
    p.add_argument("--scenario-file", action="append", default=[], metavar="FILE",
                   help="also read this scenario file (repeatable)")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "scenario", help="reported Kafka bugs as scripted scenarios: list, show, run",
        description="Scenarios reproduce reported Kafka data-loss bugs: a fault script that "
        "waits for cluster state, the settings the bug needs, and the outcome expected on "
        "each Kafka version (anomalies where the bug exists, valid where it was fixed).",
    )
    cmds = parser.add_subparsers(dest="scenario_command", metavar="ACTION")
    cmds.required = True
    p_list = cmds.add_parser("list", help="every scenario: its bug, affected and fixed versions")
    _add_sources(p_list)
    p_list.set_defaults(handler=_list)
    p_show = cmds.add_parser("show", help="one scenario: story, sources, settings, fault "
                             "script, expected outcome per version")
    p_show.add_argument("name", help="the scenario's name (see `insync scenario list`)")
    _add_sources(p_show)
    p_show.set_defaults(handler=_show)
    p_run = cmds.add_parser(
        "run", help="run one scenario on one Kafka version --runs times; exit 0 when every "
        "run ends as expected there",
        description="Run the scenario (or --variant) on --kafka-version (or on your own "
        "build, --kafka-dist) through `insync run`, "
        "--runs times (runs already stored and complete are not run again), print each "
        "run's verdict, expected vs observed and 'reproduced k of N' (runs that ended as "
        "the scenario expects on that version). Exit 0 when all did, 1 when not; an "
        "unknown verdict never counts as expected.")
    p_run.add_argument("name", help="the scenario's name (see `insync scenario list`)")
    from harness.run.options import BY_NAME

    BY_NAME["kafka_version"].add_to(p_run)
    BY_NAME["kafka_dist"].add_to(p_run)
    p_run.add_argument("--variant", default=None, metavar="NAME",
                       help="run this variant (a negative control) instead")
    add_run_flags(p_run)
    p_run.set_defaults(handler=_run)


def _catalogue(args: argparse.Namespace) -> dict[str, Scenario]:
    from harness.scenario import load_catalogue

    return load_catalogue(args.scenario_dir, args.scenario_file)


def _list(args: argparse.Namespace) -> int:
    from harness.scenario.render import list_table

    print(list_table(_catalogue(args)), file=sys.stdout, flush=True)
    return 0


def _show(args: argparse.Namespace) -> int:
    from harness.scenario import find
    from harness.scenario.render import show

    print(show(find(_catalogue(args), args.name)), file=sys.stdout, flush=True)
    return 0


# -- insync scenario run ------------------------------------------------------------------


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """The flags ``scenario run`` and ``catalogue`` share: runs, results dir, keep-cluster,
    and where the nodes are (the cluster options a scenario leaves to its caller),
    each declared once in the run's option tables."""
    from harness.matrix import RUNS
    from harness.run.options import BY_NAME
    from harness.scenario.runs import PLACEMENT

    p.add_argument("--runs", type=RUNS.arg_type(), default=1, metavar=RUNS.metavar,
                   help="runs of each scenario on each version (default: 1)")
    BY_NAME["results_dir"].add_to(p)
    p.add_argument("--keep-cluster", action="store_true",
                   help="leave the last cluster running at the end")
    for name in PLACEMENT:
        BY_NAME[name].add_to(p)
    _add_sources(p)


def given(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, Any]:
    """The run options among ``names`` that were typed, converted by their table rows."""
    from harness.run.options import convert

    return convert({k: getattr(args, k) for k in names if hasattr(args, k)})


def drive(args: argparse.Namespace, cases: list[Case], label: str) -> list[CaseResult]:
    """Run the cases as ``insync matrix`` runs its grid (resume, cluster reuse, teardown)."""
    from cluster import provisioner_for
    from harness.run import run
    from harness.run.cluster_options import ClusterOptions
    from harness.scenario.runs import run_cases

    def say(text: str) -> None:
        print(text, file=sys.stdout, flush=True)

    def run_one(opts: RunOptions, *, say: Callable[[str], None] | None = say,
                on_cluster: Callable[[str], None] | None = None) -> RunResult:
        return run(opts, say=say, live=False, on_cluster=on_cluster)

    def down(name: str) -> object:
        opts = cases[0].combo.opts  # every case shares the placement flags
        where = ClusterOptions(hosts=opts.hosts, accept_new_host_keys=opts.accept_new_host_keys)
        return provisioner_for(where.placement()).down(name)

    results, _ = run_cases(cases, args.runs, run_fn=run_one, say=say, down=down,
                           keep_cluster=args.keep_cluster, label=label)
    return results


def build_of(args: argparse.Namespace) -> Any:
    """The user's build ``--kafka-dist`` names, read and checked (``KafkaDist``), and
    refused if a ``--kafka-version`` typed beside it names another; None without it."""
    from cluster.kafka_dist import inspect_dist
    from harness.run.cluster_options import check_dist_pair

    flags = given(args, ("kafka_dist", "kafka_version"))
    if "kafka_dist" not in flags:
        return None
    check_dist_pair(flags, flags)
    return inspect_dist(flags["kafka_dist"])


def _run(args: argparse.Namespace) -> int:
    from cluster.versions import resolve_version
    from harness.base.errors import UsageError
    from harness.scenario import find
    from harness.scenario.runs import PLACEMENT, make_case
    from harness.scenario.table import scenario_summary

    s = find(_catalogue(args), args.name)
    if args.variant is not None:
        s.variant(args.variant)
    build = build_of(args)
    if build is None and not hasattr(args, "kafka_version"):
        covers = ", ".join(v.line for v in s.covered(args.variant))
        raise UsageError("scenario run needs --kafka-version or --kafka-dist",
                         hint=f"{s.name} covers {covers}")
    flags = given(args, ("kafka_version", "results_dir", *PLACEMENT))
    version = resolve_version(flags.pop("kafka_version")) if build is None else build.kafka
    flags.pop("kafka_version", None)
    results_dir = flags.pop("results_dir", "results")
    case = make_case(s, version, args.variant, results_dir=results_dir, placement=flags,
                     build=build)
    (result,) = drive(args, [case], "scenario")
    print(scenario_summary(result), flush=True)
    return 0 if result.ok else 1
