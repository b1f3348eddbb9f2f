"""docs/HISTORY.md is the contract the checker implements: its anomaly table and the code agree."""

from __future__ import annotations

import os
import re
from pathlib import Path

from checkers import ANOMALY_TYPES

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "docs" / "HISTORY.md"
GROUPS = ROOT / "docs" / "HISTORY-GROUPS.md"


def documented_anomaly_types(text: str) -> list[str]:
    """The names in the first column of the anomaly table, in the order listed."""
    table = text.split("Anomaly names and their fields", 1)[1].split("Rules that decide", 1)[0]
    names: list[str] = []
    for row in table.splitlines():
        cells = row.split("|")
        if row.startswith("|") and len(cells) > 2 and "`" in cells[1]:
            names += re.findall(r"`([^`]+)`", cells[1])
    return names


def group_anomaly_types(text: str) -> list[str]:
    """The names in the first column of HISTORY-GROUPS.md's table of added anomalies."""
    table = text.split("## Anomalies (added)", 1)[1].split("## Rules", 1)[0]
    return [
        re.findall(r"`([^`]+)`", row.split("|")[1])[0]
        for row in table.splitlines()
        if row.startswith("| `")
    ]


def test_the_anomaly_table_lists_exactly_the_types_the_checker_knows() -> None:
    documented = documented_anomaly_types(CONTRACT.read_text())
    documented += group_anomaly_types(GROUPS.read_text())
    assert sorted(set(documented) - set(ANOMALY_TYPES)) == [], "documented, unknown to checkers"
    assert sorted(set(ANOMALY_TYPES) - set(documented)) == [], "known to checkers, undocumented"
    assert documented == list(ANOMALY_TYPES), "ANOMALY_TYPES follows the table's order"


def test_the_table_parser_sees_a_changed_table() -> None:
    """The check above can fail: a row added to the table is seen."""
    text = CONTRACT.read_text()
    row = "| `garbage-read` |"
    assert row in text
    extra = text.replace(row, "| `phantom-read` | a made-up type | key |\n" + row, 1)
    assert "phantom-read" in documented_anomaly_types(extra)
    assert documented_anomaly_types(extra) != list(ANOMALY_TYPES)


def test_nothing_points_at_the_contract_outside_the_repository() -> None:
    needle = "shared/" + "HISTORY.md"  # spelled in two parts so this file does not match
    stale = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.endswith(".egg-info")]
        for name in files:
            path = Path(top, name)
            if path.suffix in (".py", ".md") and needle in path.read_text(errors="replace"):
                stale.append(str(path.relative_to(ROOT)))
    assert stale == [], "point these at docs/HISTORY.md"


def test_the_group_table_parser_sees_a_changed_table() -> None:
    """The group half of the check can fail too: a row added to its table is seen."""
    text = GROUPS.read_text()
    row = "| `garbage-commit` |"
    assert row in text
    extra = text.replace(row, "| `phantom-commit` | a made-up type | key |\n" + row, 1)
    assert group_anomaly_types(extra) == [
        "lost-commit", "commit-skip", "phantom-commit", "garbage-commit"
    ]
