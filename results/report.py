"""``write_report(run_dir)``: a run directory's report.html and PNG plots.

The runner calls it after checking; ``insync report RUN_DIR`` calls it to
regenerate. It needs only ``history.jsonl``: the verdict comes from
``results.json`` when there is one, otherwise the checker computes it, and
``test.json`` (configuration, re-run command) is optional, and so is the
coverage block of results.json (``results.run_coverage`` computes it from the
history when it is missing).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from harness.base.errors import EnvironmentProblem, HistoryError
from harness.base.rundir import HISTORY
from results import coverage_panel, report_data, report_template, run_files
from results.history_table import HISTORY_HINT, OpTable, read_table
from results.plot_data import (
    assign_lanes,
    bucket_width,
    latency_quantiles,
    nemesis_bands,
    throughput,
)
from results.run_coverage import run_coverage

REPORT_NAME = "report.html"
PNG_NAMES = ("timeline.png", "latency.png", "throughput.png")


def load_verdict(run_dir: Path) -> dict[str, Any]:
    """results.json's verdict, or the checker's when the run has none (a bare history).

    A malformed results.json is a ``HistoryError`` naming it (``run_files``); so
    is a malformed history, whose message the checker gives per line and this
    prefixes with the file, since ``insync report`` was given a directory.
    """
    verdict = run_files.read_verdict(run_dir)
    if verdict is not None:
        return verdict
    from checkers import check_file

    try:
        return check_file(run_dir)
    except HistoryError as err:
        raise HistoryError(f"{run_dir / HISTORY}: {err.message}", hint=HISTORY_HINT) from err


def _outputs(run_dir: Path, pngs: bool) -> list[Path]:
    """The files ``write_report`` will write, each checked to be writable before any work."""
    names = (REPORT_NAME, *(PNG_NAMES if pngs else ()))
    hint = "move it out of the way, then run insync report again"
    return [run_files.output_file(run_dir / n, hint) for n in names]


def _atomic_write(path: Path, data: bytes) -> None:
    """Write through a temporary file renamed over ``path``: a reader never sees half a
    report, and a symlink planted at ``path`` is replaced, never written through."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write(path: Path, data: bytes) -> None:
    try:
        _atomic_write(path, data)
    except OSError as err:
        raise EnvironmentProblem(f"cannot write {path}: {err.strerror or err}",
                                 hint="make the run directory writable, or free space") from err


def write_report(run_dir: Path, *, pngs: bool = True) -> Path:
    """Write ``report.html`` and (unless ``pngs`` is False) the PNGs; returns the report's path.

    Raises ``UsageError`` when ``run_dir`` has no history.jsonl or an output is
    in the way (a directory named ``report.html``), ``HistoryError`` when the
    history, test.json or results.json is malformed, ``EnvironmentProblem``
    when the files cannot be written.
    """
    run_dir = Path(run_dir)
    history = run_files.history_path(run_dir)
    _outputs(run_dir, pngs)
    verdict = load_verdict(run_dir)
    test = run_files.read_test(run_dir)
    table = read_table(history, report_data.keys_of_interest(verdict))
    payload = report_data.build(history, verdict, test, table)
    title = str(payload["name"])
    cov = run_coverage(run_dir, test, verdict)
    page = report_template.render(title, orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY),
                                  coverage=coverage_panel.panel_html(cov),
                                  warning=coverage_panel.warning_html(cov))
    out = run_dir / REPORT_NAME
    _write(out, page)
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
    timeline = plots.timeline_png(start=table.start, end=table.end, lane=lanes,
                                  outcome=outcome, n_lanes=n_lanes, bands=bands, t0=t0,
                                  title=f"{title}: operations by worker")
    _write(run_dir / "timeline.png", timeline)
    latency = plots.latency_png(start=table.start, latency_ms=latency_ms, outcome=outcome,
                                quantile_t=qt, quantiles=qv, qs=report_data.QUANTILES,
                                bands=bands, t0=t0, title=f"{title}: latency")
    _write(run_dir / "latency.png", latency)
    rates = plots.throughput_png(bucket_t=tt, rates=tv, bands=bands, t0=t0,
                                 title=f"{title}: throughput")
    _write(run_dir / "throughput.png", rates)
