"""``insync check PATH``: judge a history and exit 0 valid, 1 invalid, 2 unknown, 3 malformed.

PATH is a history file or a run directory containing ``history.jsonl``.
Malformed input raises ``HistoryError``, which ``harness.cli`` turns into a
one-line message naming the line and exit status 3. Warnings the verdict
carries (a last line cut short by a crash, dropped) go to stderr, one line
each, so ``--json`` output stays pure JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from harness.base.contract import checked_by
from harness.base.errors import UsageError
from harness.base.rundir import RunDir


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "check",
        help="check a history for lost, duplicated, reordered or aborted data",
        description="Check a queue/transaction history (docs/HISTORY.md). "
        "Exit status: 0 valid, 1 invalid, 2 unknown, 3 unreadable or malformed input.",
    )
    parser.add_argument("path", metavar="PATH", help="a history .jsonl or a run directory")
    parser.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    parser.add_argument(
        "--ww-deps",
        action="store_true",
        help="add write-write edges from the version order to the cycle search (G0, G1c)",
    )
    parser.add_argument(
        "--max-anomalies",
        type=int,
        default=1000,
        metavar="N",
        help="examples kept per anomaly type (true counts are always reported; default 1000)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="processes that read and judge the history (default: one per core, fewer for "
        "files under 4 MiB per core; at most one per core); the verdict does not depend on it",
    )
    parser.add_argument(
        "--engine",
        choices=("memory", "spark"),
        default="memory",
        help="memory: every anomaly type (default); spark: "
        + ", ".join(checked_by("spark")) + " only, for histories larger than memory",
    )
    parser.add_argument(
        "--master",
        default="local[2]",
        metavar="URL",
        help="with --engine spark: the Spark master (default local[2])",
    )
    parser.add_argument(
        "--junit",
        metavar="FILE",
        help="also write the verdict as JUnit XML for CI (one test case per anomaly type)",
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from checkers import check, exit_code, render_verdict

    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more", hint=f"got {args.jobs}")
    if args.max_anomalies < 0:
        raise UsageError("--max-anomalies must be 0 or more", hint=f"got {args.max_anomalies}")
    engine = getattr(args, "engine", "memory")
    verdict = check(
        args.path,
        engine=engine,
        ww_deps=args.ww_deps,
        max_anomalies=args.max_anomalies,
        jobs=_capped(getattr(args, "jobs", None)),
        master=getattr(args, "master", "local[2]"),
    )
    if engine != "memory" and not args.json:
        print(f"engine {engine}: checked " + ", ".join(verdict["checked-types"]) + " only")
    verdict = _judged_as_stored(verdict, _run_dir(args.path))
    for warning in verdict.get("warnings", []):
        print(f"insync: warning: {warning}", file=sys.stderr)
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(verdict) + b"\n")
        sys.stdout.flush()
    else:
        print(render_verdict(verdict))
    if args.junit:
        from results.report import write_junit

        try:
            write_junit(verdict, args.junit, name=_run_name(args.path))
        except OSError as err:
            raise UsageError(f"cannot write --junit {args.junit}: {err.strerror}",
                             hint="pick a writable path") from err
    if not args.json:
        from results.report import render_summary

        print()
        print(render_summary(verdict, _run_dir(args.path)))
    return exit_code(verdict)


def _judged_as_stored(verdict: dict[str, Any], run_dir: Path | None) -> dict[str, Any]:
    """The verdict the run itself reached: a run directory whose test.json records that
    the drain never finished (``harness.base.drain``) leaves the types needing it unjudged.
    A bare history, or a test.json without the record, is judged in full."""
    from checkers import without_drain
    from harness.base.drain import drain_finished
    from harness.base.errors import HistoryError

    if run_dir is None:
        return verdict
    run = RunDir(run_dir)
    try:
        finished = drain_finished(run.test())
    except HistoryError as err:
        print(f"insync: warning: {err.one_line()}; judged as a bare history", file=sys.stderr)
        return verdict
    if finished is not False:
        return verdict
    why = "the run was cut short"
    try:
        stored = run.verdict() or {}
    except HistoryError:
        stored = {}
    signal = (stored.get("run") or {}).get("signal")
    return without_drain(verdict, f"{why} by {signal}" if isinstance(signal, str) else why)


def _capped(jobs: int | None) -> int | None:
    """``--jobs`` above the core count only adds forking and merging: cap it, and say so."""
    cores = os.cpu_count() or 1
    if jobs is None or jobs <= cores:
        return jobs
    print(
        f"insync: note: --jobs {jobs} is more than the {cores} cores here; using {cores}",
        file=sys.stderr,
    )
    return cores


def _run_dir(path: str) -> Path | None:
    """The run directory PATH names or sits in (for the report's path), if any."""
    p = Path(path)
    if p.is_dir():
        return p
    beside = RunDir(p.parent)
    if beside.test_path.is_file() or beside.results_path.is_file():
        return p.parent
    return None


def _run_name(path: str) -> str:
    """The suite name for JUnit: the test's name and timestamp, or the file's name."""
    run_dir = _run_dir(path)
    if run_dir is None:
        return Path(path).stem
    resolved = run_dir.resolve()
    try:
        name = orjson.loads(RunDir(resolved).test_path.read_bytes())["name"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        name = resolved.parent.name
    return f"{name}/{resolved.name}"

