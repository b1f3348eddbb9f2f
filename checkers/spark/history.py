"""History files read by Spark into tables, with the shape rules of docs/HISTORY.md.

Why Spark reads the files itself: ``insync check --engine spark`` exists for
histories too large for one machine's memory, so no line may pass through
Python. Lines are read as text (split at ``\\n`` only, as Python splits them)
and numbered exactly per file (the file split each row came from,
``_metadata.file_block_start``, plus its rank inside the split: no
single-partition window), parsed with ``from_json`` where ``value`` stays raw
JSON text, then micro-ops are parsed with ``from_json`` again
(``array<string>`` keeps nested JSON as text).

Several files can be read at once: every table carries ``hid`` (the file), so
a batch of small histories costs one set of Spark jobs instead of one per file.
This is what keeps the agreement tests affordable; a single huge history is
just a batch of one.

Which file to read and how much of it (a missing file, a compressed one, a
last line cut by a crash) is decided before Spark starts, by the memory
engine's ``checkers._input``. Which lines break a rule is found by
``checkers.spark.rules``, and the first one is explained by replaying it
through the memory engine's scanner, so both engines give the same message.
Pairing a completion with its invoke uses a window per (file, process) ordered
by line. This is a pairing of its own, not the ground floor's reader
(``harness.base.history.pairs``), on purpose: that reader walks ops one by
one in Python, and here no line may pass through Python; the agreement tests
hold both engines to the same verdicts. What Spark's typed JSON reader cannot
tell apart, and so does not refuse: a second JSON document after the first on
one line, when both are objects (``{...} {...}``).

Plans are cut with ``localCheckpoint`` after each stage (parsed lines, pairs,
ops, micro-ops): without it, the later analyses build one plan tree holding
every stage several times, and planning it (adaptive execution canonicalises
the whole tree) costs minutes before any task runs.

Outcome codes are the contract's (``harness.base.contract``), as the in-memory
checker's: a pending invoke at the end counts as info.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from checkers._input import Source
from checkers._malformed import empty_history_error
from checkers.spark.group_rules import GROUP_TAGS, group_flags
from checkers.spark.rules import (
    first_errors,
    line_flags,
    mop_flags,
    pairing_flags,
    rejoins,
    time_flags,
)
from harness.base.contract import FAIL, INFO, NEMESIS, OK, mop_fs
from harness.base.errors import HistoryError
from harness.base.faults import premise_fs
from harness.base.waits import AWAIT_STATE, not_as_written

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: completion order of pending invokes: after every real line (as the Python scanner's finish)
PENDING_BASE = 1 << 40
OP_SCHEMA = (
    "index long, time long, process string, type string, f string, value string, "
    "_corrupt_record string"
)
#: JSON as orjson reads it: no single quotes, no NaN (Spark's reader allows both by default)
JSON_OPTIONS = {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"}
RECORDS = "map<string,array<array<bigint>>>"
#: the columns naming an op (``ord``: its place in the file), which every micro-op row keeps
_OP_COLS = ("hid", "ord", "index", "kind")
#: and the micro-op's place in the op's value
_MOP_COLS = (*_OP_COLS, "mi")


@dataclass(frozen=True)
class HistoryTables:
    """Histories as DataFrames, every one keyed by ``hid`` (a file path)."""

    #: client ops: hid, ord, index, process, f, kind, value (raw JSON; the invoke's if none)
    ops: DataFrame
    #: one row per send micro-op: hid, ord, index, kind, mi, key, offset (nullable), v
    sends: DataFrame
    #: one row per record read: hid, ord, index, kind, mi, ei, ri, key, offset, v
    reads: DataFrame
    #: hid -> number of lines judged (a last line cut by a crash is not one)
    lines: dict[str, int]
    #: hid -> number of nemesis lines
    nemesis_ops: dict[str, int]
    #: hid -> why each scripted wait that did not hold did not (``harness.base.waits``)
    waits_not_held: dict[str, list[str]]


def _uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return str(Path(unquote(parsed.path)).resolve()) if parsed.scheme == "file" else uri


def _numbered(
    spark: SparkSession, paths: list[str], cut_short: set[str]
) -> tuple[DataFrame, dict[str, int]]:
    """(hid, blk, line, raw) for every line of every file, 1-based and exact; lines per file.

    The last line of a file in ``cut_short`` (cut by a crash) is left out.
    """
    from pyspark.sql import functions as F

    raw = (
        spark.read.option("lineSep", "\n")
        .text(paths)
        .select(
            F.col("value").alias("raw"),
            F.col("_metadata.file_path").alias("uri"),
            F.col("_metadata.file_block_start").alias("blk"),
            F.monotonically_increasing_id().alias("mid"),
        )
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
    counts = {_uri_to_path(uri): n for uri, n in seen.items()}
    if not rows:
        empty = raw.select(F.lit("").alias("hid"), "blk", F.lit(0).alias("line"), "raw")
        return empty.limit(0), counts
    bases = spark.createDataFrame(rows, "uri string, hid string, blk long, base long, m0 long")
    lines = raw.join(F.broadcast(bases), ["uri", "blk"]).select(
        "hid", "blk", (F.col("base") + F.col("mid") - F.col("m0") + 1).alias("line"), "raw"
    )
    for hid in cut_short & set(counts):
        lines = lines.where((F.col("hid") != hid) | (F.col("line") < counts[hid]))
        counts[hid] -= 1
    return lines, counts


def read_histories(
    spark: SparkSession, sources: list[Source], errors: dict[str, HistoryError] | None = None
) -> HistoryTables:
    """Parse, validate and pair histories; raises ``HistoryError`` for the first bad file.

    With ``errors``, each malformed file's error is put there instead (keyed by
    its resolved path) and nothing is raised; the tables of those files are
    then not fit to judge.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    files = [str(s.path.resolve()) for s in sources]
    cut = {f for f, s in zip(files, sources, strict=True) if s.cut_short}
    numbered, counts = _numbered(spark, files, cut)
    for f in files:
        if not counts.get(f):
            empty = empty_history_error()
            if errors is not None:
                errors[f] = empty
                continue
            raise empty if len(files) == 1 else HistoryError(f"{f}: {empty}", hint=empty.hint)
    parsed = (
        numbered.select(
            "hid", "blk", "line", "raw", F.from_json("raw", OP_SCHEMA, JSON_OPTIONS).alias("j")
        )
        .select("hid", "blk", "line", "raw", "j.*")
        .localCheckpoint()
    )
    nemesis = F.col("process") == NEMESIS
    nemesis_ops = {
        r["hid"]: int(r["nem"] or 0)
        for r in parsed.groupBy("hid").agg(F.sum(nemesis.cast("long")).alias("nem")).collect()
    }
    waits = _waits_not_held(parsed)
    client = parsed.where(
        ~nemesis & F.col("process").isNotNull() & F.col("_corrupt_record").isNull()
    ).withColumn("p", F.col("process").cast("long"))
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
        *(
            F.lag(c).over(by_process).alias(f"prev_{c}")
            for c in ("type", "f", "value", "line", "index")
        ),
        F.lead("type").over(by_process).alias("next_type"),
    ).localCheckpoint()
    completion = F.col("type") != "invoke"
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
    times = time_flags(parsed).localCheckpoint()
    flagged = reduce(
        lambda a, b: a.unionByName(b),
        [
            line_flags(parsed),
            times.select("hid", "line"),
            pairing_flags(paired),
            group_flags(paired),
            bad.where(F.col("ord") < PENDING_BASE).select("hid", F.col("ord").alias("line")),
        ],
    )
    found = first_errors(flagged, parsed, paired, times)
    if errors is not None:
        errors.update(found)
    elif found:
        hid = min(found)
        err = found[hid]
        if len(files) > 1:
            err, line = HistoryError(f"{hid}: {err.message}", hint=err.hint), err.line
            err.line = line
        raise err
    return HistoryTables(
        ops=ops.drop("value"),
        sends=sends.localCheckpoint(),
        reads=reads.localCheckpoint(),
        lines=counts,
        nemesis_ops={f: nemesis_ops.get(f, 0) for f in files},
        waits_not_held={f: waits.get(f, []) for f in files},
    )


def _waits_not_held(parsed: DataFrame) -> dict[str, list[str]]:
    """hid -> the reasons its fault script did not run as written, in line order.

    The only lines that pass through Python here, on purpose: the ``await-state``
    and premise-step completions are a few per run (one per scripted step), and each
    is judged by the memory engine's one rule (``harness.base.waits.not_as_written``)
    on its own text.
    """
    import orjson
    from pyspark.sql import functions as F

    rows = (
        parsed.where(
            (F.col("process") == NEMESIS) & F.col("f").isin(AWAIT_STATE, *sorted(premise_fs()))
            & F.col("type").isNotNull() & (F.col("type") != "invoke")
        )
        .select("hid", "line", "raw")
        .collect()
    )
    found: dict[str, list[str]] = {}
    for r in sorted(rows, key=lambda r: (r["hid"], r["line"])):
        reason = not_as_written(orjson.loads(r["raw"]))
        if reason is not None:
            found.setdefault(r["hid"], []).append(reason)
    return found


def _micro_ops(ops: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Send rows, read rows, and (hid, ord) of every op with a malformed micro-op."""
    from pyspark.sql import functions as F

    txn = ops.where(F.col("f").isin(*sorted(mop_fs())))
    parts = txn.select(
        *_OP_COLS,
        F.posexplode(F.from_json("value", "array<string>")).alias("mi", "mop"),
    ).withColumn("a", F.from_json("mop", "array<string>"))
    tag = F.get(F.col("a"), 0)
    raw_sends = parts.where(tag == "send").select(
        *_MOP_COLS,
        "mop",
        F.get(F.col("a"), 1).alias("key"),
        F.get(F.col("a"), 2).alias("x"),
        F.size("a").alias("n"),
    )
    pair = F.from_json("x", "array<bigint>")
    is_pair = F.col("x").startswith("[")
    sends = raw_sends.select(
        *_MOP_COLS,
        "mop",
        "key",
        "n",
        "x",
        F.when(is_pair, F.get(pair, 0)).alias("offset"),
        F.when(is_pair, F.get(pair, 1)).otherwise(F.col("x").cast("long")).alias("v"),
        F.when(is_pair, F.size(pair)).otherwise(F.lit(-1)).alias("arity"),
    )
    polls = parts.where((tag == "poll") & (F.size("a") == 2)).select(
        *_MOP_COLS, "mop", "a",
        F.from_json(F.get(F.col("a"), 1), RECORDS).alias("m"),
    )
    reads = polls.select(
        *_MOP_COLS, F.posexplode("m").alias("ei", "key", "records")
    ).select(
        *_MOP_COLS, "ei", "key", F.posexplode("records").alias("ri", "rec")
    ).select(
        *_MOP_COLS,
        "ei",
        "ri",
        "key",
        F.get(F.col("rec"), 0).alias("offset"),
        F.get(F.col("rec"), 1).alias("v"),
        F.size("rec").alias("n"),
    )
    bad_mops = parts.where(
        F.col("a").isNull()
        | (F.size("a") == 0)
        | ~tag.isin("send", "poll", *GROUP_TAGS)  # group micro-ops: checkers.spark.group_rules
        | ((tag == "poll") & (F.size("a") > 2))
    ).select("hid", "ord")
    bad_polls = polls.where(F.col("m").isNull()).select("hid", "ord")
    mops = F.from_json("value", "array<string>")
    bad_values = txn.where(mops.isNull() | ~rejoins(mops, F.col("value"))).select("hid", "ord")
    bad = reduce(
        lambda a, b: a.unionByName(b),
        [bad_mops, bad_polls, bad_values, mop_flags(sends, reads, polls)],
    )
    return sends.drop("n", "arity", "x", "mop"), reads.drop("n"), bad
