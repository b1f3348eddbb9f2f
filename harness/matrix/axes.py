"""What ``insync matrix`` is asked: the axes, the one-value options, runs, keep-cluster.

Axes (each a list; every other ``insync run`` option is one value for all runs):

=========================  ==============================  =====================
axis                       flag (comma list)               TOML key (array)
=========================  ==============================  =====================
acks                       ``--acks 1,all``                ``acks``
min_insync                 ``--min-insync 1,2``            ``min-insync``
replication_factor         ``--replication-factor 2,3``    ``replication-factor``
unclean_leader_election    ``--unclean-leader-election``   ``unclean-leader-election``
kafka_version              ``--kafka-version 3.9.x,4.1.x`` ``kafka-version``
                           or a range: ``3.9..``
nemesis                    ``--nemesis kill,partition``    ``nemesis``
                           (repeat the flag for several)
group_protocol             ``--group-protocol classic,``   ``group-protocol``
                           ``consumer``
=========================  ==============================  =====================

``--nemesis`` keeps ``insync run``'s meaning: ``kill,partition`` is ONE value,
both faults together. Several nemesis values come from repeating the flag
(``--nemesis kill,partition --nemesis none``) or, in TOML, from an array whose
items are fault lists: ``nemesis = ["kill,partition", "none"]`` or
``nemesis = [["kill", "partition"], ["none"]]``.

``matrix.toml``: the axes as arrays and any other ``insync run`` option as a
scalar, top level or under ``[matrix]``; ``runs`` and ``keep-cluster`` too::

    [matrix]
    acks = ["1", "all"]
    min-insync = [1, 2]
    unclean-leader-election = [true, false]
    nemesis = ["kill,partition"]
    kafka-version = ["3.9.x", "4.1.x"]
    runs = 3
    time-limit = 60

Every value is converted by the row of ``insync run``'s option table it names
(``harness.run.options``), so it is refused the same way as a flag of ``run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.base.errors import UsageError
from harness.run.options import BY_NAME, convert, read_toml
from harness.run.values import Range, Spec, whole

#: Option names that may take several values, in the order test names spell them.
AXES = (
    "acks",
    "min_insync",
    "replication_factor",
    "unclean_leader_election",
    "nemesis",
    "kafka_version",
    "group_protocol",
)
#: ``--runs`` / ``runs =``: runs per combination.
RUNS = Spec("runs", whole, "runs per combination (default: 1)", "N", range=Range(1, 1000))


@dataclass(frozen=True)
class Matrix:
    """The whole request: base options, axes, runs per combination, keep the cluster."""

    base: Mapping[str, Any]
    axes: Mapping[str, list[Any]]
    runs: int = 1
    keep_cluster: bool = False


# -- input ---------------------------------------------------------------------------------


def axis_values(key: str, raw: Any, origin: str) -> list[Any]:
    """Convert one axis from flag text or a TOML array into option values."""
    spec = BY_NAME[key]
    if key == "nemesis":
        items = raw if isinstance(raw, list) else [raw]
        out = [convert({key: item}, origin)[key] for item in items]
    else:
        items = raw if isinstance(raw, list) else str(raw).split(",")
        items = [i for i in items if str(i).strip() != ""]
        if key == "kafka_version":
            items = _ranges_expanded(items, spec.flag, origin)
        out = [convert({key: item}, origin)[key] for item in items]
    if not out:
        where = f"{origin}: " if origin else ""
        raise UsageError(f"{where}{spec.flag} has no values", hint="give at least one value")
    unique: list[Any] = []
    for value in out:
        if value not in unique:
            unique.append(value)
    return unique


def _ranges_expanded(items: list[Any], flag: str, origin: str) -> list[Any]:
    """A range (``3.9..``) stands for the table's versions in it, as in ``catalogue
    --versions`` and scenario files (``harness.scenario.ranges.expand_versions``)."""
    from harness.scenario.ranges import expand_versions

    out: list[Any] = []
    for item in items:
        if ".." not in str(item):
            out.append(item)
            continue
        where = f"{origin}: " if origin else ""
        try:
            versions = expand_versions([str(item).strip()])
        except UsageError as err:
            raise UsageError(f"{where}{flag} {str(item).strip()}: {err.message}",
                             hint=err.hint or "e.g. 3.9.. or 2.8..3.9") from None
        if not versions:
            raise UsageError(f"{where}{flag} {str(item).strip()} holds none of the catalogue's "
                             "versions", hint="name the versions, e.g. 4.2.x,4.3.x")
        out += [v.version for v in versions]
    return out


def split(values: Mapping[str, Any], origin: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Split raw option values into one-value options and axes (each checked now)."""
    base: dict[str, Any] = {}
    axes: dict[str, list[Any]] = {}
    seen: set[str] = set()
    for raw_key, raw in values.items():
        key = raw_key.replace("-", "_")
        if key in seen:
            raise UsageError(f"{origin}: option {raw_key!r} is given twice (once with '-', "
                             "once with '_')", hint="keep one of them")
        seen.add(key)
        if key in AXES:
            axes[key] = axis_values(key, raw, origin)
        else:
            base.update(convert({raw_key: raw}, origin))
    return base, axes


def read_config(path: str | Path) -> Matrix:
    """A ``matrix.toml`` (module docstring) as a :class:`Matrix`."""
    origin = f"--config {path}"
    data = read_toml(path, "matrix")
    runs = RUNS.parse(data.pop("runs", 1), f"{origin}: ")
    keep = data.pop("keep-cluster", data.pop("keep_cluster", False))
    if not isinstance(keep, bool):
        raise UsageError(
            f"{origin}: keep-cluster must be true or false, got {keep!r}", hint="fix the file"
        )
    base, axes = split(data, origin)
    return Matrix(base, axes, runs, keep)


def merge(file: Matrix | None, flags: Matrix, *, runs_given: bool, keep_given: bool) -> Matrix:
    """Flags win over the config file, axis by axis and option by option."""
    if file is None:
        return flags
    return Matrix(
        {**file.base, **flags.base},
        {**file.axes, **flags.axes},
        flags.runs if runs_given else file.runs,
        flags.keep_cluster if keep_given else file.keep_cluster,
    )
