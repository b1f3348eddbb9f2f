"""The report's scenario panel: which reported bug a run reproduces, and what proves it.

A run of ``insync scenario run`` or ``insync catalogue`` carries a ``scenario``
block in its test.json (``harness.scenario.runs.scenario_block``); this panel
shows it at the top of the summary: the bug, its story, links to its sources,
the outcome the scenario expects on this version beside what the checker
found, and for each anomaly type the first examples the verdict keeps (their
op indices are the proving ops the history table highlights). Rendered in
Python, like the coverage panel, so it shows with scripts blocked. A run that
is no scenario's gets no panel.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from typing import Any

#: Examples shown per anomaly type (the verdict keeps more; the history table has all).
EXAMPLES = 3


def _link(url: str) -> str:
    safe = escape(url, quote=True)
    ok = url.startswith(("https://", "http://"))
    return f'<a href="{safe}">{safe}</a>' if ok else safe


def panel_html(test: Mapping[str, Any], verdict: Mapping[str, Any]) -> str:
    """The panel's HTML (escaped), or "" when the run is no scenario's."""
    block = test.get("scenario")
    if not isinstance(block, Mapping):
        return ""
    name = str(block.get("name", "?")) + (f" / {block['variant']}" if block.get("variant") else "")
    expected = block.get("expected") or {}
    counts = verdict.get("anomaly-counts") or {}
    anomalies = verdict.get("anomalies") or {}
    found = sorted({t for t, n in counts.items() if n} | set(anomalies))
    valid = verdict.get("valid")
    word = ("valid" if valid else "invalid") if isinstance(valid, bool) else "unknown"
    observed = word + (": " + ", ".join(f"{t} ({counts.get(t, '?')})" for t in found)
                       if found else "")
    rows = [
        f"<p><b>Scenario {escape(name)}</b> on Kafka {escape(str(block.get('version', '?')))}: "
        f"{escape(str(block.get('bug', '')))}</p>",
        f"<p>{escape(str(block.get('story', '')))}</p>",
        "<ul>" + "".join(f"<li>{_link(str(u))}</li>" for u in block.get("sources") or ()) + "</ul>",
        f"<p>expected: <b>{escape(str(expected.get('text', '?')))}</b>; "
        f"observed: <b>{escape(observed)}</b></p>",
    ]
    for t in found:
        examples = anomalies.get(t) or []
        if isinstance(examples, list) and examples:
            shown = "".join(f"<li><code>{escape(json.dumps(e)[:400])}</code></li>"
                            for e in examples[:EXAMPLES])
            rows.append(f'<p class="proving">proving ops of {escape(t)}:</p><ul>{shown}</ul>')
    return f'<div id="scenario-panel">{"".join(rows)}</div>'
