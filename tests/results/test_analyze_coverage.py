"""Coverage in ``insync analyze`` without Spark: the ``runs`` row's coverage columns, and the
flag and figures in the terminal table and the HTML heatmap.

The Spark aggregation of these columns is checked end to end, against plain
Python, in test_spark_pipeline.py (integration).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from stalled_run import write_stalled_run

from harness.base.history import read_history
from results.analysis.ingest import COVERAGE_COLUMNS, RUN_SCHEMA, run_row
from results.analysis.tables import (
    CONFIG_COLUMNS,
    METRIC_COLUMNS,
    TERMINAL_WIDTH,
    anomalies_cell,
    fmt,
    render_html,
    render_terminal,
)
from results.coverage import coverage
from results.run_coverage import run_coverage, spans_of


@pytest.fixture(scope="module")
def stalled_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_stalled_run(tmp_path_factory.mktemp("runs") / "stalled" / "20261121T031501Z")


@pytest.fixture
def stalled(stalled_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(stalled_template, tmp_path / "stalled"))


def row_of(run: Path) -> dict[str, Any]:
    test = json.loads((run / "test.json").read_text())
    verdict = json.loads((run / "results.json").read_text())
    return run_row("stalled/x", run, test, verdict, run_coverage(run, test, verdict))


def edit_verdict(run: Path, edit: Any) -> None:
    verdict = json.loads((run / "results.json").read_text())
    edit(verdict)
    (run / "results.json").write_text(json.dumps(verdict))


def test_the_row_has_every_column_of_the_schema_in_order(stalled: Path) -> None:
    names = [c.split()[0] for c in RUN_SCHEMA.split(", ")]
    assert list(row_of(stalled)) == names
    assert names[-len(COVERAGE_COLUMNS):] == list(COVERAGE_COLUMNS)


def test_the_abort_rewinds_block_is_a_column_in_words(stalled: Path) -> None:
    assert row_of(stalled)["abort_rewinds"] is None
    block = {"kept": {"aborts": 2, "observations": 3, "carries-on": 2, "unobserved": 1}}
    edit_verdict(stalled, lambda v: v["stats"].update({"abort-rewinds": block}))
    assert row_of(stalled)["abort_rewinds"] == "after kept aborts (2): carries-on 2, unobserved 1"


def test_the_longest_unread_key_is_a_column(stalled: Path) -> None:
    assert row_of(stalled)["unread_s"] is None
    block = {"longest-s": 57.481, "groups": []}
    edit_verdict(stalled, lambda v: v["stats"].update({"group-unread-keys": block}))
    assert row_of(stalled)["unread_s"] == 57.481


def test_a_stored_block_gives_time_based_figures_and_the_poor_flag(stalled: Path) -> None:
    row = row_of(stalled)
    block = json.loads((stalled / "results.json").read_text())["run"]["coverage"]
    assert row["coverage_window"] == "main" and json.loads(row["coverage"]) == block
    assert (row["main_s"], row["acked_sends_main"]) == (70.0, 160)
    assert (row["seconds"], row["live_seconds"]) == (70, 20)
    # the 45 s of the kill: not one live second, not one acknowledged send
    assert (row["fault_seconds"], row["fault_live_seconds"], row["fault_sends"]) == (45, 0, 0)
    assert (row["normal_seconds"], row["normal_live_seconds"]) == (25, 20)
    assert row["poor_coverage"].startswith("coverage is poor: only 29%")


def test_without_a_block_the_history_is_counted(stalled: Path) -> None:
    edit_verdict(stalled, lambda v: v["run"].pop("coverage"))
    row = row_of(stalled)
    want = coverage(read_history(stalled / "history.jsonl"),
                    spans_of(json.loads((stalled / "test.json").read_text())))
    assert row["coverage_window"] == "history" and json.loads(row["coverage"]) == want
    assert row["fault_seconds"] == want["in_faults"]["seconds"] > 40
    assert row["fault_live_seconds"] == row["fault_sends"] == 0
    assert row["poor_coverage"] is not None


def test_an_invalid_run_is_not_flagged(stalled: Path) -> None:
    edit_verdict(stalled, lambda v: v.update(valid=False))
    row = row_of(stalled)
    assert row["poor_coverage"] is None and row["fault_live_seconds"] == 0


def test_no_coverage_means_null_columns(stalled: Path) -> None:
    test = json.loads((stalled / "test.json").read_text())
    verdict = json.loads((stalled / "results.json").read_text())
    row = run_row("stalled/x", stalled, test, verdict)
    assert all(row[c] is None for c in COVERAGE_COLUMNS)


def comparison_row(**metrics: Any) -> dict[str, Any]:
    base = {"kafka_version": "4.1.x", "acks": "all", "min_insync": 2,
            "unclean_leader_election": False, "faults": "kill", "txn": False}
    return {**base, **dict.fromkeys(METRIC_COLUMNS), **metrics}


STALLED = comparison_row(runs=1, poor_coverage=1, acked=160, lost=0, lost_rate=0.0,
                         acked_per_s=2.2857, live_share=20 / 70, avail_fault=0.0,
                         avail_normal=0.8, fault_sends=0)
HEALTHY = comparison_row(acks="1", runs=3, poor_coverage=0, acked=9000, lost=3,
                         lost_rate=3 / 9000, acked_per_s=42.0, live_share=1.0,
                         avail_fault=0.95, avail_normal=1.0, fault_sends=800)


@pytest.mark.parametrize(("value", "column", "shown"), [
    (0.0, "avail_fault", "0.0%"), (20 / 70, "live_share", "28.6%"),
    (2.2857, "acked_per_s", "2.3"), (1, "poor_coverage", "POOR: 1"), (0, "poor_coverage", ""),
    (None, "avail_fault", "-"), (0, "fault_sends", "0"),
], ids=["avail-zero", "live-share", "per-second", "flag", "no-flag", "null", "sends"])
def test_cells_for_people(value: Any, column: str, shown: str) -> None:
    assert fmt(value, column) == shown


def test_the_terminal_table_flags_the_configuration_with_poor_coverage() -> None:
    text = render_terminal([STALLED, HEALTHY], [*CONFIG_COLUMNS, *METRIC_COLUMNS])
    header = " ".join(text.splitlines()[1:3])
    assert "poor" in header and "live" in header and "faults" in header
    [stalled_line] = [line for line in text.splitlines() if "POOR: 1" in line]
    assert "all" in stalled_line and " 0.0%" in stalled_line and "28.6%" in stalled_line
    assert sum("POOR" in line for line in text.splitlines()) == 1


def test_the_heatmap_shows_coverage_under_each_rate_and_outlines_poor_cells() -> None:
    page = render_html([STALLED, HEALTHY], [*CONFIG_COLUMNS, *METRIC_COLUMNS], [])
    cells = re.findall(r"<td style='background:[^']*'( class='poor')?>(.*?)</td>", page)
    assert len(cells) == 2
    poor = [text for flag, text in cells if flag]
    assert len(poor) == 1 and "live 28.6%, in faults 0.0% (0 sends)" in poor[0]
    assert "coverage poor in 1 VALID run(s)" in poor[0]
    assert any("42.0 acked/s" in text and "poor" not in text for flag, text in cells if not flag)
    assert "<th>poor_coverage</th>" in page and "<td>POOR: 1</td>" in page


def test_the_terminal_table_fits_its_width_and_cuts_nothing() -> None:
    """Every configuration column and the terminal's figures in 100 characters; a long
    ``faults`` wraps between its kinds rather than being cut."""
    wide = dict(STALLED, faults="clock+kill+packet+partition+pause", isolation=2,
                inconsistent_offsets=910)
    text = render_terminal([wide, HEALTHY], [*CONFIG_COLUMNS, *METRIC_COLUMNS])
    assert max(len(line) for line in text.splitlines()) <= TERMINAL_WIDTH
    assert "…" not in text
    words = set(text.split())
    assert {"clock", "kill", "packet", "partition", "pause", "inconsistent", "910,",
            "isolation", "2", "POOR:", "28.6%", "100.0%", "95.0%", "9000"} <= words


def test_the_anomalies_cell_names_every_anomaly_column_that_is_not_zero() -> None:
    assert anomalies_cell(dict(HEALTHY, lost=3, garbage_reads=1)) == "lost 3, garbage reads 1"
    assert anomalies_cell(dict(HEALTHY, lost=0)) == "none"
    assert "isolation" in METRIC_COLUMNS and "inconsistent_offsets" in METRIC_COLUMNS
