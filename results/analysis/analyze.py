"""Per-configuration metrics over the Parquet tables, and the comparison outputs.

Why these metrics: a nightly matrix asks "which configurations lose data, how
often, and what do faults cost?". Loss, duplicates and ordering violations are
rated per *acknowledged write* (ok send micro-ops) so runs of different length
compare; recovery is the time from a heal op to the next ok send of that run.

Availability is counted in seconds, not completions: ``avail_fault`` is the
share of the seconds with a fault in force in which at least one send was
acknowledged, ``avail_normal`` the same outside faults (the runs' coverage
blocks, ``results/coverage.py``). Per completion, a run whose producers were
blocked for 45 s looks ~95% available: each blocked send completes once, after
its timeout, among hundreds of empty ok polls. Beside them: acknowledged sends
per second and the live share of the main phase, the sends acknowledged while
a fault was in force, and ``poor_coverage``, the VALID runs whose coverage
``poor_coverage`` calls poor (their verdict proves little).

Heals, for recovery, come from nemesis completions in the history: a
``stop-*``, ``start``, ``resume`` or ``reset-clock`` heals a fault.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.base.contract import analysis_groups
from harness.base.errors import UsageError
from harness.base.faults import FAULT_KINDS, start_fs, stop_fs
from harness.base.paths import existing_dir, output_file, shown_path
from results.analysis.ingest import ANOMALIES, OPS, RUNS
from results.analysis.tables import (
    CONFIG_COLUMNS,
    METRIC_COLUMNS,
    SHORT,
    render_html,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: ops that open / heal a fault, from the fault-kind registry
STARTS, STOPS = start_fs(), stop_fs()
def fault_delta(f: Column) -> Column:
    """+1 for an op that opens a fault, -1 for one that heals, 0 otherwise."""
    from pyspark.sql import functions as F

    return (
        F.when(f.startswith("start-") | f.isin(*STARTS), F.lit(1))
        .when(f.startswith("stop-") | f.isin(*STOPS), F.lit(-1))
        .otherwise(F.lit(0))
    )


def run_metrics(spark: SparkSession, out: Path) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Per run (config, verdict counts, coverage, acked), client ops, recovery per heal."""
    from pyspark.sql import functions as F

    # mergeSchema: tables ingested before a column was added hold files without it (nulls)
    runs = spark.read.option("mergeSchema", "true").parquet(str(out / RUNS))
    ops = spark.read.parquet(str(out / OPS))
    events = ops.where(F.col("nemesis") & (F.col("type") != "invoke"))
    client = ops.where(~F.col("nemesis") & F.col("f").isin("send", "poll", "txn"))
    per_run = client.groupBy("run_id").agg(
        F.sum(F.when(F.col("type") == "ok", F.col("sends")).otherwise(0)).alias("acked"),
    )
    # time to recover: from each heal to the next ok send completion of the same run
    heals = events.where(fault_delta(F.col("f")) < 0).select(
        "run_id", F.col("time_ns").alias("heal_ns")
    )
    sends_ok = client.where((F.col("type") == "ok") & (F.col("sends") > 0)).select(
        "run_id", "time_ns"
    )
    recovery = (
        heals.join(sends_ok, "run_id")
        .where(F.col("time_ns") >= F.col("heal_ns"))
        .groupBy("run_id", "heal_ns")
        .agg(((F.min("time_ns") - F.col("heal_ns")) / 1e6).alias("recovery_ms"))
    )
    return with_history_faults(runs, events).join(per_run, "run_id", "left"), client, recovery


def with_history_faults(runs: DataFrame, events: DataFrame) -> DataFrame:
    """``faults`` from the fault kinds the history's nemesis ops started, where test.json
    names none: a scenario's script kills and pauses without ``--nemesis``."""
    from pyspark.sql import functions as F

    pairs = [(f, k.name) for k in FAULT_KINDS for f in k.starts]
    kind_of_f = F.create_map(*(F.lit(x) for pair in pairs for x in pair))
    seen = (
        events.where(F.col("f").isin(*STARTS))
        .groupBy("run_id")
        .agg(F.array_join(F.array_sort(F.collect_set(kind_of_f[F.col("f")])), "+").alias("seen"))
    )
    return (
        runs.join(seen, "run_id", "left")
        .withColumn("faults", F.when((F.col("faults") == "none") & F.col("seen").isNotNull(),
                                     F.col("seen")).otherwise(F.col("faults")))
        .drop("seen")
    )


def compare(spark: SparkSession, out: Path, by: tuple[str, ...] = CONFIG_COLUMNS) -> DataFrame:
    """The comparison table: one row per configuration, metrics in ``METRIC_COLUMNS``."""
    from pyspark.sql import functions as F

    runs, client, recovery = run_metrics(spark, out)
    keys = list(by)
    base = runs.groupBy(*keys).agg(
        F.count("*").alias("runs"),
        # runs whose drain never finished: their unseen values were not judged
        F.sum(F.when(F.col("cut_short"), 1).otherwise(0)).alias("cut_short"),
        F.sum("acked").alias("acked"),
        *(F.sum(c).alias(SHORT.get(c, c)) for c in analysis_groups()),
        F.count("poor_coverage").alias("poor_coverage"),  # VALID runs with a poor line
        (F.sum("acked_sends_main") / F.sum("main_s")).alias("acked_per_s"),
        (F.sum("live_seconds") / F.sum("seconds")).alias("live_share"),
        (F.sum("fault_live_seconds") / F.sum("fault_seconds")).alias("avail_fault"),
        (F.sum("normal_live_seconds") / F.sum("normal_seconds")).alias("avail_normal"),
        F.sum("fault_sends").alias("fault_sends"),
        # the longest read_committed stall of any run (null: no run was transactional)
        F.max("read_stall_s").alias("read_stall_max_s"),
        # the longest time a consumer group left a key unowned or unread (null: no group)
        F.max("unread_s").alias("unread_max_s"),
    )
    config = runs.select("run_id", *keys)
    latency = (
        client.where((F.col("type") == "ok") & F.col("latency_ns").isNotNull())
        .join(config, "run_id")
        .groupBy(*keys)
        .agg(
            (F.percentile("latency_ns", 0.5) / 1e6).alias("latency_p50_ms"),
            (F.percentile("latency_ns", 0.99) / 1e6).alias("latency_p99_ms"),
            (F.max("latency_ns") / 1e6).alias("latency_max_ms"),
        )
    )
    rec = (
        recovery.join(config, "run_id")
        .groupBy(*keys)
        .agg(
            F.percentile("recovery_ms", 0.5).alias("recovery_p50_ms"),
            F.max("recovery_ms").alias("recovery_max_ms"),
        )
    )
    table = base.join(latency, keys, "left").join(rec, keys, "left")
    # null-safe: a config whose every fault column is null still joins (left join on nulls)
    rates = {f"{name}_rate": name for name in ("lost", "ordering")} | {
        "duplicate_rate": "duplicates"}
    return table.select(
        *keys,
        *((F.col(rates[c]) / F.col("acked")).alias(c) if c in rates else c
          for c in METRIC_COLUMNS),
    ).orderBy(*keys)


def trend(spark: SparkSession, out: Path) -> list[dict[str, Any]]:
    """Per Kafka version and night (date): runs, loss rate, invalid runs."""
    from pyspark.sql import functions as F

    runs, _, _ = run_metrics(spark, out)
    rows = (
        runs.groupBy("kafka_version", "date")
        .agg(
            F.count("*").alias("runs"),
            F.sum(F.when(F.col("valid") == "false", 1).otherwise(0)).alias("invalid"),
            F.sum(F.when(F.col("cut_short"), 1).otherwise(0)).alias("cut_short"),
            F.sum("acked").alias("acked"),
            F.sum("lost_writes").alias("lost"),
        )
        .withColumn("lost_rate", F.col("lost") / F.col("acked"))
        .orderBy("kafka_version", "date")
        .collect()
    )
    return [r.asDict() for r in rows]


@dataclass(frozen=True)
class Outputs:
    """Where the comparison went."""

    csv: Path
    html: Path
    trend_csv: Path | None


def to_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Rows as CSV (header from the first row)."""
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


COMPARISON_CSV, TREND_CSV, REPORT_HTML = "comparison.csv", "trend.csv", "report.html"


def prepare_out(out: Path) -> Path:
    """The ``--out`` directory, created, once it is sure to hold the tables and outputs.

    Checked before Spark starts: a ``--out`` that names a file, or a
    ``report.html`` that is a directory, would otherwise fail only after a
    minute of ingestion, with a Java stack trace.
    """
    hint = "give --out a directory, which is created when missing, or leave --out out"
    try:
        there = out.exists() or out.is_symlink()
    except OSError:
        there = True  # let existing_dir say why (too long, a loop)
    if there:
        existing_dir(out, hint=hint, label="--out ")
    else:
        try:
            out.mkdir(parents=True)
        except OSError as err:
            raise UsageError(f"cannot create --out {shown_path(out)}: {err.strerror or err}",
                             hint=hint) from err
    in_the_way = "move it out of the way, or choose another --out"
    for table in (RUNS, OPS, ANOMALIES):
        if (out / table).exists() and not (out / table).is_dir():
            raise UsageError(f"{out / table} is a file where a Parquet table belongs",
                             hint=in_the_way)
    for name in (COMPARISON_CSV, TREND_CSV, REPORT_HTML):
        output_file(out / name, hint=in_the_way)
    return out


def write_outputs(
    rows: list[dict[str, Any]],
    trend_rows: list[dict[str, Any]],
    out: Path,
    by: tuple[str, ...] = CONFIG_COLUMNS,
) -> Outputs:
    """comparison.csv, report.html, and trend.csv when there are several nights."""
    columns = [*by, *METRIC_COLUMNS]
    csv_path = out / COMPARISON_CSV
    to_csv(rows, csv_path)
    nights = {r["date"] for r in trend_rows}
    several = len(nights) > 1
    trend_path = out / TREND_CSV if several else None
    if trend_path is not None:
        to_csv(trend_rows, trend_path)
    html_path = out / REPORT_HTML
    html_path.write_text(render_html(rows, columns, trend_rows if several else []))
    return Outputs(csv_path, html_path, trend_path)


def has_tables(out: Path) -> bool:
    """Whether an ingestion has written the tables the comparison reads."""
    return all((out / t).exists() for t in (RUNS, OPS))
