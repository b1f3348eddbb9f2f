"""The shape rules of docs/HISTORY-GROUPS.md as Spark conditions (see ``checkers.spark.rules``).

As there, Spark only flags lines and the memory engine's scanner words the
error of the first flagged one (``checkers._replay``). The conditions are
exact for well-formed lines, so a group history whose every poll commits does
not spend the replay budget on lines that are fine: a micro-op passes when its
text, as Spark re-serialises it (no spaces), has one of the shapes below, and
an offset passes when it has at most 18 digits (a 19-digit one is replayed,
where the scanner decides whether it fits in 64 bits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checkers.groups._shape import ALLOWED_IN
from checkers.spark.rules import JSON_KEY
from harness.base.contract import group_fs

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

GROUP_TAGS = tuple(ALLOWED_IN)
#: the client ops whose value holds group micro-ops only (``commit``, ``committed``)
GROUP_FS = tuple(sorted(group_fs()))
_KEY = JSON_KEY
_OFF = r"(?:0|[1-9][0-9]{0,17})"
_KEYS = rf"\[(?:{_KEY}(?:,{_KEY})*)?\]"
COMMIT_BARE = r'^\["commit"\]$'
COMMIT_OFFSETS = rf'^\["commit",\{{(?:{_KEY}:{_OFF}(?:,{_KEY}:{_OFF})*)?\}}\]$'
COMMITTED_KEYS = rf'^\["committed",{_KEYS}\]$'
_RESULT = rf"(?:{_OFF}|null)"
COMMITTED_RESULT = rf'^\["committed",\{{(?:{_KEY}:{_RESULT}(?:,{_KEY}:{_RESULT})*)?\}}\]$'
MOVED = rf'^\["(?:assigned|revoked)",{_KEYS}\]$'
#: a value holding a group micro-op somewhere (the cheap first filter)
HAS_GROUP_MOP = r'\[\s*"(?:' + "|".join(GROUP_TAGS) + ')"'
_S = r"\s*"
#: possessive (Java regex): no backtracking into the spaces, so the lookahead that follows
#: sees the field's value and not a space before it
_SP = r"\s*+"
#: the extension's fields, each followed by what it may not be
BAD_FIELDS = "|".join((
    rf'"group"{_SP}:{_SP}(?!"|null)',
    rf'"auto-commit"{_SP}:{_SP}(?!true|false)',
    rf'"reset"{_SP}:{_SP}(?!"(?:earliest|latest)")',
    rf'"seek"{_SP}:{_SP}(?!"(?:committed|beginning)")',
))
_MAP = (rf"\{{{_S}(?:{_KEY}{_S}:{_S}{_RESULT}{_S}(?:,{_S}{_KEY}{_S}:{_S}{_RESULT}{_S})*)?\}}")
HAS_COMMITTED_FIELD = rf'"committed"{_S}:'
GOOD_COMMITTED_FIELD = rf'"committed"{_S}:{_S}{_MAP}'


def _good_mop(mop: Column, f: Column, type_: Column) -> Column:
    """A group micro-op (by its tag) that HISTORY-GROUPS.md allows in this f and line type."""
    from pyspark.sql import functions as F

    invoke = type_ == "invoke"
    ok = type_ == "ok"
    commit = mop.rlike(COMMIT_OFFSETS) | (~ok & mop.rlike(COMMIT_BARE))
    committed = (
        (~invoke & mop.rlike(COMMITTED_RESULT)) | (~ok & mop.rlike(COMMITTED_KEYS))
    )
    moved = ~invoke & mop.rlike(MOVED)
    return F.coalesce(
        (mop.startswith('["commit"') & f.isin(*ALLOWED_IN["commit"]) & commit)
        | (mop.startswith('["committed"') & f.isin(*ALLOWED_IN["committed"]) & committed)
        | ((mop.startswith('["assigned"') | mop.startswith('["revoked"'))
           & f.isin(*ALLOWED_IN["assigned"]) & moved),
        F.lit(False),
    )


def group_flags(paired: DataFrame) -> DataFrame:
    """(hid, line) of client lines whose group fields or group micro-ops break the rules."""
    from pyspark.sql import functions as F

    col = F.col
    raw = col("raw")
    fields = paired.where(
        raw.rlike(BAD_FIELDS)
        | (raw.rlike(HAS_COMMITTED_FIELD) & ~raw.rlike(GOOD_COMMITTED_FIELD))
        | raw.rlike(r'"committed"\s*:\s*\{[^}]*[0-9]{19}')
    ).select("hid", "line")
    candidates = paired.where(
        col("value").isNotNull() & (col("f").isin(*GROUP_FS) | col("value").rlike(HAS_GROUP_MOP))
    ).select(
        "hid", "line", "f", "type", "value",
        F.from_json("value", "array<string>").alias("mops"),
    )
    mops = candidates.select(
        "hid", "line", "f", "type", "mops", F.explode_outer("mops").alias("mop")
    )
    tag = F.get(F.from_json("mop", "array<string>"), 0)
    is_group = tag.isin(*GROUP_TAGS)
    bad = mops.where(
        col("mops").isNull()
        | (col("f").isin(*GROUP_FS) & ~is_group)  # a commit/committed op holds only its own
        | (F.coalesce(is_group, F.lit(False))
           & ~_good_mop(col("mop"), col("f"), col("type")))
        | (col("f") == "commit") & ~F.coalesce(col("mop").startswith('["commit"'), F.lit(False))
        | (col("f") == "committed")
        & ~F.coalesce(col("mop").startswith('["committed"'), F.lit(False))
    ).select("hid", "line")
    return fields.unionByName(bad)
