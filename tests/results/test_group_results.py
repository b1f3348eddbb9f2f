"""The group anomaly types (docs/HISTORY-GROUPS.md) reach the report, the summary and analyze."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from test_report_file import payload

from checkers import check_file
from results.analysis.ingest import run_row
from results.report import write_report
from results.report.summary import render_summary


def _append_lost_commit(run: Path) -> None:
    """A member commits offset 1 of a key it read; a later committed read returns null."""
    history = run / "history.jsonl"
    lines = history.read_bytes().splitlines()
    last = orjson.loads(lines[-1])
    index, time = last["index"] + 1, last["time"] + 1

    def add(process: int, type_: str, f: str, value: Any, **extra: Any) -> None:
        nonlocal index, time
        lines.append(orjson.dumps({"index": index, "time": time, "process": process,
                                   "type": type_, "f": f, "value": value, **extra}))
        index += 1
        time += 1000

    add(500, "invoke", "send", [["send", "gk", 7]])
    add(500, "ok", "send", [["send", "gk", [0, 7]]])
    add(501, "invoke", "subscribe", ["gk"], group="g1")
    add(501, "ok", "subscribe", ["gk"], group="g1")
    add(501, "invoke", "poll", [["poll"], ["commit"]])
    add(501, "ok", "poll", [["assigned", ["gk"]], ["poll", {"gk": [[0, 7]]}],
                            ["commit", {"gk": 1}]])
    add(502, "invoke", "committed", [["committed", ["gk"]]], group="g1")
    add(502, "ok", "committed", [["committed", {"gk": None}]], group="g1")
    history.write_bytes(b"\n".join(lines) + b"\n")


def test_a_lost_commit_gets_a_report_panel_a_summary_line_and_a_runs_column(
    valid_run: Path,
) -> None:
    _append_lost_commit(valid_run)
    verdict = check_file(valid_run)
    assert verdict["valid"] is False and verdict["anomaly-types"] == ["lost-commit"]
    summary = render_summary(verdict, None)
    assert "lost-commit" in summary and "group g1 had committed offset 1 of gk" in summary
    (valid_run / "results.json").write_bytes(orjson.dumps(verdict))
    panels = payload(write_report(valid_run, pngs=False))["anomalies"]
    (panel,) = [p for p in panels if p["type"] == "lost-commit"]
    (example,) = panel["examples"]
    assert example["key"] == "gk" and "read its committed offset as None" in example["text"]
    row = run_row("r1", valid_run, {}, verdict)
    assert (row["lost_commits"], row["commit_skips"], row["garbage_commits"]) == (1, 0, 0)
