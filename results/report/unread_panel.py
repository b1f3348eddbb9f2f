"""The report's panel of keys a consumer group left unread: the longest times a key was
owned by no member, or owned by a member whose polls handed over nothing while a record
of it was readable (the checker's ``stats``' ``group-unread-keys``, docs/HISTORY-GROUPS.md
"Unread keys").

A liveness measure, not an anomaly: a rebalance that never completes, or a member that
never starts fetching a partition it was given, shows here with its length and the ops
that prove it, whatever the verdict. Rendered in Python, like the stall panel; a run
whose group members record no rebalance has no panel.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from checkers import unread_intervals
from results.report.stall_panel import frame, op_link

#: Intervals shown (the longest first); the verdict's JSON has every one.
SHOWN = 8


def _evidence(part: str, i: Mapping[str, Any]) -> str:
    if part == "unowned":
        return (f"{escape(str(i.get('released')))} by {op_link(i.get('released-by'))}; "
                f"{escape(str(i.get('member-polls')))} member polls meanwhile")
    held = i.get("held-back") or {}
    return (f"process {escape(str(i.get('process')))}, assigned by "
            f"{op_link(i.get('assigned-by'))}; {escape(str(i.get('empty-polls')))} empty "
            f"polls ({op_link(i.get('first-poll'))} to {op_link(i.get('last-poll'))}) while "
            f"offset {escape(str(held.get('offset')))} ({op_link(held.get('op'))}) was readable")


def panel_html(verdict: Mapping[str, Any]) -> str:
    """The panel's HTML (escaped), or "" when the checker measured no group."""
    block = (verdict.get("stats") or {}).get("group-unread-keys")
    if not isinstance(block, Mapping):
        return ""
    found = unread_intervals(block)
    head = ("<h3>Keys a consumer group left unread</h3><p>How long a key went with no "
            "member holding it, or held by a member whose polls handed over nothing while "
            "a record of it was readable (a liveness measure: it never changes the "
            "verdict). ")
    rows = ["<tr><th>group</th><th>key</th><th>how</th><th>for</th><th>from</th>"
            "<th>to</th><th>ended</th><th>evidence</th></tr>"]
    for group, part, i in found[:SHOWN]:
        ended = ("until the end of the run" if i.get("until-end") else
                 f"{escape(str(i.get('ended')))}: {op_link(i.get('ended-by'))} at "
                 f"{escape(str(i.get('ended-s')))} s")
        rows.append(
            f"<tr><td>{escape(str(group))}</td><td>{escape(str(i.get('key')))}</td>"
            f"<td>{escape(part)}</td><td>{escape(str(i.get('seconds')))} s</td>"
            f"<td>{escape(str(i.get('start-s')))} s</td><td>{escape(str(i.get('end-s')))} s</td>"
            f"<td>{ended}</td><td>{_evidence(part, i)}</td></tr>")
    return frame(head, rows, len(found) - SHOWN, "intervals", block.get("longest-s"))
