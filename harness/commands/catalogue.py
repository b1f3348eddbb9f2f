"""``insync catalogue``: every scenario (and variant) on every Kafka version it covers.

Resumable like ``insync matrix`` (the same machine: a run stored and complete
is not run again), it prints and stores (``catalogue.json``, ``catalogue.md``
in the results dir) the versions x scenarios table: runs that ended as the
scenario expects out of runs, expected and observed per cell. Exit 0 when
every run of every cell ended as expected, 1 when not.
"""

from __future__ import annotations

import argparse
from typing import Any

from harness.commands.scenario import _catalogue, add_run_flags, build_of, drive, given


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "catalogue", help="every scenario on every version it covers, resumably; the "
        "versions x scenarios table",
        description="Run every scenario and variant (--scenarios filters) on every Kafka "
        "version it covers (--versions filters), or on your own build (--kafka-dist: one "
        "column, the expectations of its version), --runs times, skipping runs already stored "
        "and complete; print and store the table (catalogue.json, catalogue.md in the "
        "results dir). Exit 0 when every run ended as expected, 1 when not.")
    p.add_argument("--scenarios", default=None, metavar="A,B",
                   help="only these scenarios (default: all; see `insync scenario list`)")
    p.add_argument("--versions", default=None, metavar="X,Y",
                   help="only these Kafka versions, e.g. 3.9,4.1, or ranges of the table's "
                   "columns, e.g. 2.8.. (default: each scenario's)")
    from harness.run.options import BY_NAME

    BY_NAME["kafka_dist"].add_to(p)
    add_run_flags(p)
    p.set_defaults(handler=_handle)


def _items(raw: str | None) -> list[str] | None:
    if raw is None:
        return None
    return [x.strip() for x in raw.split(",") if x.strip()]


def _versions(wanted: list[str] | None) -> list[Any] | None:
    """Each item a version, or a range (``2.8..``) standing for the table's columns in it."""
    from harness.scenario.ranges import expand_versions

    return None if wanted is None else list(expand_versions(wanted))


def _handle(args: argparse.Namespace) -> int:
    from harness.base.errors import UsageError
    from harness.scenario.runs import PLACEMENT, catalogue_cases
    from harness.scenario.table import catalogue_text, store

    build = build_of(args)
    if build is not None and args.versions is not None:
        raise UsageError(f"--kafka-dist {build.path} is one build: it takes no --versions",
                         hint="drop --versions, or run the releases without --kafka-dist")
    flags = given(args, ("results_dir", *PLACEMENT))
    results_dir = flags.pop("results_dir", "results")
    versions = _versions(_items(args.versions))
    cases = catalogue_cases(_catalogue(args), _items(args.scenarios), versions,
                            results_dir=results_dir, placement=flags, build=build)
    results = drive(args, cases, "catalogue")
    print(catalogue_text(results, args.runs), flush=True)
    for path in store(results, args.runs, results_dir):
        print(f"stored {path}", flush=True)
    return 0 if all(r.ok for r in results) else 1
