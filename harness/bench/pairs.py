"""Interleaved measurement for ``insync bench run``: bare, insync, bare, insync, ..., bare.

One insync run between two bare loops gave ratios from 0.365 to 0.507 on the same code
and cluster (2026-11-23): the bare loop alone drifted by up to 20% within one bench, and
the first run on a cluster paid for its warm-up. So each insync run is judged against
the bare loops on either side of it (a pair), the bare loop between two runs serving
both, and the bench's ratio is the median of its pairs' ratios: one pair spoiled by
drift cannot decide it, and every pair is reported.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.bench.loops import Loop


@dataclass(frozen=True)
class Pair:
    """One measured insync run and the bare loops run just before and just after it."""

    insync: Loop
    bare_before: Loop
    bare_after: Loop

    @property
    def bare_rate(self) -> float:
        return (self.bare_before.rate + self.bare_after.rate) / 2

    @property
    def ratio(self) -> float | None:
        return self.insync.rate / self.bare_rate if self.bare_rate else None


def interleaved(bare: Callable[[], Loop], insync: Callable[[], Loop], runs: int) -> list[Pair]:
    """``runs`` insync runs, each between two bare loops (``runs + 1`` bare loops in all)."""
    if runs < 1:
        raise ValueError(f"runs must be 1 or more, not {runs}")
    before = bare()
    pairs: list[Pair] = []
    for _ in range(runs):
        measured = insync()
        after = bare()
        pairs.append(Pair(measured, before, after))
        before = after
    return pairs


def median_ratio(ratios: Sequence[float | None]) -> float | None:
    """The bench's ratio: the median of its pairs' ratios (None if no pair has one)."""
    known = [r for r in ratios if r is not None]
    return statistics.median(known) if known else None


def bare_loops(pairs: Sequence[Pair]) -> list[Loop]:
    """Every bare loop once, in the order they ran."""
    return [pairs[0].bare_before, *(p.bare_after for p in pairs)] if pairs else []


def summed(loops: Sequence[Loop]) -> Loop:
    """Several loops as one: their sends over their seconds (CPU where all know it)."""
    cpus = [loop.cpu_s for loop in loops]
    return Loop(sum(loop.acked for loop in loops), sum(loop.seconds for loop in loops),
                None if any(c is None for c in cpus) else sum(c for c in cpus if c is not None))
