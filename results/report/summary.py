"""The few lines printed at the end of ``insync check`` (and of ``insync run``).

A person who just ran a test wants three things without scrolling: how many
of each anomaly, the worst ones in a sentence, and where the report is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.base.contract import by_severity
from harness.base.rundir import RunDir
from results.report.anomaly_view import explain

WORST_SHOWN = 3
MAX_LINE = 220


def _rank(kind: str) -> int:
    """Place from most to least alarming (the registry's ``severity``); unknown types last."""
    severity = by_severity()
    return severity.index(kind) if kind in severity else len(severity)


def render_summary(verdict: Mapping[str, Any], run_dir: Path | None) -> str:
    """Anomaly counts, the worst examples, and the report's path (or how to make one)."""
    valid = verdict.get("valid")
    found = list(verdict.get("anomaly-types") or [])
    bad = set(verdict.get("bad-anomaly-types") or [])
    counts = verdict.get("anomaly-counts") or {}
    anomalies = verdict.get("anomalies") or {}
    head = "VALID" if valid is True else "INVALID" if valid is False else "UNKNOWN"
    lines = [f"== insync summary: {head} =="]
    if found:
        width = max(len(k) for k in found)
        lines.append(f"  {'anomaly':<{width}}  {'count':>7}  effect")
        for kind in sorted(found, key=_rank):
            count = counts.get(kind, len(anomalies.get(kind) or []))
            effect = "invalid" if kind in bad else "informational"
            lines.append(f"  {kind:<{width}}  {count:>7}  {effect}")
        worst = [k for k in sorted(found, key=_rank) if k in bad and anomalies.get(k)]
        if worst:
            lines.append("  worst:")
        for kind in worst[:WORST_SHOWN]:
            text = f"{kind}: {explain(kind, anomalies[kind][0], verdict.get('ops') or {})}"
            lines.append("   - " + (text if len(text) <= MAX_LINE else text[:MAX_LINE - 3] + "..."))
    else:
        lines.append("  no anomalies")
    for kind in verdict.get("not-judged") or ():
        n = (verdict.get("not-judged-counts") or {}).get(kind)
        lines.append(f"  {kind}: not judged: the run was cut short"
                     + (f" ({n} found, maybe simply unread)" if n else ""))
    if valid not in (True, False) and verdict.get("error"):
        lines.append(f"  undecided: {verdict['error']}")
    if run_dir is not None:
        report = RunDir(run_dir).report_path
        if report.is_file():
            lines.append(f"  report: {report}")
        else:
            lines.append(f"  report: none yet (insync report {run_dir})")
    return "\n".join(lines)
