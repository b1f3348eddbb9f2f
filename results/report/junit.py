"""JUnit XML for CI systems: each anomaly type is a test case, failed when it makes the run invalid.

CI servers (Jenkins, GitLab, GitHub test reporters) understand JUnit XML and
nothing else, so a checked run is shown as a suite: one case per anomaly type
the checker knows (passed when absent or merely informational, failed with its
count and first explanations when it makes the run invalid), plus a
``verdict`` case that is an *error* when the checker could not decide.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.base.contract import anomaly_names
from results.report.anomaly_view import explain

EXAMPLES_IN_FAILURE = 5


def junit_xml(verdict: Mapping[str, Any], name: str) -> str:
    """The verdict as a JUnit XML document (one suite named ``name``)."""
    found = list(verdict.get("anomaly-types") or [])
    bad = set(verdict.get("bad-anomaly-types") or [])
    counts = verdict.get("anomaly-counts") or {}
    examples = verdict.get("anomalies") or {}
    ops = verdict.get("ops") or {}
    known = anomaly_names()
    kinds = list(known) + [k for k in found if k not in known]
    stats = verdict.get("stats") or {}
    run = verdict.get("run") or {}
    suite = ET.Element("testsuite", name=name, hostname="localhost")
    failures = errors = 0
    verdict_case = ET.SubElement(suite, "testcase", classname=f"insync.{name}", name="verdict")
    if verdict.get("valid") not in (True, False):
        errors += 1
        reason = str(verdict.get("error") or "the checker could not decide")
        err = ET.SubElement(verdict_case, "error", message=f"unknown: {reason}", type="unknown")
        err.text = reason
    for kind in kinds:
        case = ET.SubElement(suite, "testcase", classname=f"insync.{name}", name=kind)
        if kind not in found:
            continue
        count = int(counts.get(kind, len(examples.get(kind) or [])))
        lines = [explain(kind, a, ops) for a in (examples.get(kind) or [])[:EXAMPLES_IN_FAILURE]]
        if count > len(lines):
            lines.append(f"... {count - len(lines)} more")
        if kind in bad:
            failures += 1
            fail = ET.SubElement(case, "failure", type=kind,
                                 message=f"{count} {kind} anomal{'y' if count == 1 else 'ies'}")
            fail.text = "\n".join(lines)
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{count} found (informational: does not make the run invalid)\n" + \
                "\n".join(lines)
    suite.set("tests", str(len(kinds) + 1))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", "0")
    suite.set("time", str(run.get("duration_s", 0)))
    props = ET.Element("properties")
    for key in ("ops", "ok", "fail", "info", "nemesis-ops", "keys"):
        if key in stats:
            ET.SubElement(props, "property", name=f"stats.{key}", value=str(stats[key]))
    suite.insert(0, props)
    root = ET.Element("testsuites", name="insync", tests=suite.get("tests", "0"),
                      failures=str(failures), errors=str(errors))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(verdict: Mapping[str, Any], path: str | Path, name: str) -> Path:
    """Write ``junit_xml(verdict, name)`` to ``path`` (parents created); returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(junit_xml(verdict, name), encoding="utf-8")
    return out
