"""Judging the keys of a history in several processes, with the single-pass verdict.

Why: once a large history is read, the per-key analyses (version orders, then
every anomaly rule of HISTORY.md) are the longest step left, and keys are
independent. Sorted keys are cut into contiguous parts; forked children judge
all parts but the first, which is judged here, each into its own
``Anomalies``. Joining them in key order reproduces the single pass exactly:
counts add up, and a part's examples are kept while the running count of
their type is below the cap, which is what ``Anomalies.counted`` decides.
"""

from __future__ import annotations

from typing import Any

from checkers._analyses import analyse_key
from checkers._collect import Collector
from checkers._fork import fork_call, result
from checkers._verdict import Anomalies
from checkers._versions import build

Proven = dict[str, list[tuple[int, int, int]]]


def split(collector: Collector, keys: list[str], parts: int) -> list[list[str]]:
    """Contiguous runs of ``keys`` of about equal work (records and sends per key)."""
    weights = [
        len(ks.rvals) + len(ks.svals) + len(ks.log) + 1
        for ks in map(collector.keys.__getitem__, keys)
    ]
    total = sum(weights)
    runs: list[list[str]] = [[]]
    done = 0
    for key, weight in zip(keys, weights, strict=True):
        if runs[-1] and done >= total * len(runs) / parts and len(runs) < parts:
            runs.append([])
        runs[-1].append(key)
        done += weight
    return runs if keys else []


def judge_keys(
    collector: Collector, keys: list[str], proven: set[int], offsets: Proven, cap: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """Analyse ``keys`` in order into a fresh ``Anomalies``; its examples and counts."""
    out = Anomalies(cap)
    for k in keys:
        ks = collector.keys[k]
        analyse_key(k, ks, build(ks, offsets.get(k, [])), proven, out)
    return out.examples, out.counts


def judge_in_parts(  # noqa: PLR0917 - the judge's own state, passed on whole
    collector: Collector,
    keys: list[str],
    proven: set[int],
    offsets: Proven,
    out: Anomalies,
    parts: int,
) -> None:
    """``judge_keys`` over every key, the later parts in forked children, joined into ``out``."""
    runs = split(collector, keys, parts)
    if not runs:
        return
    children = [fork_call(judge_keys, collector, run, proven, offsets, out.cap) for run in runs[1:]]
    try:
        first = judge_keys(collector, runs[0], proven, offsets, out.cap)
    finally:
        got = [result(child) for child in children]
    join(out, first)
    for run, part in zip(runs[1:], got, strict=True):
        join(
            out, part if part is not None else judge_keys(collector, run, proven, offsets, out.cap)
        )


def join(out: Anomalies, part: tuple[dict[str, list[dict[str, Any]]], dict[str, int]]) -> None:
    """Add a later part's anomalies to ``out`` as if they had been counted into it."""
    examples, counts = part
    for kind, n in counts.items():
        before = out.counts.get(kind, 0)
        out.counts[kind] = before + n
        room = out.cap - before
        if room > 0 and kind in examples:
            out.examples.setdefault(kind, []).extend(examples[kind][:room])
