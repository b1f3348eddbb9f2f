"""``write_report(run_dir)``: a run directory's report.html and PNG plots.

The runner calls it after checking; ``insync report RUN_DIR`` calls it to
regenerate. It needs only the history: the verdict comes from the run's
results.json when there is one, otherwise the checker computes it, and
test.json (configuration, re-run command, fault spans) is optional, and so is
the coverage block of results.json (``results.run_coverage`` computes it from
the history when it is missing). The files are read through
``harness.base.rundir.RunDir``; the plot numbers are computed once
(``report_data.series``) for the page and the PNGs alike.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from harness.base.errors import EnvironmentProblem, HistoryError
from harness.base.paths import output_file
from harness.base.rundir import REPORT, RunDir
from results.report import (
    coverage_panel,
    rewind_panel,
    scenario_panel,
    stall_panel,
    unread_panel,
)
from results.report import data as report_data
from results.report import template as report_template
from results.report.history_table import HISTORY_HINT, read_table
from results.report.plot_data import Series
from results.run_coverage import run_coverage

PNG_NAMES = ("timeline.png", "latency.png", "throughput.png")


def load_verdict(run: RunDir) -> dict[str, Any]:
    """results.json's verdict, or the checker's when the run has none (a bare history).

    A malformed results.json is a ``HistoryError`` naming it (``RunDir.verdict``);
    so is a malformed history, whose message the checker gives per line and this
    prefixes with the file, since ``insync report`` was given a directory.
    """
    verdict = run.verdict()
    if verdict is not None:
        return verdict
    from checkers import check_file

    try:
        return check_file(run.history_path)
    except HistoryError as err:
        raise HistoryError(f"{run.history_path}: {err.message}", hint=HISTORY_HINT) from err


def _outputs(run: RunDir, pngs: bool) -> list[Path]:
    """The files ``write_report`` will write, each checked to be writable before any work."""
    names = (REPORT, *(PNG_NAMES if pngs else ()))
    hint = "move it out of the way, then run insync report again"
    return [output_file(run.path / n, hint) for n in names]


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
    """Write the report page and (unless ``pngs`` is False) the PNGs; returns the page's path.

    ``run_dir`` is a run directory or its history (``RunDir.open``). Raises
    ``UsageError`` when it is not one or an output is in the way (a directory
    where the page goes), ``HistoryError`` when the history, test.json or
    results.json is malformed, ``EnvironmentProblem`` when the files cannot be
    written.
    """
    run = RunDir.open(run_dir)
    _outputs(run, pngs)
    verdict = load_verdict(run)
    test = run.test()
    table = read_table(run.history_path, report_data.keys_of_interest(verdict))
    plot = report_data.series(table, test)
    payload = report_data.build(run, verdict, test, table, plot)
    title = str(payload["name"])
    cov = run_coverage(run.path, test, verdict)
    page = report_template.render(title, orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY),
                                  coverage=coverage_panel.panel_html(cov),
                                  warning=coverage_panel.warning_html(cov),
                                  scenario=scenario_panel.panel_html(test or {}, verdict),
                                  stalls=stall_panel.panel_html(verdict)
                                  + unread_panel.panel_html(verdict)
                                  + rewind_panel.panel_html(verdict))
    out = run.report_path
    _write(out, page)
    if pngs:
        write_pngs(run, plot, title)
    return out


def write_pngs(run: RunDir, plot: Series, title: str) -> None:
    """timeline.png, latency.png and throughput.png, drawn from the page's own series."""
    from results.report import plots  # matplotlib takes seconds to import: only when drawing PNGs

    timeline, latency, rates = PNG_NAMES
    _write(run.path / timeline, plots.timeline_png(plot, f"{title}: operations by worker"))
    _write(run.path / latency, plots.latency_png(plot, f"{title}: latency"))
    _write(run.path / rates, plots.throughput_png(plot, f"{title}: throughput"))
