"""The report's plots as PNG files (matplotlib, Agg): timeline, latency, throughput.

For places that cannot run the HTML page: CI artifact viewers, issues, chat.
They draw the very numbers the page embeds (one ``results.report.plot_data.Series``,
computed once per report by ``results.report.data.series``), with at most
``MAX_PNG_OPS`` ops per picture so a 1M-op run still renders in seconds. Each
returns the PNG's bytes; ``results.report.write`` writes them (atomically).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from results.report.plot_data import OUTCOMES, Array, Band, Series

COLORS = {"ok": "#2f9e5b", "fail": "#d64545", "info": "#e0a000"}
BAND_COLORS = {"partition": "#4c78c8", "kill": "#c0392b", "pause": "#8e5bb5", "clock": "#d98c00",
               "packet": "#16a085"}
MAX_PNG_OPS = 40_000
DPI = 110


def _shade(ax: Axes, bands: Sequence[Band], t0: int, labels: bool = False) -> None:
    """Fault bands behind the data, in seconds since the run's first op."""
    for b in bands:
        color = BAND_COLORS.get(b.kind) or BAND_COLORS.get(b.kind.split("-")[0], "#7f8c8d")
        start, stop = (b.start - t0) / 1e9, (b.stop - t0) / 1e9
        ax.axvspan(start, max(stop, start + 1e-6), color=color, alpha=0.13, lw=0, zorder=0)
        if labels:
            ax.text(start, 1.0, b.kind, transform=ax.get_xaxis_transform(), fontsize=7,
                    color=color, va="bottom", ha="left", clip_on=False)


def _legend(ax: Axes, **kwargs: Any) -> None:
    """A legend, unless nothing was drawn (a run with no client ops)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _png(fig: Figure) -> bytes:
    """The figure as PNG bytes (the caller writes them: ``report`` does it atomically)."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    return buf.getvalue()


def _sample(rows: Array) -> Array:
    if rows.size <= MAX_PNG_OPS:
        return rows
    return rows[np.linspace(0, rows.size - 1, MAX_PNG_OPS).astype(np.int64)]


def timeline_png(s: Series, title: str) -> bytes:
    """One row per worker; each op a bar from invoke to completion, coloured by outcome."""
    start, end, lane, outcome, n_lanes, bands, t0 = (
        s.start, s.end, s.lanes, s.outcome, s.n_lanes, s.bands, s.t0)
    fig, ax = plt.subplots(figsize=(13, max(2.5, min(9.0, 1.2 + 0.22 * n_lanes))), dpi=DPI)
    _shade(ax, bands, t0, labels=True)
    for code, name in enumerate(OUTCOMES):
        rows = _sample(np.flatnonzero(outcome == code))
        if not rows.size:
            continue
        x0, x1 = (start[rows] - t0) / 1e9, (end[rows] - t0) / 1e9
        y = lane[rows].astype(np.float64)
        segs = np.stack([np.stack([x0, y], 1), np.stack([x1, y], 1)], 1)
        ax.add_collection(LineCollection(list(segs), colors=COLORS[name], linewidths=4,
                                         label=name, capstyle="butt"))
    ax.set_ylim(n_lanes - 0.5, -0.8)
    ax.autoscale(axis="x")
    ax.set_xlabel("time since the first op (s)")
    ax.set_ylabel("worker")
    ax.set_title(title, fontsize=10, loc="left", pad=12)
    _legend(ax, loc="upper right", fontsize=8, ncols=3)
    fig.tight_layout()
    return _png(fig)


def latency_png(s: Series, title: str) -> bytes:
    """Raw latency (log scale) by outcome, and latency quantiles over time."""
    start, latency_ms, outcome, bands, t0 = s.start, s.latency_ms, s.outcome, s.bands, s.t0
    quantile_t, quantiles, qs = s.quantile_t, s.quantiles, s.qs
    fig, (raw, qax) = plt.subplots(2, 1, figsize=(13, 7), dpi=DPI, sharex=True)
    for ax in (raw, qax):
        _shade(ax, bands, t0)
        ax.set_yscale("log")
        ax.set_ylabel("latency (ms)")
        ax.grid(True, which="major", alpha=0.25)
    _shade(raw, bands, t0, labels=True)
    for code, name in enumerate(OUTCOMES):
        rows = _sample(np.flatnonzero(outcome == code))
        if rows.size:
            raw.scatter((start[rows] - t0) / 1e9, np.maximum(latency_ms[rows], 1e-3), s=2,
                        c=COLORS[name], label=name, alpha=0.6 if name == "ok" else 0.9, lw=0)
    _legend(raw, loc="upper right", fontsize=8, markerscale=4)
    raw.set_title(title, fontsize=10, loc="left", pad=12)
    for i, q in enumerate(qs):
        qax.plot((quantile_t - t0) / 1e9, quantiles[:, i], lw=1.3,
                 label="max" if q == 1 else f"p{q * 100:g}")
    _legend(qax, loc="upper right", fontsize=8, ncols=len(qs))
    qax.set_xlabel("time since the first op (s)")
    fig.tight_layout()
    return _png(fig)


def throughput_png(s: Series, title: str) -> bytes:
    """Completions per second by outcome."""
    bucket_t, rates, bands, t0 = s.bucket_t, s.rates, s.bands, s.t0
    fig, ax = plt.subplots(figsize=(13, 3.6), dpi=DPI)
    _shade(ax, bands, t0, labels=True)
    for code, name in enumerate(OUTCOMES):
        ax.plot((bucket_t - t0) / 1e9, rates[code], color=COLORS[name], lw=1.3, label=name,
                drawstyle="steps-post")
    ax.set_ylabel("ops/s")
    ax.set_xlabel("time since the first op (s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.25)
    _legend(ax, loc="upper right", fontsize=8, ncols=3)
    ax.set_title(title, fontsize=10, loc="left", pad=12)
    fig.tight_layout()
    return _png(fig)
