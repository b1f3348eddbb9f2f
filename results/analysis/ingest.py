"""Incremental ingestion of run directories into the Parquet tables of results/PARQUET.md.

Why incremental: a nightly matrix adds a few dozen runs to thousands; re-reading
every history each night would grow without bound. The ``runs`` table is the
ledger: a run is ingested when its row is there, so a second ``insync analyze``
over the same directory adds nothing, and a run still in progress (no
``results.json`` yet) is left for the next time. ``ops`` and ``anomalies`` are
written first, partitioned by run with dynamic partition overwrite, and the
``runs`` rows last: a crash in between leaves partitions that the next
ingestion overwrites, never a double count.

Histories are read by Spark (``spark.read.text`` + ``from_json``), never line
by line in Python, with one exception: a run whose results.json has no
coverage block (``run.coverage``, written by every run since coverage
existed) gets one computed from its history by ``results.run_coverage``, the
function the report uses, once, when it is ingested. test.json/results.json
are small and read first, without Spark, through ``harness.base.rundir.RunDir``
(``read_runs``), which shape-checks them: a malformed run is skipped with a
line naming its bad file, never the whole ingestion aborted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from checkers import describe_rewinds, read_stalls_in
from harness.base.contract import analysis_groups
from harness.base.drain import drain_finished
from harness.base.errors import HistoryError
from harness.base.paths import existing_dir, printable
from harness.base.rundir import RunDir
from results.coverage import outside_faults
from results.run_coverage import RunCoverage, run_coverage

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

RUNS, OPS, ANOMALIES = "runs", "ops", "anomalies"
RUN_SCHEMA = (
    "run_id string, test_name string, started string, date string, seed long, "
    "synthetic boolean, kafka_version string, kafka_version_exact string, mode string, "
    "nodes int, acks string, idempotence boolean, txn boolean, max_in_flight int, "
    "replication_factor int, min_insync int, unclean_leader_election boolean, "
    "faults string, nemesis_interval double, valid string, anomaly_types string, "
    "bad_anomaly_types string, "
    + "".join(f"{column} long, " for column in analysis_groups())
    + "history_ops long, duration_s double, cut_short boolean, read_stall_s double, "
    "unread_s double, abort_rewinds string, path string, "
    "scenario string, scenario_variant string, scenario_expected string, "
    "scenario_as_expected boolean, "
    "coverage_window string, main_s double, acked_sends_main long, seconds long, "
    "live_seconds long, fault_seconds long, fault_live_seconds long, fault_sends long, "
    "normal_seconds long, normal_live_seconds long, poor_coverage string, coverage string"
)
OPS_SCHEMA = "index long, time long, process string, type string, f string, value string"


@dataclass(frozen=True)
class Skipped:
    """A run left out of the ingestion, and why: one line that names the bad file."""

    run_id: str
    why: str


@dataclass(frozen=True)
class FoundRun:
    """A finished run whose test.json and results.json have been read and shape-checked."""

    run_id: str
    path: Path
    test: dict[str, Any]
    verdict: dict[str, Any]


@dataclass(frozen=True)
class IngestReport:
    """What one ingestion did. ``skipped`` lists the runs ``read_runs`` refused first, then
    those whose coverage could not be counted from their history."""

    found: int
    already: int
    ingested: list[str]
    skipped: list[Skipped]


def run_id(results_root: Path, run_dir: Path) -> str:
    """``<test-name>/<timestamp>``: the run's path under the results root."""
    return run_dir.resolve().relative_to(results_root.resolve()).as_posix()


def find_runs(results_root: Path) -> list[Path]:
    """Finished run directories (test.json, history.jsonl and results.json present)."""
    existing_dir(results_root, hint="pass the directory holding the runs")
    found = []
    for test in sorted(results_root.glob("*/*/test.json")):
        d = test.parent
        if d.is_symlink():
            continue  # ``latest`` and friends point at runs listed anyway
        if (d / "history.jsonl").is_file() and (d / "results.json").exists():
            found.append(d)
    return found


def read_runs(results_root: Path) -> tuple[list[FoundRun], list[Skipped]]:
    """Every finished run's files, read and shape-checked in plain Python, before any Spark.

    A run whose test.json or results.json is malformed is skipped with the
    reason (``harness.base.rundir`` names the file and the field): one bad run among a
    thousand must not stop the other 999 from being compared.
    """
    runs: list[FoundRun] = []
    skipped: list[Skipped] = []
    for d in find_runs(results_root):
        rid = run_id(results_root, d)
        if printable(str(d.resolve())) != str(d.resolve()):  # Spark's tables hold UTF-8 only
            skipped.append(Skipped(printable(rid), "its path is not UTF-8 (rename the "
                                   "directory to compare it)"))
            continue
        try:
            test = RunDir(d).test()
            verdict = RunDir(d).verdict()
        except HistoryError as err:
            log.info("skipping %s: %s", d, err.one_line())
            skipped.append(Skipped(rid, err.one_line()))
            continue
        if test is not None and verdict is not None:  # both present: find_runs saw them
            runs.append(FoundRun(rid, d, test, verdict))
    return runs, skipped


def ingested_ids(spark: SparkSession, out: Path) -> set[str]:
    """Run ids already in the ledger (the ``runs`` table)."""
    table = out / RUNS
    if not table.exists():
        return set()
    return {r["run_id"] for r in spark.read.parquet(str(table)).select("run_id").collect()}


def ingest(spark: SparkSession, results_root: Path, out: Path,
           found: tuple[list[FoundRun], list[Skipped]] | None = None) -> IngestReport:
    """Add every run under ``results_root`` not yet in ``out`` to the three tables.

    ``found`` is ``read_runs(results_root)`` when the caller has already read them
    (``insync analyze`` does, to report bad runs before starting Spark).
    """
    runs, unreadable = found if found is not None else read_runs(results_root)
    skipped = list(unreadable)
    done = ingested_ids(spark, out)
    rows: list[dict[str, Any]] = []
    anomalies: list[dict[str, Any]] = []
    histories: dict[str, str] = {}
    for run in runs:
        if run.run_id in done:
            continue
        try:
            cov = run_coverage(run.path, run.test, run.verdict)
        except HistoryError as err:  # no block, and a history it cannot be counted from
            log.info("skipping %s: %s", run.path, err.one_line())
            skipped.append(Skipped(run.run_id, err.one_line()))
            continue
        rows.append(run_row(run.run_id, run.path, run.test, run.verdict, cov))
        anomalies.extend(anomaly_rows(run.run_id, run.verdict))
        histories[run.run_id] = str((run.path / "history.jsonl").resolve())
    if rows:
        _write_ops(spark, histories, out)
        if anomalies:
            spark.createDataFrame(anomalies, ANOMALY_SCHEMA).write.mode("overwrite").partitionBy(
                "run_id"
            ).parquet(str(out / ANOMALIES))
        spark.createDataFrame(rows, RUN_SCHEMA).coalesce(1).write.mode("append").parquet(
            str(out / RUNS)
        )
    return IngestReport(len(runs) + len(unreadable), len(done), [r["run_id"] for r in rows],
                        skipped)


ANOMALY_SCHEMA = "type string, bad boolean, count long, key string, example string, run_id string"


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def run_row(rid: str, d: Path, test: dict[str, Any], verdict: dict[str, Any],
            cov: RunCoverage | None = None) -> dict[str, Any]:
    """One ``runs`` row: config flattened from test.json, verdict summary from results.json,
    coverage from ``cov`` (null columns without it)."""
    cluster = test.get("cluster") or {}
    work = test.get("workload") or {}
    nem = test.get("nemesis") or {}
    counts = verdict.get("anomaly-counts") or {
        t: len(v) for t, v in (verdict.get("anomalies") or {}).items()
    }
    unseen_examples = (verdict.get("anomalies") or {}).get("unseen", [])
    started = str(test.get("started") or "")
    faults = nem.get("faults") or []
    stats = verdict.get("stats") or {}
    summary = verdict.get("run") or {}
    valid = verdict.get("valid")
    return {
        "run_id": rid,
        "test_name": test.get("name"),
        "started": started,
        "date": started[:10] or None,
        "seed": _int(test.get("seed")),
        "synthetic": bool(test.get("synthetic", False)),
        "kafka_version": _kafka_label(cluster),
        "kafka_version_exact": cluster.get("kafka_version_exact"),
        "mode": cluster.get("mode"),
        "nodes": _int(cluster.get("nodes")),
        "acks": None if work.get("acks") is None else str(work.get("acks")),
        "idempotence": _flag(work.get("idempotence")),
        "txn": _flag(work.get("txn")),
        "max_in_flight": _int(work.get("max_in_flight")),
        "replication_factor": _int(work.get("replication_factor")),
        "min_insync": _int(work.get("min_insync")),
        "unclean_leader_election": _flag(work.get("unclean_leader_election")),
        "faults": "+".join(sorted(str(f) for f in faults)) or "none",
        "nemesis_interval": None if nem.get("interval") is None else float(nem["interval"]),
        "valid": str(valid).lower() if isinstance(valid, bool) else str(valid),
        "anomaly_types": ",".join(verdict.get("anomaly-types") or []),
        "bad_anomaly_types": ",".join(verdict.get("bad-anomaly-types") or []),
        # a column per group of the registry: the true counts of its types
        **{column: sum(int(counts.get(t, 0)) for t in types)
           for column, types in analysis_groups().items()},
        # but unseen is one anomaly per key: its examples carry the number of values
        "unseen": sum(_int(a.get("count")) or 0 for a in unseen_examples),
        "history_ops": _int(stats.get("ops")),
        "duration_s": None if summary.get("duration_s") is None else float(summary["duration_s"]),
        # the drain never finished (a signal, an error, a kill): unseen was not judged
        "cut_short": drain_finished(test) is False or summary.get("interrupted") is True,
        "read_stall_s": read_stall(d, stats, work),
        "unread_s": _longest(stats.get("group-unread-keys")),
        "abort_rewinds": describe_rewinds(stats.get("abort-rewinds") or {}) or None,
        "path": str(d.resolve()),
        **scenario_columns(test),
        **coverage_columns(cov),
    }


def read_stall(d: Path, stats: dict[str, Any], work: dict[str, Any]) -> float | None:
    """The run's longest read_committed stall (docs/HISTORY.md "Read stalls"): the
    verdict's, or measured from the history of a transactional run judged before the
    checker took it; None for a run that is not transactional."""
    block = stats.get("read-committed-stalls")
    if block is None and work.get("txn"):
        try:
            block = read_stalls_in(d)
        except HistoryError as err:
            log.info("no read stall for %s: %s", d, err.one_line())
    return _longest(block)


def _longest(block: Any) -> float | None:
    """A measure's ``longest-s`` (a read stall's, an unread key's), None without one."""
    longest = block.get("longest-s") if isinstance(block, dict) else None
    return float(longest) if isinstance(longest, int | float) else None


def scenario_columns(test: dict[str, Any]) -> dict[str, Any]:
    """The scenario a catalogue run belongs to (test.json's ``scenario`` block, written by
    ``insync scenario run``/``catalogue``) and whether it ended as expected; nulls for a
    run that is no scenario's."""
    block = test.get("scenario")
    if not isinstance(block, dict):
        return dict.fromkeys(("scenario", "scenario_variant", "scenario_expected",
                              "scenario_as_expected"))
    expected = block.get("expected") or {}
    return {"scenario": block.get("name"), "scenario_variant": block.get("variant"),
            "scenario_expected": expected.get("text"),
            "scenario_as_expected": _flag(block.get("as_expected"))}


def coverage_columns(cov: RunCoverage | None) -> dict[str, Any]:
    """The coverage columns of a ``runs`` row: the figures analyze sums, the poor-coverage
    line of a VALID run, and the whole block as JSON (per fault kind, recoveries)."""
    if cov is None:
        return dict.fromkeys(COVERAGE_COLUMNS)
    fig = cov.figures
    inside, outside = fig.get("in_faults") or {}, outside_faults(fig)
    return {
        "coverage_window": cov.window,
        "main_s": float(fig["main_s"]),
        "acked_sends_main": int(fig["acked_sends_main"]),
        "seconds": int(fig["seconds"]),
        "live_seconds": int(fig["live_seconds"]),
        "fault_seconds": int(inside.get("seconds", 0)),
        "fault_live_seconds": int(inside.get("live_seconds", 0)),
        "fault_sends": int(inside.get("acked_sends", 0)),
        "normal_seconds": outside["seconds"],
        "normal_live_seconds": outside["live_seconds"],
        "poor_coverage": cov.warning,
        "coverage": orjson.dumps(fig).decode(),
    }


COVERAGE_COLUMNS = ("coverage_window", "main_s", "acked_sends_main", "seconds", "live_seconds",
                    "fault_seconds", "fault_live_seconds", "fault_sends", "normal_seconds",
                    "normal_live_seconds", "poor_coverage", "coverage")


def anomaly_rows(rid: str, verdict: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """One row per anomaly example kept in results.json, with the true count per type."""
    bad = set(verdict.get("bad-anomaly-types") or [])
    counts = verdict.get("anomaly-counts") or {}
    for kind, examples in (verdict.get("anomalies") or {}).items():
        for example in examples:
            key = example.get("key") if isinstance(example, dict) else None
            yield {
                "type": kind,
                "bad": kind in bad,
                "count": int(counts.get(kind, len(examples))),
                "key": None if key is None else str(key),
                "example": orjson.dumps(example).decode(),
                "run_id": rid,
            }


def _write_ops(spark: SparkSession, histories: dict[str, str], out: Path) -> None:
    """The ``ops`` table for the new runs: one row per completion (and nemesis op)."""
    from pyspark.sql import functions as F

    paths = spark.createDataFrame(list(histories.items()), "run_id string, file string")
    raw = spark.read.text(list(histories.values())).select(
        F.input_file_name().alias("uri"), F.col("value").alias("raw")
    )
    raw = raw.withColumn("file", F.expr("regexp_replace(uri, '^file:(//)?', '')"))
    ops = ops_frame(raw.join(F.broadcast(paths), "file").drop("uri", "file"))
    ops.repartition("run_id").write.mode("overwrite").partitionBy("run_id").parquet(str(out / OPS))


def ops_frame(raw: DataFrame) -> DataFrame:
    """Completions with latency and micro-op counts, from (run_id, raw line) rows."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    j = raw.select("run_id", F.from_json("raw", OPS_SCHEMA).alias("j")).select("run_id", "j.*")
    j = j.where(F.col("type").isNotNull())
    mops = F.from_json("value", "array<string>")
    j = j.select(
        "run_id",
        "index",
        "time",
        "process",
        "type",
        "f",
        F.when(
            F.col("f").isin("send", "txn"),
            F.size(F.filter(mops, lambda m: m.startswith('["send"'))),
        )
        .otherwise(F.lit(0))
        .alias("sends"),
    )
    by_process = Window.partitionBy("run_id", "process").orderBy("index")
    j = j.withColumn("invoke_time", F.lag("time").over(by_process)).withColumn(
        "prev_type", F.lag("type").over(by_process)
    )
    nemesis = F.col("process") == "nemesis"
    return j.where((F.col("type") != "invoke") | nemesis).select(
        "run_id",
        "index",
        F.col("time").alias("time_ns"),
        "process",
        "type",
        "f",
        nemesis.alias("nemesis"),
        F.when(
            ~nemesis & (F.col("prev_type") == "invoke"), F.col("time") - F.col("invoke_time")
        ).alias("latency_ns"),
        F.col("sends").cast("int").alias("sends"),
    )


def _kafka_label(cluster: dict[str, Any]) -> Any:
    """The ``kafka_version`` the comparison groups by: a user's build (``--kafka-dist``)
    is its version and commit (or digest), so two builds of ``4.5.0-SNAPSHOT`` stay
    two rows, each named as its broker logs it."""
    dist = cluster.get("kafka_dist")
    if not isinstance(dist, dict):
        return cluster.get("kafka_version")
    ident = dist.get("commit_id") or f"sha256:{str(dist.get('sha256') or '')[:12]}"
    return f"{dist.get('version') or cluster.get('kafka_version')} ({ident})"

