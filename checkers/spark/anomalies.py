"""The per-key analyses behind ``checkers.spark.check``: one DataFrame per anomaly type.

They live apart from ``checkers.spark.check`` (which reads histories, runs these
and assembles the verdict) so each module keeps one job. Every tie-break mirrors
the in-memory checker's, as ``checkers.spark.check``'s docstring explains; the
comments name which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.base.contract import INFO, OK

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from checkers.spark.history import HistoryTables


K = ["hid", "key"]
KV = ["hid", "key", "v"]


def derive(t: HistoryTables) -> dict[str, DataFrame]:
    """The per-key tables the analyses share (writers, reads, log, positions, bounds)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    sends, reads = t.sends, t.reads
    # writers: value -> first op (in completion order) that sent it; its kind if not ok
    writers = (
        sends.groupBy(*KV)
        .agg(F.min(F.struct("ord", "mi", "index", "kind")).alias("w"))
        .select(
            *KV,
            F.col("w.index").alias("writer"),
            # ``writer_kind`` holds only non-ok first senders
            F.when(F.col("w.kind") != OK, F.col("w.kind")).alias("wkind"),
        )
    ).localCheckpoint()
    # ok_reads: value -> the *last* ok op that read it (dict.update in completion order)
    ok_reads = (
        reads.where(F.col("kind") == OK)
        .groupBy(*KV)
        .agg(F.max(F.struct("ord", "index")).alias("r"))
        .select(*KV, F.col("r.index").alias("reader"))
    ).localCheckpoint()
    # other_reads: value -> the last op of another outcome that read it
    other_reads = (
        reads.where(F.col("kind") != OK)
        .groupBy(*KV)
        .agg(F.max(F.struct("ord", "index")).alias("r"))
        .select(*KV, F.col("r.index").alias("other_reader"))
    ).localCheckpoint()
    # proven info ops (``_proven_info_ops``): an ok read saw one of the values they sent
    proven = (
        sends.where(F.col("kind") == INFO)
        .join(ok_reads.select(*KV), KV, "left_semi")
        .select(F.col("hid").alias("phid"), F.col("index").alias("pindex"))
        .distinct()
    ).localCheckpoint()

    def observed(frame: DataFrame, phase: int, ei: str | None, ri: str | None) -> DataFrame:
        order = F.struct(
            F.lit(phase).alias("phase"),
            "ord",
            "mi",
            (F.col(ei) if ei else F.lit(0)).alias("ei"),
            (F.col(ri) if ri else F.lit(0)).alias("ri"),
            "index",
        )
        return frame.select(*K, "offset", "v", order.alias("o"))

    ok_sends = sends.where((F.col("kind") == OK) & F.col("offset").isNotNull())
    info_sends = sends.where((F.col("kind") == INFO) & F.col("offset").isNotNull()).join(
        proven, (F.col("hid") == F.col("phid")) & (F.col("index") == F.col("pindex")), "left_semi"
    )
    # (key, offset, value) with the order of its first observation: log first, then extra
    obs = (
        observed(ok_sends, 0, None, None)
        .unionByName(observed(reads, 0, "ei", "ri"))
        .unionByName(observed(info_sends, 1, None, None))
        .groupBy(*K, "offset", "v")
        .agg(F.min("o").alias("o"))
    )
    # dense positions: offsets that hold a value, numbered per key
    by_key = Window.partitionBy(*K).orderBy("offset")
    positions = (
        obs.select(*K, "offset")
        .distinct()
        .select(*K, "offset", (F.row_number().over(by_key) - 1).alias("p"))
        .localCheckpoint()
    )
    log = obs.join(positions, [*K, "offset"]).localCheckpoint()
    values = (
        log.groupBy(*KV)
        .agg(
            F.max("p").alias("pos"),
            F.min("p").alias("first_pos"),
            F.count("*").alias("n_offsets"),
            F.array_sort(F.collect_list("offset")).alias("offsets"),
        )
        .localCheckpoint()
    )
    # max-read-index: the largest first position of a value some ok op read
    firsts = values.join(ok_reads, KV).select(*KV, "first_pos", "reader")
    bound = firsts.groupBy(*K).agg(F.max("first_pos").alias("bound"))
    # max-read: among ok-read values first seen at the bound, the one observed first there
    at_bound = (
        firsts.join(bound, K)
        .where(F.col("first_pos") == F.col("bound"))
        .join(log.select(*KV, "p", "o"), KV)
        .where(F.col("p") == F.col("bound"))
        .groupBy(*K, "bound")
        .agg(F.min(F.struct("o", "reader")).alias("m"))
        .join(positions.withColumnRenamed("p", "bound"), [*K, "bound"])
        .select(
            *K,
            "bound",
            F.col("m.reader").alias("max_read"),
            F.col("offset").alias("bound_offset"),
        )
        .localCheckpoint()
    )
    keys = sends.select(*K).unionByName(reads.select(*K)).distinct()
    return {
        "writers": writers,
        "ok_reads": ok_reads,
        "proven": proven,
        "log": log,
        "values": values,
        "positions": positions,
        "bound": at_bound,
        "keys": keys,
        "other_reads": other_reads,
    }


def unread_values(d: dict[str, DataFrame]) -> DataFrame:
    """Values some op sent that no ok op read."""
    return d["writers"].join(d["ok_reads"], KV, "left_anti")


def lost(d: dict[str, DataFrame]) -> DataFrame:
    """Committed (ok, or proven info) values at or below the bound that no ok op read."""
    from pyspark.sql import functions as F

    unread = unread_values(d)
    info = unread.where(F.col("wkind") == INFO).join(
        d["proven"],
        (F.col("hid") == F.col("phid")) & (F.col("writer") == F.col("pindex")),
        "left_semi",
    )
    committed = unread.where(F.col("wkind").isNull()).unionByName(info)
    return (
        committed.join(d["values"].select(*KV, "pos"), KV)
        .join(d["bound"], K)
        .where(F.col("pos") <= F.col("bound"))
        .join(d["positions"].select(*K, F.col("p").alias("pos"), "offset"), [*K, "pos"])
        .select(
            *K,
            F.col("v").alias("value"),
            F.col("pos").alias("index"),
            F.col("bound").alias("max_read_index"),
            "writer",
            "max_read",
            "offset",
            F.col("bound_offset").alias("max_read_offset"),
        )
    )


def unseen(d: dict[str, DataFrame], cap: int) -> DataFrame:
    """Per key: values whose first sender was ok and that no ok op read."""
    from pyspark.sql import functions as F

    shown = F.slice(F.array_sort(F.collect_list(F.struct("v", "writer"))), 1, cap)
    return (
        unread_values(d)
        .where(F.col("wkind").isNull())
        .groupBy(*K)
        .agg(F.count("*").alias("count"), shown.alias("shown"))
        .select(
            *K,
            "count",
            F.col("shown.v").alias("values"),
            F.col("shown.writer").alias("writers"),
        )
    )


def duplicates(d: dict[str, DataFrame]) -> DataFrame:
    """A value at more than one offset."""
    from pyspark.sql import functions as F

    return (
        d["values"]
        .where(F.col("n_offsets") > 1)
        .join(d["writers"], KV, "left")
        .join(d["ok_reads"], KV, "left")
        .join(d["other_reads"], KV, "left")
        .select(
            *K,
            F.col("v").alias("value"),
            F.col("n_offsets").alias("count"),
            "offsets",
            "writer",
            F.coalesce("reader", "other_reader").alias("reader"),
        )
    )


def inconsistent(d: dict[str, DataFrame]) -> DataFrame:
    """An offset holding more than one value: values sorted, index its dense position."""
    from pyspark.sql import functions as F

    # witnesses: the op that first recorded each later value there; for the value
    # recorded first, its sender, else its last ok reader, else its last other reader
    ranked = (
        d["log"]
        .join(d["writers"], KV, "left")
        .join(d["ok_reads"], KV, "left")
        .join(d["other_reads"], KV, "left")
        .withColumn(
            "w",
            F.coalesce("writer", "reader", "other_reader"),
        )
    )
    grouped = ranked.groupBy(*K, "offset", "p").agg(
        F.count("*").alias("n"),
        F.array_sort(F.collect_list(F.struct("o", "v", "w", F.col("o.index").alias("by")))).alias(
            "seen"
        ),
    )
    first = F.col("seen")[0]
    witnesses = F.transform(
        F.col("seen"),
        lambda x: F.struct(
            x["v"].alias("v"),
            F.when(x["v"] == first["v"], x["w"]).otherwise(x["by"]).alias("w"),
        ),
    )
    by_value = F.array_sort(witnesses)
    return (
        grouped.where(F.col("n") > 1)
        .select(*K, "offset", "p", by_value.alias("wv"))
        .select(
            *K,
            "offset",
            F.col("p").alias("index"),
            F.col("wv.v").alias("values"),
            F.map_from_arrays(
                F.transform(F.col("wv.v"), lambda v: v.cast("string")), F.col("wv.w")
            ).alias("witnesses"),
        )
    )
