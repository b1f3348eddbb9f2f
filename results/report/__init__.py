"""One run's report: the HTML page, its PNGs, the terminal summary and JUnit XML.

Modules, by what they do:

- ``write``: ``write_report`` (report.html and the PNGs of a run directory)
- ``data``: everything the page embeds, built once per report
- ``history_table``: the history as numpy columns; ``op_lookup``: ops by index
- ``plot_data`` (fault bands, lanes, rates) and ``plots`` (the PNGs, matplotlib)
- ``anomaly_view``: per-anomaly sentences, ops and offset grids; ``fault_labels``: the
  short label of each fault band
- ``coverage_panel``, ``scenario_panel``: the page's panels
- ``template`` and ``templates/``: the page itself
- ``summary``: the lines ``insync check``/``run`` print; ``junit``: the verdict for CI
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from results.lazy import lazy

if TYPE_CHECKING:
    from results.report.junit import junit_xml, write_junit
    from results.report.summary import render_summary
    from results.report.write import load_verdict, write_report

__all__ = ["junit_xml", "load_verdict", "render_summary", "write_junit", "write_report"]

__getattr__ = lazy(__name__, {
    "junit_xml": "junit", "write_junit": "junit", "render_summary": "summary",
    "load_verdict": "write", "write_report": "write",
})
