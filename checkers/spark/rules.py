"""The shape rules of docs/HISTORY.md as Spark conditions, and the words for the first one broken.

Why two steps: Spark is good at finding, over billions of lines, the few that
break a rule, but a message written again in Spark SQL would drift from the
memory engine's. So Spark only *flags* lines, and the first flagged line of a
file is replayed through the memory engine's own scanner
(``checkers._replay.explain_line``) with what a single pass knew at that line:
the time before it and the pending invoke of its process. Both engines then
name the same line with the same words.

A condition here may flag a line the scanner accepts (a nested ``"value":
"..."`` key in an ``error`` field, say): the replay finds nothing wrong and the
next flagged line is tried. What Spark's typed JSON reader cannot see at all
is listed in ``checkers/spark/history.py``.
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING, Any

import orjson

from checkers._malformed import I64_MAX
from checkers._replay import explain_line
from harness.base.contract import (
    NEMESIS,
    PROCESS_SHIFT,
    TYPE_CODES,
    client_fs,
    group_fs,
    key_list_fs,
    mop_fs,
)
from harness.base.errors import HistoryError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: a line with a "value" field (from_json cannot tell a missing field from null)
HAS_VALUE = r'"value"\s*:'
#: a "value" written as a JSON string (from_json would hand over its content as if JSON)
STRING_VALUE = r'"value"\s*:\s*"'
#: a JSON string as Spark re-serialises it (a key); the group rules build on it too
JSON_KEY = r'"(?:[^"\\]|\\.)*"'
_INT = r"(0|[1-9][0-9]{0,18})"
#: an invoke's send micro-op as Spark re-serialises it (no spaces): ["send","k",v]
SEND_INVOKE = rf"^\[\"send\",{JSON_KEY},{_INT}\]$"
#: the value of assign/subscribe: a list of keys
KEY_LIST = rf"^\[({JSON_KEY}(,{JSON_KEY})*)?\]$"
#: a plain integer 0..2**63-1 as the last element of a send micro-op ["send","k",v]
PLAIN_VALUE = rf",{_INT}\]$"
#: at most this many flagged lines per file are replayed before giving up on exact words
REPLAYED = 16


def rejoins(parts: Column, text: Column) -> Column:
    """True when the list ``text`` holds only lists, maps and numbers.

    ``from_json(text, "array<string>")`` hands a nested list or map over as
    its JSON text but a JSON string as its bare content: joined back, the
    parts give ``text`` again only when no element was a string.
    """
    from pyspark.sql import functions as F

    return F.concat(F.lit("["), F.array_join(parts, ","), F.lit("]")) == text


def line_flags(parsed: DataFrame) -> DataFrame:
    """(hid, line) of lines broken on their own: JSON, fields, process, index, type, f."""
    from pyspark.sql import functions as F

    col = F.col
    valued = sorted(mop_fs() | key_list_fs() | group_fs())  # ops whose value the checkers parse
    process = col("process")
    p = process.cast("long")
    client = process.isNotNull() & (process != NEMESIS)
    broken = (
        ~F.is_valid_utf8("raw")
        | col("_corrupt_record").isNotNull()
        | ~col("raw").rlike(r"^\s*\{")
        | ~col("raw").rlike(r"\}\s*$")  # from_json ignores what follows the object
        | process.isNull()
        | (col("index").isNotNull() & (col("index") != col("line") - 1))
        | (col("time") < 0)
        | (
            client
            & (
                p.isNull()
                | (p.cast("string") != process)
                | (p < 0)
                | (p > I64_MAX >> PROCESS_SHIFT)
                | col("raw").rlike(r'"process"\s*:\s*"')
                | col("index").isNull()
                | col("time").isNull()
                | ~col("type").isin(*TYPE_CODES)
                | ~col("f").isin(*client_fs())
                | (col("f").isin(*valued) & col("raw").rlike(STRING_VALUE))
            )
        )
    )
    return parsed.where(F.coalesce(broken, F.lit(True))).select("hid", "line")


def time_flags(parsed: DataFrame) -> DataFrame:
    """(hid, line, before) of lines whose time is below the time before them.

    Lines are ordered within each file split (Spark reads a split in one
    task); the first timed line of a split is compared with the last time of
    the splits before it, found with one small aggregate, as
    ``checkers._parallel`` does at its chunk edges.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    timed = parsed.where(F.col("time").isNotNull()).select("hid", "blk", "line", "time")
    ends = sorted(
        (r["hid"], r["blk"], r["last"])
        for r in timed.groupBy("hid", "blk").agg(F.max_by("time", "line").alias("last")).collect()
    )
    carry: list[tuple[str, int, int]] = []
    for i, (hid, blk, _) in enumerate(ends):
        if i and ends[i - 1][0] == hid:
            carry.append((hid, blk, ends[i - 1][2]))
    before = F.lag("time").over(Window.partitionBy("hid", "blk").orderBy("line"))
    flagged = timed.select("hid", "blk", "line", "time", before.alias("before"))
    if carry:
        spark = parsed.sparkSession
        edges = spark.createDataFrame(carry, "hid string, blk long, carried long")
        flagged = flagged.join(F.broadcast(edges), ["hid", "blk"], "left").withColumn(
            "before", F.coalesce("before", "carried")
        )
    return flagged.where(F.col("time") < F.col("before")).select("hid", "line", "before")


def pairing_flags(paired: DataFrame) -> DataFrame:
    """(hid, line) of client lines whose pairing or value breaks HISTORY.md."""
    from pyspark.sql import functions as F

    col = F.col
    valued = sorted(mop_fs() | key_list_fs() | group_fs())
    completion = col("type") != "invoke"
    after_invoke = (col("prev_type") == "invoke").eqNullSafe(True)
    needs_value = col("type").isin("invoke", "ok")
    keys = col("f").isin(*sorted(key_list_fs())) & (~completion | col("type").isin("ok", "info"))
    broken = (
        (completion & ~after_invoke)
        | (~completion & after_invoke)
        | (completion & after_invoke & (col("f") != col("prev_f")))
        | (needs_value & (col("f") == "crash") & ~col("raw").rlike(HAS_VALUE))
        | (needs_value & col("f").isin(*valued) & col("value").isNull())
        | (keys & col("value").isNotNull() & ~col("value").rlike(KEY_LIST))
    )
    invokes = paired.where(
        ~completion & col("f").isin(*sorted(mop_fs())) & (col("value") != '[["poll"]]')
    ).select("hid", "line", "value", F.from_json("value", "array<string>").alias("mops"))
    mops = invokes.select("hid", "line", F.explode_outer("mops").alias("mop"), "mops", "value")
    fits = F.regexp_extract("mop", SEND_INVOKE, 1).cast("decimal(20,0)") <= I64_MAX
    good_send = F.coalesce(col("mop").rlike(SEND_INVOKE) & fits, F.lit(False))
    group_mop = F.coalesce(col("mop").rlike(r'^\["(commit|committed)"'), F.lit(False))
    bad_invokes = mops.where(
        col("mops").isNull()
        | ~rejoins(col("mops"), col("value"))
        | ((col("mop") != '["poll"]') & ~good_send & ~group_mop)  # groups: group_rules
    )
    return reduce(
        lambda a, b: a.unionByName(b),
        [paired.where(broken).select("hid", "line"), bad_invokes.select("hid", "line")],
    )


def mop_flags(sends: DataFrame, reads: DataFrame, polls: DataFrame) -> DataFrame:
    """(hid, ord) of completions whose micro-ops break HISTORY.md (``ord`` is their line)."""
    from pyspark.sql import functions as F

    col = F.col
    plain = ~col("x").startswith("[")
    bad_sends = sends.where(
        (col("n") != 3)
        | col("key").isNull()
        | ~col("mop").startswith('["send","')
        | col("v").isNull()
        | (col("v") < 0)
        | (plain & ~col("mop").rlike(PLAIN_VALUE))
        | (~plain & (col("arity") != 2))
        | (~plain & col("offset").isNull() & ~col("x").startswith("[null,"))
        | (col("offset") < 0)
    ).select("hid", "ord")
    bad_reads = reads.where(
        (col("n") != 2) | col("offset").isNull() | col("v").isNull() | (col("offset") < 0)
        | (col("v") < 0)
    ).select("hid", "ord")
    null_records = polls.where(
        F.exists(F.map_values("m"), lambda r: r.isNull())
        | (F.concat(F.lit('["poll",'), F.get(col("a"), 1), F.lit("]")) != col("mop"))
    )
    return bad_sends.unionByName(bad_reads).unionByName(null_records.select("hid", "ord"))


def first_errors(
    flagged: DataFrame, parsed: DataFrame, paired: DataFrame, times: DataFrame
) -> dict[str, HistoryError]:
    """Per file with a broken line: the memory engine's error for its first one."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rank = F.row_number().over(Window.partitionBy("hid").orderBy("line"))
    first = (
        flagged.distinct().withColumn("r", rank).where(F.col("r") <= REPLAYED).drop("r")
    ).localCheckpoint()
    if first.isEmpty():
        return {}
    ctx = paired.select(
        "hid", "line", "p", "prev_type", "prev_f", "prev_value", "prev_line", "prev_index"
    )
    rows = (
        parsed.join(F.broadcast(first), ["hid", "line"])
        .select("hid", "line", F.col("raw").cast("binary").alias("raw"))
        .join(ctx, ["hid", "line"], "left")
        .join(times, ["hid", "line"], "left")
        .collect()
    )
    errors: dict[str, HistoryError] = {}
    replayed: dict[str, int] = {}
    for r in sorted(rows, key=lambda r: (r["hid"], r["line"])):
        if r["hid"] in errors:
            continue
        # the line as Python reads it: with its newline (a last line without one is either
        # complete JSON, where it changes nothing, or cut by a crash and never replayed)
        raw = bytes(r["raw"]) + b"\n"
        err = explain_line(raw, r["line"], last_time=r["before"] or 0, pending=_pending(r))
        replayed[r["hid"]] = replayed.get(r["hid"], 0) + 1
        if err is None and replayed[r["hid"]] == REPLAYED:
            err = HistoryError(
                f"the Spark engine finds line {r['line']} or a later one malformed and cannot "
                "say why", hint="check this history with the memory engine (insync check PATH)"
            )
        if err is not None:
            errors[r["hid"]] = err
    return errors


def _pending(r: Any) -> dict[int, tuple[int, str, Any, int]] | None:
    """The invoke the line's process had pending, as the scanner keeps it."""
    if r["prev_type"] != "invoke" or r["p"] is None:
        return None
    value = None if r["prev_value"] is None else orjson.loads(r["prev_value"])
    return {int(r["p"]): (int(r["prev_index"]), r["prev_f"], value, int(r["prev_line"]))}
