"""Four queue checks in Spark: lost-write, unseen, duplicate, inconsistent-offsets.

Why: ``checkers`` keeps per-key tables in one process's memory; a history too
large for that can still be judged for these four types, which are joins and
aggregations over (key, offset, value) rows. ``insync check --engine spark``
selects this module. It must agree *exactly* with ``checkers`` on these four
types (same anomalies, same fields, same example order and cap, same counts),
so every tie-break below mirrors one in ``checkers._collect``/``_records``/
``_versions``/``_analyses``; the comments name which. Other types are not checked: the
verdict says so (``"engine": "spark"``, ``"checked-types"``) and ``valid`` is
computed from these four only, and from the fault script's waits: one that did
not hold makes it ``unknown``, as in ``checkers`` (``waits-not-held``).

Orders used for exactness:

* ``ord``: completion order (line of the completion; pending invokes after
  every line, by invoke index), the order the in-memory collector sees ops;
* an observation of (key, offset, value) is ordered by (phase, ord, mi, ei,
  ri): phase 0 for ok sends and every read, phase 1 for the sends of proven
  info ops (``build`` adds them after the log was read); the first value
  observed at an offset is ``log[offset]``, the others are ``extra``.
"""

from __future__ import annotations

import os
from functools import reduce
from typing import TYPE_CHECKING, Any

import orjson

from checkers._verdict import Anomalies, nothing_to_judge
from checkers._verdict import assemble as assemble_verdict
from checkers.spark.anomalies import derive, duplicates, inconsistent, lost, unseen
from checkers.spark.history import PENDING_BASE, read_histories
from harness.base.contract import FAIL, INFO, OK, TYPE_NAMES, checked_by, client_fs, judged_fs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from checkers.spark.history import HistoryTables

#: The checked types, in the registry's order (``harness.base.contract``).
CHECKED_TYPES = checked_by("spark")


def check_file_spark(
    spark: SparkSession, path: str | os.PathLike[str], *, max_anomalies: int = 1000
) -> dict[str, Any]:
    """The verdict of HISTORY.md for the four checked types; raises ``HistoryError``."""
    return check_files_spark(spark, [path], max_anomalies=max_anomalies)[0]


def check_files_spark(
    spark: SparkSession, paths: list[str | os.PathLike[str]], *, max_anomalies: int = 1000
) -> list[dict[str, Any]]:
    """Verdicts for several histories (files or run directories) in one set of Spark jobs.

    Each file is looked at first as the memory engine does (``checkers._input``):
    the same errors for a missing, compressed or empty file, and the same
    warning when a last line cut by a crash is left out.
    """
    from checkers._input import cut_short_warning, open_source

    sources = [open_source(p) for p in paths]
    files = [str(s.path.resolve()) for s in sources]
    unique = {f: s for f, s in zip(files, sources, strict=True)}
    tables = read_histories(spark, [unique[f] for f in sorted(unique)])
    verdicts = judge(tables, max_anomalies=max_anomalies)
    for f, source in unique.items():
        if source.cut_short:
            verdicts[f]["warnings"] = [cut_short_warning(tables.lines[f] + 1)]
    return [verdicts[f] for f in files]


def judge(tables: HistoryTables, *, max_anomalies: int = 1000) -> dict[str, dict[str, Any]]:
    """Run the four analyses over the tables; one verdict per history (``hid``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    cap = max(0, max_anomalies)
    d = derive(tables)
    parts = [
        _tagged("lost-write", lost(d), "index", "value"),
        _tagged("unseen", unseen(d, max(cap, 1)), None, None),
        _tagged("duplicate", duplicates(d), "value", None),
        _tagged("inconsistent-offsets", inconsistent(d), "offset", None),
    ]
    found_df = reduce(lambda a, b: a.unionByName(b), parts).localCheckpoint()
    counts: dict[str, dict[str, int]] = {}
    for r in found_df.groupBy("hid", "type").agg(F.count("*").alias("n")).collect():
        counts.setdefault(r["hid"], {})[r["type"]] = int(r["n"])
    examples: dict[str, dict[str, list[dict[str, Any]]]] = {}
    if cap and counts:
        rank = Window.partitionBy("hid", "type").orderBy("key", "s1", "s2")
        kept = (
            found_df.withColumn("rank", F.row_number().over(rank))
            .where(F.col("rank") <= cap)
            .select("hid", "type", "rank", "payload")
            .collect()
        )
        for r in sorted(kept, key=lambda r: (r["hid"], r["type"], r["rank"])):
            examples.setdefault(r["hid"], {}).setdefault(r["type"], []).append(
                orjson.loads(r["payload"])
            )
    txn = F.col("f").isin(*judged_fs())
    stats_rows = {
        r["hid"]: r
        for r in tables.ops.groupBy("hid")
        .agg(
            *(F.sum((F.col("kind") == k).cast("long")).alias(f"k{k}") for k in (OK, FAIL, INFO)),
            F.sum((F.col("ord") >= PENDING_BASE).cast("long")).alias("never"),
            F.sum(txn.cast("long")).alias("judged"),
        )
        .collect()
    }
    keys = {
        r["hid"]: int(r["n"])
        for r in d["keys"].groupBy("hid").count().withColumnRenamed("count", "n").collect()
    }
    details = _op_details(tables, examples)
    verdicts: dict[str, dict[str, Any]] = {}
    for hid, lines in tables.lines.items():
        row = stats_rows.get(hid)
        n = {k: int(row[f"k{k}"] or 0) if row else 0 for k in (OK, FAIL, INFO)}
        stats = {
            "ops": lines,
            "client-ops": sum(n.values()),
            "ok": n[OK],
            "fail": n[FAIL],
            "info": n[INFO],
            "never-completed": int(row["never"] or 0) if row else 0,
            "nemesis-ops": tables.nemesis_ops.get(hid, 0),
            "keys": keys.get(hid, 0),
        }
        mine = counts.get(hid, {})
        found = {t: (mine[t], examples.get(hid, {}).get(t, [])) for t in mine}
        judged = bool(row and row["judged"])
        verdicts[hid] = assemble(found, stats, judged=judged, ops=details.get(hid, {}),
                                 waits_not_held=tables.waits_not_held.get(hid, []))
    return verdicts


def _tagged(kind: str, frame: DataFrame, s1: str | None, s2: str | None) -> DataFrame:
    """(hid, type, key, s1, s2, payload JSON): the four types in one frame, sortable alike."""
    from pyspark.sql import functions as F

    fields = [c for c in frame.columns if c != "hid"]
    payload = F.to_json(
        F.struct(*(F.col(c).alias(c.replace("_", "-")) for c in fields)),
        {"ignoreNullFields": "false"},
    )
    return frame.select(
        "hid",
        F.lit(kind).alias("type"),
        "key",
        (F.col(s1) if s1 else F.lit(0)).cast("long").alias("s1"),
        (F.col(s2) if s2 else F.lit(0)).cast("long").alias("s2"),
        payload.alias("payload"),
    )


def assemble(
    found: dict[str, tuple[int, list[dict[str, Any]]]],
    stats: dict[str, Any],
    *,
    judged: bool,
    ops: dict[str, dict[str, Any]],
    waits_not_held: list[str] | None = None,
) -> dict[str, Any]:
    """The verdict dict, assembled by the memory engine's own ``checkers._verdict.assemble``.

    None of the checked types is informational; a history with nothing to judge,
    or a fault script's wait that did not hold, makes it ``unknown`` as there.
    """
    out = Anomalies(0)
    for t in CHECKED_TYPES:
        if t in found:
            out.counts[t], out.examples[t] = found[t]
    return assemble_verdict(
        out, informational_types=set(), stats=stats,
        unknown_reasons=[] if judged else [nothing_to_judge()], ops=ops,
        waits_not_held=waits_not_held, engine="spark",
    )


def _op_details(
    tables: HistoryTables, examples: dict[str, dict[str, list[dict[str, Any]]]]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per history: process/f/type of the ops examples point at (as the checker's ``ops``)."""
    from pyspark.sql import functions as F

    refs = {
        (hid, a[name])
        for hid, by_type in examples.items()
        for found in by_type.values()
        for a in found
        for name in ("writer", "max-read")
        if type(a.get(name)) is int
    }
    if not refs:
        return {}
    wanted = sorted({i for _, i in refs})
    known_fs = client_fs()
    rows = (
        tables.ops.where(F.col("index").isin(wanted))
        .select("hid", "index", "process", "f", "kind", "ord")
        .collect()
    )
    details: dict[str, dict[str, dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: (r["hid"], r["index"])):
        if (r["hid"], r["index"]) not in refs:
            continue
        details.setdefault(r["hid"], {})[str(r["index"])] = {
            "process": r["process"],
            "f": r["f"] if r["f"] in known_fs else "other",
            "type": TYPE_NAMES[r["kind"]],
            **({"never-completed": True} if r["ord"] >= PENDING_BASE else {}),
        }
    return details


def check_with_spark(
    path: str | os.PathLike[str], *, master: str = "local[2]", max_anomalies: int = 1000
) -> dict[str, Any]:
    """``insync check --engine spark``: start a session, judge one history, stop the session.

    A file that cannot be read at all is refused before Spark starts (seconds).
    """
    from checkers._input import open_source
    from checkers.spark.session import spark_session

    open_source(path)

    with spark_session(master, app_name="insync-check") as spark:
        return check_file_spark(spark, path, max_anomalies=max_anomalies)
