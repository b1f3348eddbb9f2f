"""What a report embeds: compact op columns, plot series, fault bands, anomaly panels, config.

The browser must open a 1M-op run's report in seconds, so the page never gets
one JSON object per op. It gets the drawn ops as typed-array columns, gzipped
and base64-encoded into one string (~5 bytes per op after compression), the
quantile and throughput series pre-computed over *all* ops, and full op values
only for the ops a person is likely to hover: every op of a small run, and
for big runs the ops around each anomaly plus a sample of fail/info ops.
Past ``MAX_DRAWN`` ops the timeline is downsampled (``plot_data.downsample``)
and every op an anomaly points at is kept.
"""

from __future__ import annotations

import base64
import gzip
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from harness.base.drain import drain_finished
from harness.base.paths import printable
from harness.base.rundir import NODES, REPORT, RunDir
from results.report.anomaly_view import KeyRecords, anomaly_keys, evidence_ops, explain, offset_grid
from results.report.history_table import OpTable, read_lines
from results.report.plot_data import (
    OUTCOMES,
    Array,
    Series,
    assign_lanes,
    bucket_width,
    downsample,
    latency_quantiles,
    nemesis_bands,
    throughput,
)
from results.run_coverage import spans_of

#: Ops drawn on the timeline before downsampling starts.
MAX_DRAWN = 200_000
#: Runs with at most this many client ops embed every op's value.
DETAIL_ALL = 20_000
#: Examples per anomaly type given a panel (counts are always exact).
SHOWN_PER_TYPE = 20
#: Neighbouring rows (in completion order) around an anomaly op with full values.
NEIGHBOURS = 12
#: Sampled fail/info ops with full values in big runs.
SAMPLED_DETAILS = 3_000
#: Longest value JSON embedded per op; longer ones are cut (the history has it all).
MAX_VALUE_CHARS = 20_000
QUANTILES = (0.5, 0.95, 0.99, 1.0)


def cut_short(test: Mapping[str, Any] | None, verdict: Mapping[str, Any]) -> str | None:
    """The header's line for a run whose drain never finished (``harness.base.drain``)."""
    found = verdict.get("run")
    run: Mapping[str, Any] = found if isinstance(found, dict) else {}
    signal = run.get("signal") if isinstance(run.get("signal"), str) else None
    if drain_finished(test) is not False and run.get("interrupted") is not True:
        return None
    how = f"interrupted by {signal}" if signal else (
        "interrupted" if run.get("interrupted") is True else "cut short")
    unjudged = ", ".join(str(t) for t in verdict.get("not-judged") or ()) or "unseen"
    return f"{how} before the drain finished: {unjudged} not judged"


def shown_anomalies(verdict: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The anomaly examples that get a panel, per type."""
    anomalies: Mapping[str, list[dict[str, Any]]] = verdict.get("anomalies") or {}
    return {kind: list(anomalies.get(kind) or [])[:SHOWN_PER_TYPE]
            for kind in verdict.get("anomaly-types") or anomalies}


def keys_of_interest(verdict: Mapping[str, Any]) -> set[str]:
    """Keys whose records the offset grids need."""
    return {k for examples in shown_anomalies(verdict).values() for a in examples
            for k in anomaly_keys(a)[:1]}


def _rows_of(table: OpTable, indices: list[int]) -> list[int]:
    """Table rows of completion indices (the table is sorted by index)."""
    if not indices:
        return []
    idx = np.asarray(indices, dtype=np.int64)
    pos = np.searchsorted(table.index, idx)
    pos = np.minimum(pos, max(len(table) - 1, 0))
    return [int(p) for p, i in zip(pos, idx, strict=True) if len(table) and table.index[p] == i]


def _columns(table: OpTable, rows: Array, lanes: Array, t0: int) -> tuple[str, list[Any]]:
    """The drawn ops as one gzipped, base64 buffer of typed arrays, sorted by start time."""
    rows = rows[np.argsort(table.start[rows], kind="stable")]
    cols = [
        ("start", "f64", (table.start[rows] - t0) / 1e6),
        ("lat", "f32", (table.end[rows] - table.start[rows]) / 1e6),
        ("index", "i32", table.index[rows]),
        ("process", "i32", table.process[rows]),
        ("error", "i32", table.error[rows]),
        ("lane", "u16", lanes[rows]),
        ("f", "u8", table.f[rows]),
        ("type", "u8", table.type[rows]),
    ]
    dtypes = {"f64": np.float64, "f32": np.float32, "i32": np.int32, "u16": np.uint16,
              "u8": np.uint8}
    parts: list[bytes] = []
    layout: list[Any] = []
    offset = 0
    for name, kind, data in cols:  # widest first: every column stays aligned
        raw = np.asarray(data).astype(np.dtype(dtypes[kind]).newbyteorder("<")).tobytes()
        layout.append([name, kind, offset, int(rows.size)])
        parts.append(raw)
        offset += len(raw)
    blob = gzip.compress(b"".join(parts), compresslevel=6, mtime=0)
    return base64.b64encode(blob).decode("ascii"), layout


def _detail_rows(table: OpTable, anomaly_rows: list[int], rng_seed: int = 0) -> list[int]:
    n = len(table)
    if n <= DETAIL_ALL:
        return list(range(n))
    rows: set[int] = set()
    for r in anomaly_rows:
        rows.update(range(max(0, r - NEIGHBOURS), min(n, r + NEIGHBOURS + 1)))
    bad = np.flatnonzero(table.type != 0)
    if bad.size > SAMPLED_DETAILS:
        bad = bad[np.linspace(0, bad.size - 1, SAMPLED_DETAILS).astype(np.int64)]
    rows.update(int(r) for r in bad)
    return sorted(rows)


def _cut(value: Any) -> Any:
    text = orjson.dumps(value)
    if len(text) <= MAX_VALUE_CHARS:
        return value
    return {"truncated": True, "json_prefix": text[:MAX_VALUE_CHARS].decode(errors="replace")}


def _details(history: Path, table: OpTable, rows: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for index, ops in read_lines(history, table, rows).items():
        inv, done = ops.get("invoke", {}), ops.get("completion", {})
        out[str(index)] = {"invoke": _cut(inv.get("value")),
                           "value": _cut(done.get("value")) if "value" in done else None}
    return out


def _meta(table: OpTable, rows: list[int]) -> dict[int, dict[str, Any]]:
    return {int(table.index[r]): {"process": int(table.process[r]),
                                  "f": table.f_names[int(table.f[r])],
                                  "type": OUTCOMES[int(table.type[r])]} for r in rows}


def _panels(verdict: Mapping[str, Any], table: OpTable) -> list[dict[str, Any]]:
    ops_meta = verdict.get("ops") or {}
    bad = set(verdict.get("bad-anomaly-types") or ())
    counts = verdict.get("anomaly-counts") or {}
    indexed: dict[str, KeyRecords] = {}
    panels = []
    for kind, examples in shown_anomalies(verdict).items():
        items = []
        for a in examples:
            keys = anomaly_keys(a)
            key = None
            if keys and keys[0] in table.records:
                key = indexed.get(keys[0]) or indexed.setdefault(
                    keys[0], KeyRecords(table.records[keys[0]]))
            grid = offset_grid(a, key) if key is not None else None
            if grid is not None:
                meta = _meta(table, _rows_of(table, grid["ops"]))
                grid["ops"] = [{"index": c, **meta.get(c, {})} for c in grid["ops"]]
            items.append({"text": explain(kind, a, ops_meta), "ops": evidence_ops(a, key),
                          "key": keys[0] if keys else None, "grid": grid, "raw": a})
        panels.append({"type": kind, "bad": kind in bad,
                       "count": int(counts.get(kind, len(examples))), "examples": items})
    return panels


def _type_weights(table: OpTable, rows: Array) -> list[float]:
    """Per outcome: all ops / drawn ops, so sampled views can be weighted back to the truth."""
    total = np.bincount(table.type, minlength=len(OUTCOMES))
    drawn = np.bincount(table.type[rows], minlength=len(OUTCOMES))
    return [float(t / d) if d else 1.0 for t, d in zip(total, drawn, strict=True)]


def series(table: OpTable, test: Mapping[str, Any] | None) -> Series:
    """Every plot's numbers, once per report: the page embeds them, the PNGs draw them.

    Fault bands pair by the spans the run recorded in test.json (the runner writes
    its nemesis package's), on top of the registry's, which alone decide for a
    history without test.json (``run_coverage.spans_of``, as the coverage panel).
    """
    t0, t_end = table.start_time, max(table.end_time, table.start_time + 1)
    lanes, n_lanes = assign_lanes(table.process, table.start, table.end)
    width = bucket_width(t_end - t0)
    latency_ms = (table.end - table.start) / 1e6
    qt, qv = latency_quantiles(table.start, latency_ms, width, QUANTILES, t0=t0)
    tt, tv = throughput(table.end, table.type, width, t0=t0, end=t_end)
    return Series(t0=t0, t_end=t_end, start=table.start, end=table.end,
                  outcome=table.type.astype(np.int64), latency_ms=latency_ms, lanes=lanes,
                  n_lanes=n_lanes, bands=nemesis_bands(table.nemesis, t_end, spans_of(test)),
                  width=width, qs=QUANTILES, quantile_t=qt, quantiles=qv, bucket_t=tt, rates=tv)


def build(run: RunDir, verdict: Mapping[str, Any], test: Mapping[str, Any] | None,
          table: OpTable, plot: Series) -> dict[str, Any]:
    """Everything the page draws, as one JSON-able dict (``plot``: ``series(table, test)``)."""
    n = len(table)
    t0, t_end, lanes = plot.t0, plot.t_end, plot.lanes
    panels = _panels(verdict, table)
    anomaly_rows = _rows_of(table, sorted({i for p in panels for e in p["examples"]
                                           for i in e["ops"]}))
    keep = set(anomaly_rows)
    for r in anomaly_rows:
        keep.update(range(max(0, r - 2), min(n, r + 3)))
    preferred: list[int] = np.flatnonzero(table.type != 0).tolist()
    rows = downsample(n, keep, preferred, MAX_DRAWN)
    columns, layout = _columns(table, rows, lanes, t0)
    argv = (test or {}).get("argv")
    return {
        # printable: a directory name that is not UTF-8 cannot go into the page's JSON
        "name": (test or {}).get("name") or printable(run.path.name),
        "run_dir": printable(str(run.path)),
        "test": test,
        "argv": argv,
        "command": shlex.join(str(a) for a in argv) if isinstance(argv, list) else None,
        "verdict": {k: verdict.get(k) for k in ("valid", "anomaly-types", "bad-anomaly-types",
                                                "anomaly-counts", "stats", "error", "run",
                                                "not-judged")},
        "cut_short": cut_short(test, verdict),
        "duration_ms": (t_end - t0) / 1e6,
        "ops_total": n,
        "ops_drawn": int(rows.size),
        "type_weights": _type_weights(table, rows),
        "lanes": plot.n_lanes,
        "f_names": table.f_names,
        "errors": table.errors,
        "columns": columns,
        "layout": layout,
        "bands": [{"kind": b.kind, "label": b.label, "start": (b.start - t0) / 1e6,
                   "stop": (b.stop - t0) / 1e6, "start_index": b.start_index,
                   "stop_index": b.stop_index, "open": b.open, "detail": b.detail}
                  for b in plot.bands],
        "bucket_ms": plot.width / 1e6,
        "quantiles": {"t": ((plot.quantile_t - t0) / 1e6).tolist(), "q": list(plot.qs),
                      "v": [[None if np.isnan(x) else round(float(x), 3) for x in row]
                            for row in plot.quantiles.T]},
        "throughput": {"t": ((plot.bucket_t - t0) / 1e6).tolist(),
                       "v": [[round(float(x), 2) for x in row] for row in plot.rates]},
        "details": _details(run.history_path, table, _detail_rows(table, anomaly_rows)),
        "details_complete": n <= DETAIL_ALL,
        "anomalies": panels,
        "files": sorted(printable(p.name) for p in run.path.iterdir() if p.is_file()
                        and p.name != REPORT) + ([f"{NODES}/"] if run.nodes_path.is_dir() else []),
    }
