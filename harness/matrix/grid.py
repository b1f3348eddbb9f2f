"""The grid of ``insync matrix``: every combination of the axes, named, checked, ordered.

Every combination is checked before the first run starts (``setup.preflight``:
values, ranges, Kafka version and mode, files, broker keys); one that cannot
work (``min-insync`` above ``replication-factor``, ZooKeeper mode on a
KRaft-only version) is skipped with its reason. The rest are ordered so the
cluster is rebuilt as rarely as possible.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from harness.base.errors import UsageError
from harness.matrix.axes import AXES, Matrix
from harness.run.options import RunOptions
from harness.run.setup import cluster_spec, preflight

#: Options that do not make two runs different tests (resume ignores them).
NOT_SETTINGS = frozenset({"seed", "name", "results_dir", "cluster_name", "teardown"})


@dataclass(frozen=True)
class Combination:
    """One point of the grid: its test name, the axis values and the full options."""

    name: str
    values: Mapping[str, Any]
    opts: RunOptions

    @property
    def cluster_key(self) -> str:
        """Runs with equal keys share a cluster (the runner reuses an equal spec)."""
        clock = "clock" in self.opts.faults  # clock faults start brokers under faketime
        power = "power-loss" in self.opts.faults  # and power loss needs its filesystem
        return f"{cluster_spec(self.opts).to_json()}|faketime={clock}|power_loss_fs={power}"

    def settings(self) -> dict[str, Any]:
        return {k: v for k, v in self.opts.as_dict().items() if k not in NOT_SETTINGS}


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str



# -- the grid ------------------------------------------------------------------------------


def _word(key: str, value: Any) -> str:
    if key == "acks":
        return f"acks{value}"
    if key == "min_insync":
        return f"isr{value}"
    if key == "replication_factor":
        return f"rf{value}"
    if key == "unclean_leader_election":
        return f"unclean{str(value).lower()}"
    if key == "group_protocol":
        return f"group{value}"
    if key == "nemesis":
        faults = [f for f in value if f != "none"]
        return "+".join(faults) if faults else "none"
    return str(value)


def test_name(values: Mapping[str, Any], shown: Iterable[str], prefix: str = "matrix") -> str:
    """``matrix-acks1-isr2-uncleanfalse-kill+partition-4.1.x`` (only the ``shown`` axes;
    ``groupconsumer`` for the group protocol when it is an axis)."""
    keep = set(shown)
    return "-".join([prefix] + [_word(k, values[k]) for k in AXES if k in keep])


def expand(matrix: Matrix) -> tuple[list[Combination], list[Skipped]]:
    """Every combination of the axes, minus the ones ``insync run`` would reject.

    Each is checked as ``insync run`` checks before it creates anything
    (``setup.preflight``), so no run of the grid can fail on its input.
    """
    base_fields = {f.name for f in fields(RunOptions)}
    base = {k: v for k, v in matrix.base.items() if k in base_fields}
    # Axes the user did not give still name the test, so the names say what ran.
    shown = [k for k in AXES if k in matrix.axes or k in ("acks", "min_insync")]
    shown += [] if "unclean_leader_election" in shown else ["unclean_leader_election"]
    shown += [] if "nemesis" in shown else ["nemesis"]
    shown += [] if "kafka_version" in shown else ["kafka_version"]
    keys = list(matrix.axes)
    build = base.get("kafka_dist")
    if build is not None and "kafka_version" in matrix.axes:
        raise UsageError(f"--kafka-dist {build} is one build: it takes no --kafka-version axis",
                         hint="drop --kafka-version, or run the releases without --kafka-dist")
    good: list[Combination] = []
    skipped: list[Skipped] = []
    for combo in itertools.product(*(matrix.axes[k] for k in keys)):
        chosen = dict(zip(keys, combo, strict=True))
        opts = RunOptions(**{**base, **chosen})
        values = {k: getattr(opts, k) if k != "nemesis" else opts.nemesis or ["none"] for k in AXES}
        dist = opts.build()
        if dist is not None:  # the build names its version (its runs' test.json too)
            values["kafka_version"] = dist.version
        name = test_name(values, shown, base.get("name") or "matrix")
        opts = replace(opts, name=name, teardown=False)
        try:
            preflight(opts)
        except UsageError as err:
            skipped.append(Skipped(name, err.one_line()))
            continue
        good.append(Combination(name, values, opts))
    return good, skipped


def order(combos: Sequence[Combination]) -> list[Combination]:
    """Group by cluster spec (first appearance order) so each cluster is built once."""
    groups: dict[str, list[Combination]] = {}
    for c in combos:
        groups.setdefault(c.cluster_key, []).append(c)
    return [c for group in groups.values() for c in group]


def rebuilds(combos: Sequence[Combination]) -> int:
    """How many times the sequence changes cluster spec (the first build counts)."""
    keys = [c.cluster_key for c in combos]
    return sum(1 for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k)
