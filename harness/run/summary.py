"""The few lines a person reads when a run ends: verdict, anomalies, where it all is."""

from __future__ import annotations

from harness.run.runner import RunResult


def render(result: RunResult) -> str:
    v = result.verdict
    s = result.summary
    valid = v.get("valid")
    word = "VALID" if valid is True else "INVALID" if valid is False else "UNKNOWN"
    lines = [f"verdict: {word}" + (" (interrupted)" if result.interrupted else "")]
    anomalies = v.get("anomalies") or {}
    counts = v.get("anomaly-counts") or {}  # true counts; ``anomalies`` keeps examples
    bad = set(v.get("bad-anomaly-types") or ())
    for kind in v.get("anomaly-types") or ():
        found = anomalies.get(kind)
        count = counts.get(kind, len(found) if isinstance(found, list) else 1)
        lines.append(f"  {kind}: {count}{'' if kind in bad else ' (informational)'}")
    if v.get("error"):
        lines.append(f"  error: {v['error']}")
    if s:
        lines.append(
            f"ops: {s.get('ops', 0)} (ok {s.get('ok', 0)}, fail {s.get('fail', 0)}, "
            f"info {s.get('info', 0)}), acknowledged sends {s.get('acked_sends', 0)}, "
            f"faults {s.get('faults', 0)}, {s.get('duration_s', 0):.1f}s"
        )
        if s.get("acked_sends", 0) == 0 and valid is True:
            lines.append(
                "warning: no send was acknowledged, so this run proved little about durability "
                "(run longer, space faults out with --nemesis-interval, or look at the node logs)"
            )
        if not s.get("drain_complete", True):
            lines.append(
                f"drain: {s.get('unread_after_drain')} acknowledged value(s) not read again"
            )
    path = result.run_dir.path
    lines.append(f"run directory: {path}")
    lines.append(f"reproduce: insync run --replay {path / 'test.json'}")
    return "\n".join(lines)
