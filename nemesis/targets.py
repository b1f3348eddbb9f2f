"""Symbolic targets resolved against the nodes and the cluster's live metadata.

A generator names targets symbolically (``one``, ``majority``, ``leaders``,
``leader:t0-0``) so a schedule stays meaningful whatever the cluster does; the
nemesis resolves them at the moment of the fault and records the concrete
nodes. Resolution is pure: the metadata arrives through the ``Facts`` callbacks,
asked only when a target needs them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from cluster.metadata import PartitionState
from harness.base.errors import UsageError

#: Targets that need no metadata, then those that do. Also: ``leader:KEY``,
#: ``followers:KEY`` (the replicas of one partition), a node name, or a list of names.
PLAIN_TARGETS = ("one", "minority", "majority", "all")
METADATA_TARGETS = ("leaders", "primaries", "controller")
TARGETS = PLAIN_TARGETS + METADATA_TARGETS

Target = str | Sequence[str]


@dataclass(frozen=True)
class Facts:
    """How to ask the cluster who leads: each callback runs only when needed."""

    partitions: Callable[[], Mapping[str, PartitionState]]
    controller: Callable[[], str]


def _partition(facts: Facts, key: str) -> PartitionState:
    parts = facts.partitions()
    if key not in parts:
        raise UsageError(f"no partition {key!r} in the cluster's metadata")
    return parts[key]


def leaders(facts: Facts) -> list[str]:
    """The distinct current leaders of the partitions ``facts`` covers, sorted."""
    return sorted({p.leader for p in facts.partitions().values() if p.leader is not None})


def resolve(target: Target, nodes: Sequence[str], rng: random.Random, facts: Facts) -> list[str]:
    """The concrete nodes ``target`` names right now, in node order."""
    order = {n: i for i, n in enumerate(nodes)}
    chosen: list[str]
    if not isinstance(target, str):
        chosen = [str(t) for t in target]
    elif target in order:
        chosen = [target]
    elif target == "all":
        chosen = list(nodes)
    elif target == "one":
        chosen = [rng.choice(list(nodes))]
    elif target == "minority":
        chosen = rng.sample(list(nodes), rng.randint(1, max(1, (len(nodes) - 1) // 2)))
    elif target == "majority":
        chosen = rng.sample(list(nodes), len(nodes) // 2 + 1)
    elif target in ("leaders", "primaries"):
        chosen = leaders(facts)
    elif target == "controller":
        chosen = [facts.controller()]
    elif target.startswith("leader:"):
        leader = _partition(facts, target.removeprefix("leader:")).leader
        chosen = [] if leader is None else [leader]
    elif target.startswith("followers:"):
        p = _partition(facts, target.removeprefix("followers:"))
        chosen = [r for r in p.replicas if r != p.leader]
    else:
        raise UsageError(
            f"unknown target {target!r}",
            hint=f"use one of {', '.join(TARGETS)}, leader:KEY, followers:KEY or node names",
        )
    unknown = [n for n in chosen if n not in order]
    if unknown:
        raise UsageError(f"target {target!r} names unknown nodes {unknown}")
    return sorted(set(chosen), key=order.__getitem__)
