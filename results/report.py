"""``write_report(run_dir)``: a run directory's report.html and PNG plots.

The runner calls it after checking; ``insync report RUN_DIR`` calls it to
regenerate. It needs only ``history.jsonl``: the verdict comes from
``results.json`` when there is one, otherwise the checker computes it, and
``test.json`` (configuration, re-run command) is optional.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from harness.base.errors import HistoryError, UsageError
from results import report_data, report_template
from results.history_table import OpTable, read_table
from results.plot_data import (
    assign_lanes,
    bucket_width,
    latency_quantiles,
    nemesis_bands,
    throughput,
)

REPORT_NAME = "report.html"
PNG_NAMES = ("timeline.png", "latency.png", "throughput.png")


def load_verdict(run_dir: Path) -> dict[str, Any]:
    """results.json's verdict, or the checker's when the run has none (a bare history)."""
    results = run_dir / "results.json"
    if results.is_file():
        try:
            verdict = json.loads(results.read_text())
        except (OSError, ValueError) as err:
            raise HistoryError(f"{results} is not readable JSON: {err}",
                               hint="delete it to have the checker recompute it") from err
        if isinstance(verdict, dict):
            return verdict
    from checkers import check_file

    return check_file(run_dir)


def load_test(run_dir: Path) -> dict[str, Any] | None:
    """test.json, or None for a bare history; a broken file is shown as such, not fatal."""
    path = run_dir / "test.json"
    if not path.is_file():
        return None
    try:
        test = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        return {"unreadable_test_json": str(err)}
    return test if isinstance(test, dict) else {"test_json": test}


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(run_dir: Path, *, pngs: bool = True) -> Path:
    """Write ``report.html`` and (unless ``pngs`` is False) the PNGs; returns the report's path.

    Raises ``UsageError`` when ``run_dir`` has no history.jsonl, and
    ``HistoryError`` when the history cannot be judged for lack of a verdict.
    """
    run_dir = Path(run_dir)
    history = run_dir / "history.jsonl"
    if not history.is_file():
        raise UsageError(f"{run_dir} has no history.jsonl",
                         hint="give a run directory written by 'insync run'")
    verdict = load_verdict(run_dir)
    test = load_test(run_dir)
    table = read_table(history, report_data.keys_of_interest(verdict))
    payload = report_data.build(history, verdict, test, table)
    title = str(payload["name"])
    page = report_template.render(title, orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY))
    out = run_dir / REPORT_NAME
    _atomic_write(out, page)
    if pngs:
        write_pngs(run_dir, table, test, title)
    return out


def write_pngs(run_dir: Path, table: OpTable, test: dict[str, Any] | None, title: str) -> None:
    """timeline.png, latency.png and throughput.png of the run."""
    from results import plots  # matplotlib takes seconds to import: only when drawing PNGs

    t0, t_end = table.start_time, max(table.end_time, table.start_time + 1)
    spans = ((test or {}).get("nemesis") or {}).get("fault_spans") or {}
    bands = nemesis_bands(table.nemesis, t_end, spans)
    lanes, n_lanes = assign_lanes(table.process, table.start, table.end)
    outcome = table.type.astype(np.int64)
    width = bucket_width(t_end - t0)
    latency_ms = (table.end - table.start) / 1e6
    qt, qv = latency_quantiles(table.start, latency_ms, width, report_data.QUANTILES, t0=t0)
    tt, tv = throughput(table.end, outcome, width, t0=t0, end=t_end)
    plots.timeline_png(run_dir / "timeline.png", start=table.start, end=table.end, lane=lanes,
                       outcome=outcome, n_lanes=n_lanes, bands=bands, t0=t0,
                       title=f"{title}: operations by worker")
    plots.latency_png(run_dir / "latency.png", start=table.start, latency_ms=latency_ms,
                      outcome=outcome, quantile_t=qt, quantiles=qv, qs=report_data.QUANTILES,
                      bands=bands, t0=t0, title=f"{title}: latency")
    plots.throughput_png(run_dir / "throughput.png", bucket_t=tt, rates=tv, bands=bands, t0=t0,
                         title=f"{title}: throughput")
