"""The numbers behind every plot, computed once from the history, shared by HTML and PNG.

``Series`` holds them for one run: ``results.report.data.series`` fills it
once per report, the page embeds it and ``results.report.plots`` draws the PNGs from
the very same object, so the two can never disagree.

Kept apart from drawing so it can be tested on known data: which nemesis op
opens and closes each fault band, latency quantiles per time bucket,
throughput per outcome, and downsampling that never drops an op an anomaly
points at. Everything works on numpy columns (one row per client op) because a
1M-line history is 500k ops: Python objects per op would cost seconds and GiBs.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.base import contract
from harness.base.faults import fault_spans
from harness.base.history import NemesisPair, Op, pairs
from results.report.fault_labels import compact, fault_label

Array = npt.NDArray[Any]

#: The completion types in the contract's code order, which is also the drawing order.
#: The report's ``type`` column holds a completion's position here: its outcome code
#: minus ``harness.base.contract.OK`` (0 ok, 1 fail, 2 info), dense for ``np.bincount``.
OUTCOMES = contract.OUTCOMES

@dataclass(frozen=True)
class Band:
    """One fault in force from ``start`` to ``stop`` (ns); ``open`` if it was never stopped."""

    kind: str
    start: int
    stop: int
    start_index: int
    stop_index: int | None
    label: str
    open: bool = False
    #: The start op's full value as one line of JSON (the report shows it on a click).
    detail: str = ""


@dataclass(frozen=True)
class Series:
    """Every plot of one run, as numbers: per-op columns and what was derived from them.

    Times are ns on the history's clock; ``t0`` (the first op) is every plot's zero.
    """

    t0: int
    t_end: int
    #: Per op (one row per client op, as in the op table): start, end, outcome code, latency.
    start: Array
    end: Array
    outcome: Array
    latency_ms: Array
    #: Timeline row of each op (``assign_lanes``) and the number of rows.
    lanes: Array
    n_lanes: int
    bands: list[Band]
    #: Time-bucket width (``bucket_width``) of the quantile and throughput series.
    width: int
    qs: tuple[float, ...]
    quantile_t: Array  # bucket start times
    quantiles: Array  # [bucket, q]
    bucket_t: Array
    rates: Array  # [outcome, bucket], ops/s


def _span_lookup(
    spans: Mapping[str, Sequence[str]],
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """start f -> kind, and stop f -> every kind it ends (``reset-clock`` ends three)."""
    starts: dict[str, str] = {}
    stops: dict[str, list[str]] = {}
    for kind, (start_f, stop_f) in spans.items():
        starts[start_f] = kind
        stops.setdefault(stop_f, []).append(kind)
    return starts, stops


def _fault_events(nemesis_ops: Iterable[Op]) -> list[Op]:
    """One event per nemesis action (``harness.base.history.pairs``): its completion, or
    its invoke if it never completed.

    The completion is when the fault is known to be in force (the nemesis says
    what it really did there); a bare invoke at the end of a cut-short run still
    counts, from the moment it was attempted.
    """
    return [p.op for p in pairs(nemesis_ops) if isinstance(p, NemesisPair)]


def _label(kind: str, value: Any, failed: bool = False) -> str:
    flag = " (start reported an error)" if failed else ""
    return fault_label(kind, value) + flag


def _detail(value: Any) -> str:
    return "" if value is None else compact(value)


def nemesis_bands(
    nemesis_ops: Iterable[Op],
    end_time: int,
    spans: Mapping[str, Sequence[str]] | None = None,
) -> list[Band]:
    """Pair each fault's start with the next stop of the same kind.

    A start while that kind is already in force does not open a second band; a
    stop with nothing open is ignored; a start never stopped extends to
    ``end_time``. Nemesis ops that neither start nor stop a known kind become
    zero-width bands (an instant marker) so no fault goes unseen.
    """
    # every registered kind's spans; ``start-X``/``stop-X`` is understood for any X;
    # test.json may add spans
    starts, stops = _span_lookup({**fault_spans(), **(spans or {})})
    open_: dict[str, Mapping[str, Any]] = {}
    failed: set[int] = set()  # starts whose completion carries an error: maybe not applied
    bands: list[Band] = []
    for op in _fault_events(nemesis_ops):
        f = str(op.get("f"))
        t, index = int(op.get("time", 0)), int(op.get("index", 0))
        kind_start = starts.get(f) or (f[6:] if f.startswith("start-") else None)
        kinds_stop = stops.get(f) or ([f[5:]] if f.startswith("stop-") else [])
        if kind_start is not None:
            open_.setdefault(kind_start, op)
            if op.get("error") is not None and open_[kind_start] is op:
                failed.add(id(op))
        elif kinds_stop:
            for kind in kinds_stop:
                first = open_.pop(kind, None)
                if first is not None:
                    bands.append(Band(kind, int(first.get("time", 0)), t,
                                      int(first.get("index", 0)), index,
                                      _label(kind, first.get("value"), id(first) in failed),
                                      detail=_detail(first.get("value"))))
        else:
            bands.append(Band(f, t, t, index, index, _label(f, op.get("value")),
                              detail=_detail(op.get("value"))))
    for kind, first in open_.items():
        t = int(first.get("time", 0))
        bands.append(Band(kind, t, max(end_time, t), int(first.get("index", 0)), None,
                          _label(kind, first.get("value"), id(first) in failed)
                          + " (never stopped)", open=True, detail=_detail(first.get("value"))))
    bands.sort(key=lambda b: (b.start, b.start_index))
    return bands


# --- time buckets ------------------------------------------------------------------


def bucket_width(duration_ns: int, target_buckets: int = 200) -> int:
    """A round bucket width (1, 2 or 5 x 10^k ns, at least 1 ms) giving ~``target_buckets``."""
    raw = max(duration_ns / max(target_buckets, 1), 1e6)
    exp = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * exp:
            return int(m * exp)
    return int(10 * exp)  # pragma: no cover - the loop always returns


def latency_quantiles(
    times: Array, latencies: Array, width: int, qs: Sequence[float] = (0.5, 0.95, 0.99, 1.0),
    t0: int = 0,
) -> tuple[Array, Array]:
    """Per bucket of ``width`` ns (by ``times``): the ``qs`` quantiles of ``latencies``.

    Returns (bucket start times, array [bucket, q]); empty buckets are NaN.
    Quantiles interpolate linearly between order statistics (numpy's default),
    so the median of 1..100 is 50.5.
    """
    times = np.asarray(times, dtype=np.int64)
    lat = np.asarray(latencies, dtype=np.float64)
    if times.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, len(qs)))
    bucket = (times - t0) // width
    nb = int(bucket.max()) + 1
    order = np.lexsort((lat, bucket))
    sb, sl = bucket[order], lat[order]
    bounds = np.searchsorted(sb, np.arange(nb + 1))
    out = np.full((nb, len(qs)), np.nan)
    q = np.asarray(qs, dtype=np.float64)
    for b in range(nb):
        lo, hi = bounds[b], bounds[b + 1]
        n = hi - lo
        if n == 0:
            continue
        pos = q * (n - 1)
        below = np.floor(pos).astype(np.int64)
        above = np.minimum(below + 1, n - 1)
        frac = pos - below
        out[b] = sl[lo + below] * (1 - frac) + sl[lo + above] * frac
    return t0 + np.arange(nb, dtype=np.int64) * width, out


def throughput(times: Array, outcomes: Array, width: int, t0: int = 0,
               end: int | None = None) -> tuple[Array, Array]:
    """Completions per second in each bucket of ``width`` ns, one row per outcome code.

    Returns (bucket start times, array [outcome, bucket] in ops/s).
    """
    times = np.asarray(times, dtype=np.int64)
    outcomes = np.asarray(outcomes, dtype=np.int64)
    last = int(times.max()) if times.size else t0
    if end is not None:
        last = max(last, end - 1)
    nb = max((last - t0) // width + 1, 1)
    bucket = (times - t0) // width
    counts = np.zeros((len(OUTCOMES), nb))
    np.add.at(counts, (outcomes, bucket), 1)
    return t0 + np.arange(nb, dtype=np.int64) * width, counts * (1e9 / width)


# --- choosing what to draw ---------------------------------------------------------


def downsample(n: int, keep: Iterable[int], preferred: Iterable[int], max_rows: int) -> Array:
    """Rows to draw when ``n`` is too many: every ``keep`` row, then ``preferred``, then a stride.

    ``keep`` (rows an anomaly points at, and their neighbours) is never dropped,
    even past ``max_rows``; ``preferred`` rows (fail/info ops, ops around fault
    changes) fill what room is left, evenly spread if they do not all fit; the
    rest is an even stride over the remaining rows. Sorted, no duplicates.
    """
    if n <= max_rows:
        return np.arange(n, dtype=np.int64)
    chosen = np.zeros(n, dtype=bool)
    keep_arr = np.fromiter((i for i in keep if 0 <= i < n), dtype=np.int64)
    chosen[keep_arr] = True
    room = max_rows - int(chosen.sum())
    pref = np.fromiter((i for i in preferred if 0 <= i < n), dtype=np.int64)
    pref = np.unique(pref[~chosen[pref]]) if pref.size else pref
    if room > 0 and pref.size:
        take = pref if pref.size <= room else pref[np.linspace(0, pref.size - 1, room).astype(
            np.int64)]
        chosen[take] = True
        room = max_rows - int(chosen.sum())
    if room > 0:
        rest = np.flatnonzero(~chosen)
        if rest.size:
            take = rest if rest.size <= room else rest[
                np.linspace(0, rest.size - 1, room).astype(np.int64)]
            chosen[take] = True
    return np.flatnonzero(chosen)


def assign_lanes(process: Array, start: Array, end: Array) -> tuple[Array, int]:
    """A timeline row per worker, not per process number: reuse a row once its process is done.

    A client process that ends ``info`` is retired and a fresh number takes over,
    so a long faulty run has thousands of process numbers but only
    ``concurrency`` workers. Processes are laid out as intervals [first invoke,
    last completion] into the fewest rows, lowest free row first.
    Returns (row of each op, number of rows).
    """
    if process.size == 0:
        return np.zeros(0, dtype=np.int32), 0
    procs, inverse = np.unique(process, return_inverse=True)
    first = np.full(procs.size, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(procs.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(first, inverse, start)
    np.maximum.at(last, inverse, end)
    lane_of = np.zeros(procs.size, dtype=np.int32)
    busy: list[tuple[int, int]] = []
    free: list[int] = []
    lanes = 0
    for p in np.argsort(first, kind="stable"):
        while busy and busy[0][0] < first[p]:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane, lanes = lanes, lanes + 1
        lane_of[p] = lane
        heapq.heappush(busy, (int(last[p]), lane))
    return lane_of[inverse], lanes
