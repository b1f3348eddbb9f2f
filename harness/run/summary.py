"""The few lines a person reads when a run ends: verdict, anomalies, where it all is."""

from __future__ import annotations

from typing import Any

from harness.run.plan import IDLE_S
from harness.run.runner import RunResult
from results.coverage import final_heal_words, poor_coverage
from results.log_signatures import describe


def coverage_lines(cov: dict[str, Any]) -> list[str]:
    """What the main phase exercised, in a few lines (``results.coverage``)."""
    lines = [
        f"coverage: {cov['acked_sends_main']} acknowledged sends in the main phase "
        f"({cov['acked_per_s']:.0f}/s), live {cov['live_seconds']} of {cov['seconds']} "
        f"seconds ({cov['live_share']:.0%})"
    ]
    for kind, fig in (cov.get("faults") or {}).items():
        lines.append(
            f"  during {kind} ({fig['count']}x, {fig['in_force_s']:.0f}s in force): "
            f"{fig['acked_sends']} acknowledged sends, live {fig['live_seconds']} of "
            f"{fig['seconds']} seconds"
        )
    waits = [r["first_ack_after_s"] for r in cov.get("recoveries") or ()]
    if waits:
        shown = ", ".join("never" if w is None else f"{w:.1f}s" for w in waits)
        lines.append(f"  from each heal to the next acknowledged send: {shown}")
    final = final_heal_words(cov.get("final_heal"))
    if final:
        lines.append(f"  {final}")
    return lines


def render(result: RunResult) -> str:
    v = result.verdict
    s = result.summary
    valid = v.get("valid")
    word = "VALID" if valid is True else "INVALID" if valid is False else "UNKNOWN"
    stop = f" by {result.signal}" if result.signal else ""
    lines = [f"verdict: {word}" + (f" (interrupted{stop})" if result.interrupted else "")]
    anomalies = v.get("anomalies") or {}
    counts = v.get("anomaly-counts") or {}  # true counts; ``anomalies`` keeps examples
    bad = set(v.get("bad-anomaly-types") or ())
    for kind in v.get("anomaly-types") or ():
        found = anomalies.get(kind)
        count = counts.get(kind, len(found) if isinstance(found, list) else 1)
        lines.append(f"  {kind}: {count}{'' if kind in bad else ' (informational)'}")
    unjudged = v.get("not-judged-counts") or {}
    for kind in v.get("not-judged") or ():
        n = unjudged.get(kind)
        lines.append(f"  {kind}: not judged: the run was cut short before its drain finished"
                     + (f" ({n} found, maybe simply unread)" if n else ""))
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
        cov = s.get("coverage")
        if cov:
            lines += coverage_lines(cov)
            poor = poor_coverage(cov) if valid is True else None
            if poor:
                lines.append(f"warning: {poor}")
        if s.get("drain_finished") is False:
            lines.append(f"drain: did not run to its end; {s.get('unread_after_drain')} "
                         "acknowledged value(s) not read again (not judged)")
        elif not s.get("drain_complete", True):
            lines.append(
                f"drain: {s.get('unread_after_drain')} acknowledged value(s) not read again"
                + ("; every key was read to its end offset: no consumer can read them"
                   if s.get("drain_read_to_end") else
                   f"; the drain read nothing new for {IDLE_S:g} s" if s.get("drain_idle")
                   else "")
            )
    logged = describe((s or {}).get("log_signatures"))
    if logged:  # informational: the verdict is the history's
        lines.append(f"broker logs: {logged}")
    build = (s or {}).get("kafka_dist")
    if build:
        lines.append(f"Kafka build: {build.get('path')} (version {build.get('version')}, commit "
                     f"{build.get('commit_id') or 'unknown'}, sha256 {build.get('sha256')})")
    lines.append(f"run directory: {result.run_dir.path}")
    if result.report is not None:
        lines.append(f"report: {result.report}")
    lines.append(f"reproduce: insync run --replay {result.run_dir.test_path}")
    return "\n".join(lines)
