"""The comparison's columns, and the comparison shown to people: terminal table and page.

Which columns there are follows the registries: one per group of anomaly types
that can make a run invalid (``harness.base.contract.analysis_groups``), so a new
anomaly type is counted without an edit here. The terminal shows the
configuration and a few figures in ``TERMINAL_WIDTH`` characters; the CSV and the
HTML page hold every column.
"""

from __future__ import annotations

import html
import io
from typing import Any

from harness.base.contract import analysis_groups

#: configuration columns a comparison groups by, in display order
CONFIG_COLUMNS = (
    "kafka_version",
    "acks",
    "min_insync",
    "unclean_leader_election",
    "faults",
    "txn",
)
#: the runs table's anomaly columns (one per registry group, ``analysis_groups``), under
#: the comparison's shorter names where it has one
SHORT = {"lost_writes": "lost", "ordering_violations": "ordering"}
ANOMALY_COLUMNS = tuple(SHORT.get(c, c) for c in analysis_groups())
METRIC_COLUMNS = (
    "runs",
    "cut_short",
    "poor_coverage",
    "acked",
    "lost",
    "lost_rate",
    "duplicates",
    "duplicate_rate",
    "ordering",
    "ordering_rate",
    *(c for c in ANOMALY_COLUMNS if c not in ("lost", "duplicates", "ordering")),
    "acked_per_s",
    "live_share",
    "avail_fault",
    "avail_normal",
    "fault_sends",
    "read_stall_max_s",
    "unread_max_s",
    "latency_p50_ms",
    "latency_p99_ms",
    "latency_max_ms",
    "recovery_p50_ms",
    "recovery_max_ms",
)
#: what the terminal shows beside the configuration (the CSV and the HTML have every
#: column): ``anomalies`` is one cell naming each anomaly column that is not zero
TERMINAL_METRICS = ("runs", "anomalies", "acked", "live_share", "avail_fault", "poor_coverage")
TERMINAL_WIDTH = 100


def fmt(value: Any, column: str) -> str:
    """A cell for people: rates as percentages, times with one decimal."""
    if value is None:
        return "-"
    if column.endswith("_rate"):
        return f"{100 * float(value):.3f}%"
    if column.startswith("avail") or column == "live_share":
        return f"{100 * float(value):.1f}%"
    if column.endswith(("_ms", "_per_s", "_max_s")):
        return f"{float(value):.1f}"
    if column == "poor_coverage":  # the flag: VALID runs whose verdict proves little
        return f"POOR: {value}" if value else ""
    return str(value)


def _coverage_note(cell: dict[str, Any]) -> str:
    """The heatmap cell's second line: how much the configuration's runs exercised."""
    note = (f"{fmt(cell.get('acked_per_s'), 'acked_per_s')} acked/s, live "
            f"{fmt(cell.get('live_share'), 'live_share')}, in faults "
            f"{fmt(cell.get('avail_fault'), 'avail_fault')} "
            f"({fmt(cell.get('fault_sends'), 'fault_sends')} sends)")
    poor = cell.get("poor_coverage")
    return note + (f"; coverage poor in {poor} VALID run(s)" if poor else "")


def anomalies_cell(row: dict[str, Any]) -> str:
    """Every anomaly column of a comparison row that is not zero: ``lost 3, isolation 1``."""
    found = [f"{c.replace('_', ' ')} {row[c]}" for c in ANOMALY_COLUMNS if row.get(c)]
    return ", ".join(found) or "none"


#: short headers for the terminal (the CSV and the page use the column names)
TERMINAL_HEADERS = {"kafka_version": "kafka", "min_insync": "isr", "unclean_leader_election":
                    "unclean", "live_share": "live", "avail_fault": "in faults",
                    "poor_coverage": "poor coverage"}
#: the columns that wrap (between words) to fit: the rest keep their width
FLEXIBLE = ("faults", "anomalies")


def render_terminal(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """The comparison for a terminal of ``TERMINAL_WIDTH`` characters, as a rich table.

    The configuration columns of ``columns``, then ``TERMINAL_METRICS``; the CSV and
    the HTML page hold every column. Figures keep their width; ``faults`` (between its
    kinds) and ``anomalies`` wrap between words; nothing is cut.
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table

    shown = [*(c for c in columns if c in CONFIG_COLUMNS), *TERMINAL_METRICS]
    cells = []
    for r in rows:
        row = [anomalies_cell(r) if c == "anomalies" else fmt(r.get(c), c) for c in shown]
        if "faults" in shown:
            row[shown.index("faults")] = row[shown.index("faults")].replace("+", " + ")
        cells.append(row)
    table = Table(title="insync: per-configuration comparison", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, collapse_padding=True, padding=(0, 1))
    for i, c in enumerate(shown):
        header = TERMINAL_HEADERS.get(c, c.replace("_", " "))
        words = [*header.split(), *(w for row in cells for w in row[i].split())]
        longest = max(len(w) for w in words)
        if c in FLEXIBLE:
            table.add_column(header, min_width=longest, ratio=1, overflow="fold")
        else:
            width = max([longest, *(len(row[i]) for row in cells)])
            table.add_column(header, width=width,
                             justify="left" if c in CONFIG_COLUMNS else "right")
    for row in cells:
        table.add_row(*row)
    buf = io.StringIO()
    Console(file=buf, width=TERMINAL_WIDTH, color_system=None).print(table)
    return buf.getvalue()


def _heat(rate: float | None, top: float) -> str:
    """White (no loss) to deep red (the worst rate in the table)."""
    if rate is None:
        return "#eeeeee"
    share = 0.0 if top <= 0 else min(1.0, float(rate) / top)
    g = int(255 - 200 * share)
    return f"rgb(255,{g},{g})"


def render_html(
    rows: list[dict[str, Any]], columns: list[str], trend_rows: list[dict[str, Any]]
) -> str:
    """A self-contained page: a loss-rate heatmap, the full table, the trend (no network)."""
    col_key = "faults"
    row_keys = [c for c in CONFIG_COLUMNS if c != col_key and c in columns]
    faults = sorted({str(r.get(col_key)) for r in rows})
    cells: dict[tuple[str, ...], dict[str, Any]] = {}
    for r in rows:
        cells.setdefault(tuple(str(r.get(k)) for k in row_keys), {})[str(r.get(col_key))] = r
    top = max((float(r["lost_rate"] or 0) for r in rows), default=0.0)
    esc = html.escape
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>insync analysis</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px;text-align:right}"
        "th{background:#f4f4f4}td.k{text-align:left}td.poor{outline:3px solid #e0a000}"
        "</style></head><body>",
        "<h1>insync: loss rate by configuration</h1>",
        "<p>Lost writes per acknowledged write; darker is worse. Rows: "
        + esc(", ".join(row_keys))
        + "; columns: nemesis faults. Under each rate: acknowledged sends per second of the "
        "main phase, its live share (seconds with an acknowledged send), the live share of "
        "the seconds with a fault in force and the sends acknowledged in them. An outlined "
        "cell has VALID runs whose coverage was poor: their verdict proves little.</p>",
        "<table><tr>" + "".join(f"<th>{esc(k)}</th>" for k in row_keys),
    ]
    out.append("".join(f"<th>{esc(f)}</th>" for f in faults) + "</tr>")
    for key in sorted(cells):
        out.append("<tr>" + "".join(f"<td class='k'>{esc(v)}</td>" for v in key))
        for f in faults:
            cell = cells[key].get(f)
            rate = None if cell is None else cell.get("lost_rate")
            text = (
                "" if cell is None else f"{fmt(rate, 'lost_rate')} ({cell['lost']}/{cell['acked']})"
            )
            note = "" if cell is None else _coverage_note(cell)
            flag = " class='poor'" if cell is not None and cell.get("poor_coverage") else ""
            out.append(f"<td style='background:{_heat(rate, top)}'{flag}>{esc(text)}"
                       + (f"<br><small>{esc(note)}</small>" if note else "") + "</td>")
        out.append("</tr>")
    out.append("</table><h2>All metrics</h2><table><tr>")
    out.append("".join(f"<th>{esc(c)}</th>" for c in columns) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{esc(fmt(r.get(c), c))}</td>" for c in columns) + "</tr>")
    out.append("</table>")
    if trend_rows:
        out.append("<h2>Trend per Kafka version and night</h2><table><tr>")
        names = list(trend_rows[0])
        out.append("".join(f"<th>{esc(c)}</th>" for c in names) + "</tr>")
        for r in trend_rows:
            out.append(
                "<tr>" + "".join(f"<td>{esc(fmt(r.get(c), c))}</td>" for c in names) + "</tr>"
            )
        out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)
