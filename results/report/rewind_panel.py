"""The report's panel of reads after aborted transactions: where each process's consumer
read next after a transaction that consumed records was aborted (the checker's
``stats``' ``abort-rewinds``, docs/HISTORY.md "After an abort").

A measure, not an anomaly: Kafka leaves the consumer's position to the application
(KAFKA-17582), so every class is shown whatever the verdict, with the first example
of each and links to its ops. Rendered in Python, like the stall panel; a run without
an aborted transaction has no panel.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from checkers import REWIND_CLASSES
from results.report.stall_panel import op_link

PARTS = {"kept": "the client kept the aborted reads (the consumer's own position)",
         "sought": "the client sought back over the aborted reads"}


def panel_html(verdict: Mapping[str, Any]) -> str:
    """The panel's HTML (escaped), or "" when the checker classified no abort."""
    block = (verdict.get("stats") or {}).get("abort-rewinds")
    if not isinstance(block, Mapping):
        return ""
    head = ("<h3>Reads after aborted transactions</h3><p>Where a process's consumer read "
            "next, per key, after a transaction that read it was aborted (informational: "
            "it never changes the verdict).</p>")
    examples = {(e.get("kept"), e.get("class")): e for e in block.get("examples") or ()
                if isinstance(e, Mapping)}
    rows = ["<tr><th>aborts</th><th>class</th><th>reads</th><th>first example</th></tr>"]
    for part, words in PARTS.items():
        counts = block.get(part)
        if not isinstance(counts, Mapping):
            continue
        for cls in REWIND_CLASSES:
            if not counts.get(cls):
                continue
            e = examples.get((part == "kept", cls)) or {}
            where = (f"{escape(str(e.get('key')))}: read {escape(str(e.get('first-read')))}"
                     f"..{escape(str(e.get('last-read')))} in {op_link(e.get('abort'))}, next "
                     f"{escape(str(e.get('next-read')))} in {op_link(e.get('poll'))}"
                     if e.get("poll") is not None else escape(str(e.get("why", ""))))
            rows.append(f"<tr><td>{escape(words)} ({escape(str(counts.get('aborts')))})</td>"
                        f"<td>{escape(cls)}</td><td>{escape(str(counts[cls]))}</td>"
                        f"<td>{where}</td></tr>")
    if len(rows) == 1:
        return ""
    return f'<div class="stalls">{head}<table>{"".join(rows)}</table></div>'
