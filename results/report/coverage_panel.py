"""The report's coverage panel: what the run exercised, as a small HTML table beside throughput.

Rendered here, in Python, rather than by the page's script: the figures are a
few numbers that need no zooming, and a page opened with scripts blocked (or
a test reading the HTML) still shows whether the run tested anything. The
warning line goes at the top of the summary for a VALID run whose coverage is
poor, the way ``insync run``'s summary prints it: the badge says VALID, and
the line beside it says how little that proves.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from results.coverage import final_heal_words, outside_faults
from results.run_coverage import WHOLE_HISTORY, RunCoverage


def _num(value: Any, fmt: str = "d", unit: str = "") -> str:
    """A figure for people; ``d`` (a count) shows a hand-edited float as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-" if value is None else str(value)
    if fmt == "d" and isinstance(value, float):
        fmt = "g"
    return f"{value:{fmt}}{unit}"


def _live(fig: Mapping[str, Any]) -> str:
    live, seconds = fig.get("live_seconds", 0), fig.get("seconds", 0)
    share = f" ({live / seconds:.0%})" if isinstance(seconds, int) and seconds > 0 else ""
    return f"{_num(live)} of {_num(seconds)}{share}"


def _row(cells: list[str], head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{escape(c)}</{tag}>" for c in cells) + "</tr>"


def _window(rc: RunCoverage) -> str:
    length = _num(rc.figures.get("main_s"), ".1f", " s")
    if rc.window == WHOLE_HISTORY:
        return (f"Window: the whole history, first to last client op ({length}): this run's "
                "results.json has no coverage block, so the main phase's bounds are unknown "
                "and the figures were computed from history.jsonl.")
    return f"Window: the main phase ({length}), as recorded by insync run."


def _recoveries(recoveries: list[Any]) -> str:
    if not recoveries:
        return "No heal in this run."
    parts = []
    for r in recoveries:
        wait = r.get("first_ack_after_s")
        after = "never" if wait is None else _num(wait, ".1f", " s")
        parts.append(f"{r.get('f')} (at {_num(r.get('healed_at_s'), '.1f', ' s')}): {after}")
    return "From each heal to the next acknowledged send: " + "; ".join(parts) + "."


def panel_html(rc: RunCoverage) -> str:
    """The coverage panel: window, poor-coverage line, figures table, recovery times."""
    cov = rc.figures
    label = "whole history" if rc.window == WHOLE_HISTORY else "main phase"
    rows = [
        _row(["", "duration", "acknowledged sends", "live seconds"], head=True),
        _row([label, _num(cov.get("main_s"), ".1f", " s"),
              f"{_num(cov.get('acked_sends_main'))} "
              f"({_num(cov.get('acked_per_s'), '.1f')}/s)", _live(cov)]),
    ]
    for kind, fig in (cov.get("faults") or {}).items():
        rows.append(_row([f"{kind} ({_num(fig.get('count'))}x)",
                          _num(fig.get("in_force_s"), ".1f", " s"),
                          _num(fig.get("acked_sends")), _live(fig)]))
    inside = cov.get("in_faults") or {}
    if cov.get("faults"):
        rows.append(_row(["any fault", _num(inside.get("in_force_s"), ".1f", " s"),
                          _num(inside.get("acked_sends")), _live(inside)]))
    rows.append(_row(["no fault in force", "", "", _live(outside_faults(cov))]))
    poor = rc.poor
    return "\n".join([
        '<div id="coverage">',
        '<div class="plot-title">Coverage: what this run exercised (a live second saw at '
        "least one acknowledged send)</div>",
        f'<p class="note" id="coverage-window">{escape(_window(rc))}</p>',
        f'<p class="warn" id="coverage-poor">{escape(poor)}</p>' if poor else "",
        '<table id="coverage-table">', *rows, "</table>",
        f'<p class="note" id="coverage-recovery">'
        f"{escape(_recoveries(list(cov.get('recoveries') or [])))}</p>",
        f'<p class="note" id="coverage-final-heal">{escape(final[:1].upper() + final[1:])}.</p>'
        if (final := final_heal_words(cov.get("final_heal"))) else "",
        "</div>",
    ])


def warning_html(rc: RunCoverage) -> str:
    """One line for the top of a VALID run's summary when its coverage is poor; else ""."""
    line = rc.warning
    if line is None:
        return ""
    return (f'<p class="warn" id="coverage-warning">VALID, but {escape(line)} '
            '(<a href="#coverage">coverage</a>)</p>')
