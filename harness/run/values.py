"""The run's option values: the ground floor's converters, plus the one that needs a cluster.

Everything about turning a raw value into a typed one lives in
:mod:`harness.base.values` (workloads declare their options with it too, and they
sit below the runner). ``kafka_version`` stays here: it checks the spelling
against ``cluster.versions``, which the ground floor must not import.
"""

from __future__ import annotations

from typing import Any

from harness.base.values import (
    HELP_HINT,
    Range,
    Spec,
    boolean,
    choice,
    convert,
    items,
    key_values,
    number,
    opt_number,
    opt_whole,
    read_text,
    run_name,
    shown,
    text,
    usable_dir,
    whole,
)

__all__ = [
    "HELP_HINT",
    "Range",
    "Spec",
    "boolean",
    "choice",
    "cluster_name",
    "convert",
    "items",
    "kafka_dist",
    "kafka_version",
    "key_values",
    "number",
    "opt_number",
    "opt_whole",
    "read_text",
    "run_name",
    "shown",
    "text",
    "usable_dir",
    "whole",
]


def kafka_version(x: Any) -> str:
    """A version Maven Central lists (``4.1.x``, ``3.9``, ``2.8.2``), kept as spelled;
    or a build's (``4.5.0-SNAPSHOT``, ``4.4.0-rc1``), which only ``--kafka-dist`` has."""
    from cluster.version_order import split_version
    from cluster.versions import resolve_version

    spec = text(x)
    parts = split_version(spec)
    if parts is not None and parts[1]:
        return spec  # a build's version: checked against --kafka-dist's
    resolve_version(spec)  # raises UsageError listing the known versions
    return spec


def kafka_dist(x: Any) -> str:
    """A Kafka distribution insync can run (``cluster.kafka_dist``), as an absolute path,
    so that a replay from another directory finds the same build."""
    from cluster.kafka_dist import inspect_dist

    return inspect_dist(text(x)).path


def cluster_name(x: Any) -> str:
    """``ClusterSpec``'s rule for a name, checked as the value is read, so that
    ``insync cluster down --cluster-name ''`` is refused rather than meaning "every cluster"."""
    from cluster.spec import check_name

    if not isinstance(x, str):
        raise TypeError(f"expected text, got {shown(x)}")
    return check_name(x)
