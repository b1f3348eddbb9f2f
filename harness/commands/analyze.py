"""``insync analyze [RESULTS_DIR] [--master URL] [--out DIR]``: many runs compared, with Spark.

Ingests every finished run under RESULTS_DIR (default ``./results``) that is
not yet in the Parquet tables under ``--out`` (default ``RESULTS_DIR/parquet``;
schema in results/PARQUET.md), then prints the per-configuration comparison
and writes ``comparison.csv``, ``report.html`` (loss-rate heatmap, no network)
and, with runs from several nights, ``trend.csv``. Spark is imported only here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from harness.base.errors import UsageError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "analyze",
        help="compare many runs by configuration (Spark; Parquet tables, CSV, HTML heatmap)",
        description="Ingest run directories into Parquet (incrementally) and compare "
        "configurations: lost writes, duplicates, ordering violations, unseen, coverage "
        "(acknowledged sends/s, live seconds in and outside faults, VALID runs whose coverage "
        "was poor), latency, time to recover.",
    )
    parser.add_argument(
        "results",
        nargs="?",
        default="results",
        metavar="RESULTS_DIR",
        help="directory of runs (<test>/<timestamp>/); default ./results",
    )
    parser.add_argument("--master", default="local[2]", metavar="URL", help="Spark master")
    parser.add_argument(
        "--out", metavar="DIR", help="where the tables and outputs go (default RESULTS_DIR/parquet)"
    )
    parser.add_argument(
        "--by",
        default=None,
        metavar="COLS",
        help="comma-separated configuration columns to group by (default: all of "
        "kafka_version,acks,min_insync,unclean_leader_election,faults,txn)",
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from checkers.spark import spark_session
    from harness.base.paths import existing_dir
    from results.analysis import (
        CONFIG_COLUMNS,
        METRIC_COLUMNS,
        compare,
        has_tables,
        ingest,
        prepare_out,
        read_runs,
        render_terminal,
        trend,
        write_outputs,
    )

    root = existing_dir(Path(args.results), hint="pass the directory holding the runs")
    by = tuple(c.strip() for c in args.by.split(",")) if args.by else CONFIG_COLUMNS
    unknown = [c for c in by if c not in CONFIG_COLUMNS]
    if unknown:
        raise UsageError(
            f"unknown --by column(s): {', '.join(unknown)}",
            hint="choose from " + ", ".join(CONFIG_COLUMNS),
        )
    try:
        os.listdir(root)
    except OSError as err:  # before --out is made: a refusal leaves nothing behind
        raise UsageError(f"cannot read {root}: {err.strerror or err}",
                         hint="pass a results directory you can read") from None
    out_path = Path(args.out) if args.out else root / "parquet"
    if os.path.lexists(out_path):
        prepare_out(out_path)  # an --out in the way is refused now; a missing one is made later
    # every run's small files are read and checked before Spark starts (seconds)
    found = read_runs(root)
    for skip in found[1]:
        print(f"insync: skipping {skip.run_id}: {skip.why}", file=sys.stderr)
    if not found[0] and not has_tables(out_path):
        print(f"ingested 0 new run(s); skipped {len(found[1])} unreadable", flush=True)
        print("no finished runs to compare", file=sys.stderr)
        return 0
    out = prepare_out(out_path)
    started = time.perf_counter()
    spark_s = 0.0
    marks: list[tuple[str, float]] = []
    with spark_session(args.master, app_name="insync-analyze") as spark:
        marks.append(("session", time.perf_counter()))
        report = ingest(spark, root, out, found)
        marks.append(("ingest", time.perf_counter()))
        for skip in report.skipped[len(found[1]):]:  # histories coverage could not be read from
            print(f"insync: skipping {skip.run_id}: {skip.why}", file=sys.stderr)
        print(
            f"ingested {len(report.ingested)} new run(s); {report.already} already in {out}"
            + (f"; skipped {len(report.skipped)} unreadable" if report.skipped else "")
        )
        if report.already + len(report.ingested) == 0:
            print("no finished runs to compare", file=sys.stderr)
            return 0
        rows = [r.asDict() for r in compare(spark, out, by).collect()]
        trend_rows = trend(spark, out)
        marks.append(("compare", time.perf_counter()))
        spark_s = time.perf_counter() - started
    outputs = write_outputs(rows, trend_rows, out, by)
    print(render_terminal(rows, [*by, *METRIC_COLUMNS]), end="")
    print(
        f"wrote {outputs.csv}, {outputs.html}"
        + (f", {outputs.trend_csv}" if outputs.trend_csv else "")
    )
    marks.append(("stop+outputs", time.perf_counter()))
    total = time.perf_counter() - started
    steps, last = [], started
    for name, at in marks:
        steps.append(f"{name} {at - last:.1f}s")
        last = at
    print("timings: " + ", ".join(steps))
    # Spark's share: session start, ingestion and the comparison queries; the rest is
    # Python rendering and writing the outputs
    print(f"spark: {spark_s:.1f}s of {total:.1f}s ({100 * spark_s / total:.0f}%)")
    return 0
