"""The report's read_committed stall panel: how long readers of a partition waited
behind committed writes (the checker's ``stats``' ``read-committed-stalls``,
docs/HISTORY.md "Read stalls").

A liveness measure, not an anomaly: a stuck last stable offset (a hanging
transaction) shows here with its length, the write it held back and the ops
that prove it, whatever the verdict. Rendered in Python, like the coverage
panel, so it shows with scripts blocked; the op numbers are links the history
table answers. A run that is not transactional has no panel.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

#: Keys shown (the longest first); the verdict's JSON has every stalled key.
SHOWN = 5


def op_link(index: Any) -> str:
    """An op number as a link the history table answers ("-" when there is none)."""
    if type(index) is not int:
        return "-"
    return f'<a class="op" data-op="{index}">op {index}</a>'


def frame(head: str, rows: list[str], more: int, what: str, longest: Any) -> str:
    """A liveness panel around its table: ``head`` (an open paragraph), then "None." when
    ``rows`` holds the header row only, else the longest and the rows, and how many
    ``more`` of ``what`` the verdict's JSON holds beyond those shown."""
    if len(rows) == 1:
        return f'<div class="stalls">{head}None.</p></div>'
    tail = f"<p>{more} more {what}: see results.json.</p>" if more > 0 else ""
    return (f'<div class="stalls">{head}Longest: {escape(str(longest))} s.</p>'
            f'<table>{"".join(rows)}</table>{tail}</div>')


def panel_html(verdict: Mapping[str, Any]) -> str:
    """The panel's HTML (escaped), or "" when the checker measured no stall block."""
    block = (verdict.get("stats") or {}).get("read-committed-stalls")
    if not isinstance(block, Mapping):
        return ""
    stalls = [s for s in block.get("stalls") or () if isinstance(s, Mapping)]
    head = ("<h3>Read_committed stalls</h3><p>How long readers that had read all they could "
            "waited while committed writes lay beyond them (a liveness measure: it never "
            "changes the verdict). ")
    rows = ["<tr><th>key</th><th>longest stall</th><th>from</th><th>to</th><th>ended</th>"
            "<th>held back</th><th>stalled polls</th><th>stalls</th></tr>"]
    for s in stalls[:SHOWN]:
        held = s.get("held-back") or {}
        ended = ("until the end of the run" if s.get("until-end")
                 else f"{op_link(s.get('ended-by'))} at {escape(str(s.get('ended-s')))} s")
        rows.append(
            f"<tr><td>{escape(str(s.get('key')))}</td><td>{escape(str(s.get('seconds')))} s</td>"
            f"<td>{escape(str(s.get('start-s')))} s</td><td>{escape(str(s.get('end-s')))} s</td>"
            f"<td>{ended}</td><td>offset {escape(str(held.get('offset')))} "
            f"({op_link(held.get('op'))})</td><td>{escape(str(s.get('polls')))}: "
            f"{op_link(s.get('first-poll'))} to {op_link(s.get('last-poll'))}</td>"
            f"<td>{escape(str(s.get('stalls')))}</td></tr>")
    return frame(head, rows, len(stalls) - SHOWN, "stalled keys", block.get("longest-s"))
