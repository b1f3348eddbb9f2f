"""History files read by Spark into tables, with the shape rules of docs/HISTORY.md.

Why Spark reads the files itself: ``insync check --engine spark`` exists for
histories too large for one machine's memory, so no line may pass through
Python. Lines are read as text and numbered exactly per file (the file split
each row came from, ``_metadata.file_block_start``, plus its rank inside the
split: no single-partition window), parsed with ``from_json`` where ``value``
stays raw JSON text, then micro-ops are parsed with ``from_json`` again
(``array<string>`` keeps nested JSON as text).

Several files can be read at once: every table carries ``hid`` (the file), so
a batch of small histories costs one set of Spark jobs instead of one per file.
This is what keeps the agreement tests affordable; a single huge history is
just a batch of one.

Pairing a completion with its invoke uses a window per (file, process) ordered
by line, which also finds the structural errors of HISTORY.md (a completion
with no pending invoke, a second invoke, a differing ``f``). Every kind of
error is one frame of (hid, line, message); one job takes the first line per
file, as the in-memory checker stops at the first bad line.

Plans are cut with ``localCheckpoint`` after each stage (parsed lines, pairs,
ops, micro-ops): without it, the later analyses build one plan tree holding
every stage several times, and planning it (adaptive execution canonicalises
the whole tree) costs minutes before any task runs.

Outcome codes are the in-memory checker's: 1 ok, 2 fail, 3 info (a pending
invoke at the end counts as info).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from harness.errors import HistoryError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

OK, FAIL, INFO = 1, 2, 3
TXN_FS = ("send", "poll", "txn")
#: completion order of pending invokes: after every real line (as the Python scanner's finish)
PENDING_BASE = 1 << 40
OP_SCHEMA = (
    "index long, time long, process string, type string, f string, value string, "
    "_corrupt_record string"
)
#: a line with a "value" field (from_json cannot tell a missing field from null)
HAS_VALUE = r'"value"\s*:'
RECORDS = "map<string,array<array<bigint>>>"


@dataclass(frozen=True)
class HistoryTables:
    """Histories as DataFrames, every one keyed by ``hid`` (a file path)."""

    #: client ops: hid, ord, index, process, f, kind, value (raw JSON; the invoke's if none)
    ops: DataFrame
    #: one row per send micro-op: hid, ord, index, kind, mi, key, offset (nullable), v
    sends: DataFrame
    #: one row per record read: hid, ord, index, kind, mi, ei, ri, key, offset, v
    reads: DataFrame
    #: hid -> number of lines
    lines: dict[str, int]
    #: hid -> number of nemesis lines
    nemesis_ops: dict[str, int]


def _uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return str(Path(unquote(parsed.path)).resolve()) if parsed.scheme == "file" else uri


def _numbered(spark: SparkSession, paths: list[str]) -> DataFrame:
    """(hid, line, raw) for every line of every file, line numbers 1-based and exact."""
    from pyspark.sql import functions as F

    raw = spark.read.text(paths).select(
        F.col("value").alias("raw"),
        F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("blk"),
        F.monotonically_increasing_id().alias("mid"),
    )
    # a split (file, block) lives in one partition, its rows in file order with
    # consecutive ids: the line is the lines of earlier splits + the rank inside
    blocks = sorted(
        (r["uri"], r["blk"], r["n"], r["m0"])
        for r in raw.groupBy("uri", "blk")
        .agg(F.count("*").alias("n"), F.min("mid").alias("m0"))
        .collect()
    )
    rows = []
    seen: dict[str, int] = {}
    for uri, blk, n, m0 in blocks:
        base = seen.get(uri, 0)
        rows.append((uri, _uri_to_path(uri), blk, base, m0))
        seen[uri] = base + n
    if not rows:
        return raw.select(F.lit("").alias("hid"), F.lit(0).alias("line"), "raw").limit(0)
    bases = spark.createDataFrame(rows, "uri string, hid string, blk long, base long, m0 long")
    return raw.join(F.broadcast(bases), ["uri", "blk"]).select(
        "hid", (F.col("base") + F.col("mid") - F.col("m0") + 1).alias("line"), "raw"
    )


def _errors(df: DataFrame, condition: Column, message: Column) -> DataFrame:
    return df.where(condition).select("hid", "line", message.alias("msg"))


def read_histories(spark: SparkSession, paths: list[str]) -> HistoryTables:
    """Parse, validate and pair histories; raises ``HistoryError`` for the first bad file."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    files = [str(Path(p).resolve()) for p in paths]
    parsed = (
        _numbered(spark, files)
        .select("hid", "line", "raw", F.from_json("raw", OP_SCHEMA).alias("j"))
        .select("hid", "line", "raw", "j.*")
        .localCheckpoint()
    )
    nemesis = F.col("process") == "nemesis"
    sizes = {
        r["hid"]: (r["n"], r["nem"])
        for r in parsed.groupBy("hid")
        .agg(F.count("*").alias("n"), F.sum(nemesis.cast("long")).alias("nem"))
        .collect()
    }
    for f in files:
        if f not in sizes:
            raise HistoryError(f"{f}: the history is empty", hint="a run writes one op per line")
    trimmed = F.trim(F.col("raw"))
    is_obj = trimmed.startswith("{")
    corrupt = F.col("_corrupt_record").isNotNull()
    shape = _errors(
        parsed,
        corrupt | ~is_obj | F.col("process").isNull(),
        F.when(trimmed == "", F.lit("an empty line"))
        .when(corrupt & is_obj, F.lit("not JSON, or a field of the wrong type"))
        .when(~is_obj, F.lit("expected a JSON object"))
        .otherwise(F.lit("missing field 'process'")),
    )
    client = parsed.where(~nemesis & F.col("process").isNotNull() & ~corrupt).withColumn(
        "p", F.col("process").cast("long")
    )
    fields = _errors(
        client,
        F.col("p").isNull()
        | F.col("index").isNull()
        | F.col("time").isNull()
        | F.col("f").isNull()
        | ~F.col("type").isin("invoke", "ok", "fail", "info"),
        F.when(F.col("p").isNull(), F.lit('process must be an integer or "nemesis"'))
        .when(F.col("index").isNull(), F.lit("missing field 'index'"))
        .when(F.col("time").isNull(), F.lit("missing field 'time'"))
        .when(F.col("f").isNull(), F.lit("missing field 'f'"))
        .otherwise(F.lit("type must be invoke, ok, fail or info")),
    )
    by_process = Window.partitionBy("hid", "p").orderBy("line")
    paired = client.select(
        "hid",
        "line",
        "raw",
        "index",
        "p",
        "type",
        "f",
        "value",
        F.lag("type").over(by_process).alias("prev_type"),
        F.lag("f").over(by_process).alias("prev_f"),
        F.lag("value").over(by_process).alias("prev_value"),
        F.lead("type").over(by_process).alias("next_type"),
    ).localCheckpoint()
    completion = F.col("type") != "invoke"
    after_invoke = (F.col("prev_type") == "invoke").eqNullSafe(True)
    process = F.col("p").cast("string")
    pairing = _errors(
        paired,
        (completion & ~after_invoke)
        | (~completion & after_invoke)
        | (completion & after_invoke & (F.col("f") != F.col("prev_f")))
        | (((F.col("type") == "ok") | ~completion) & ~F.col("raw").rlike(HAS_VALUE)),
        F.when(
            completion & ~after_invoke,
            F.concat(
                F.col("type"),
                F.lit(" completion by process "),
                process,
                F.lit(" with no pending invoke"),
            ),
        )
        .when(
            ~completion & after_invoke,
            F.concat(F.lit("second invoke by process "), process, F.lit(" while one is pending")),
        )
        .when(
            completion & (F.col("f") != F.col("prev_f")),
            F.lit("completion f differs from its invoke's"),
        )
        .otherwise(F.lit("missing field 'value'")),
    )
    done = paired.where(completion).select(
        "hid",
        F.col("line").alias("ord"),
        "index",
        F.col("p").alias("process"),
        "f",
        F.when(F.col("type") == "ok", F.lit(OK))
        .when(F.col("type") == "fail", F.lit(FAIL))
        .otherwise(F.lit(INFO))
        .alias("kind"),
        F.when((F.col("type") != "ok") & F.col("value").isNull(), F.col("prev_value"))
        .otherwise(F.col("value"))
        .alias("value"),
    )
    pending = paired.where(~completion & F.col("next_type").isNull()).select(
        "hid",
        (F.lit(PENDING_BASE) + F.col("index")).alias("ord"),
        "index",
        F.col("p").alias("process"),
        "f",
        F.lit(INFO).alias("kind"),
        "value",
    )
    ops = done.unionByName(pending).localCheckpoint()
    sends, reads, bad = _micro_ops(ops)
    mops = bad.where(F.col("ord") < PENDING_BASE).select(
        "hid", F.col("ord").alias("line"), F.lit("malformed micro-op").alias("msg")
    )
    all_errors = reduce(lambda a, b: a.unionByName(b), [shape, fields, pairing, mops])
    first = all_errors.groupBy("hid").agg(F.min(F.struct("line", "msg")).alias("e")).collect()
    if first:
        hid, line, msg = min((r["hid"], r["e"]["line"], r["e"]["msg"]) for r in first)
        where = "" if len(files) == 1 else f"{hid}: "
        raise HistoryError(f"{where}{msg}", line=int(line))
    return HistoryTables(
        ops=ops.drop("value"),
        sends=sends.localCheckpoint(),
        reads=reads.localCheckpoint(),
        lines={h: int(n) for h, (n, _) in sizes.items()},
        nemesis_ops={h: int(m or 0) for h, (_, m) in sizes.items()},
    )


def _micro_ops(ops: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Send rows, read rows, and (hid, ord) of every op with a malformed micro-op."""
    from pyspark.sql import functions as F

    txn = ops.where(F.col("f").isin(*TXN_FS))
    parts = txn.select(
        "hid",
        "ord",
        "index",
        "kind",
        F.posexplode(F.from_json("value", "array<string>")).alias("mi", "mop"),
    ).withColumn("a", F.from_json("mop", "array<string>"))
    tag = F.get(F.col("a"), 0)
    raw_sends = parts.where(tag == "send").select(
        "hid",
        "ord",
        "index",
        "kind",
        "mi",
        F.get(F.col("a"), 1).alias("key"),
        F.get(F.col("a"), 2).alias("x"),
        F.size("a").alias("n"),
    )
    pair = F.from_json("x", "array<bigint>")
    is_pair = F.col("x").startswith("[")
    sends = raw_sends.select(
        "hid",
        "ord",
        "index",
        "kind",
        "mi",
        "key",
        "n",
        "x",
        F.when(is_pair, F.get(pair, 0)).alias("offset"),
        F.when(is_pair, F.get(pair, 1)).otherwise(F.col("x").cast("long")).alias("v"),
        F.when(is_pair, F.size(pair)).otherwise(F.lit(-1)).alias("arity"),
    )
    polls = parts.where((tag == "poll") & (F.size("a") == 2)).select(
        "hid",
        "ord",
        "index",
        "kind",
        "mi",
        F.posexplode(F.from_json(F.get(F.col("a"), 1), RECORDS)).alias("ei", "key", "records"),
    )
    reads = polls.select(
        "hid", "ord", "index", "kind", "mi", "ei", "key", F.posexplode("records").alias("ri", "rec")
    ).select(
        "hid",
        "ord",
        "index",
        "kind",
        "mi",
        "ei",
        "ri",
        "key",
        F.get(F.col("rec"), 0).alias("offset"),
        F.get(F.col("rec"), 1).alias("v"),
        F.size("rec").alias("n"),
    )
    records_bad = F.from_json(F.get(F.col("a"), 1), RECORDS).isNull()
    bad_mops = parts.where(
        F.col("a").isNull()
        | (F.size("a") == 0)
        | ~tag.isin("send", "poll")
        | ((tag == "poll") & (F.size("a") > 2))
        | ((tag == "poll") & (F.size("a") == 2) & records_bad)
    ).select("hid", "ord")
    bad_sends = sends.where(
        (F.col("n") != 3)
        | F.col("key").isNull()
        | F.col("v").isNull()
        | (F.col("arity") > 2)
        | ((F.col("arity") == 2) & F.col("offset").isNull() & ~F.col("x").startswith("[null"))
    ).select("hid", "ord")
    bad_reads = reads.where(
        (F.col("n") != 2) | F.col("offset").isNull() | F.col("v").isNull()
    ).select("hid", "ord")
    bad_values = txn.where(F.from_json("value", "array<string>").isNull()).select("hid", "ord")
    bad = bad_mops.unionByName(bad_sends).unionByName(bad_reads).unionByName(bad_values)
    return sends.drop("n", "arity", "x"), reads.drop("n"), bad
