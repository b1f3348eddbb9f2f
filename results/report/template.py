"""The report page: ``results/report/templates/report.{html,css,js}`` filled with one run's data.

Hand-written canvas code rather than a vendored plotting library: the page must
open from disk with no network, stay small, draw 200k ops fast, and share one
zoomable time axis between the timeline and every plot; ~500 lines of canvas
JavaScript do that with no third-party licence to track. The assets ship as
package data (``results/report/templates`` is un-ignored: ``/results/*/`` is run storage).
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def asset(name: str) -> str:
    """One template file's text (read once per process)."""
    return (TEMPLATES / name).read_text(encoding="utf-8")


def render(title: str, payload_json: bytes, *, coverage: str = "", warning: str = "",
           scenario: str = "", stalls: str = "") -> bytes:
    """The whole report page; ``payload_json`` is the JSON of ``report_data.build``,
    ``coverage`` and ``warning`` the HTML of ``results.report.coverage_panel``, ``scenario``
    that of ``results.report.scenario_panel``, ``stalls`` that of
    ``results.report.stall_panel`` (all already escaped).

    Every ``<`` in the data (it can only sit inside JSON strings) becomes ``\\u003c``,
    so no value can close the script element or open an HTML comment in it.
    """
    safe = payload_json.replace(b"<", b"\\u003c")
    page = (asset("report.html").replace("__SCENARIO_PANEL__", scenario)
            .replace("__COVERAGE_WARNING__", warning)
            .replace("__COVERAGE_PANEL__", coverage)
            .replace("__STALL_PANEL__", stalls)
            .replace("__TITLE__", html.escape(title))
            .replace("__CSS__", asset("report.css")).replace("__JS__", asset("report.js")))
    head, tail = page.split("__DATA__")
    return head.encode() + safe + tail.encode()
