"""docs/HISTORY.md is the contract the checker implements: its anomaly table and the code agree."""

from __future__ import annotations

import os
import re
from pathlib import Path

from checkers import ANOMALY_TYPES
from harness.base import contract

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


def table_rows(table: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(type, reported when, fields) of each row of an anomaly table of three columns."""
    rows = []
    for row in table.splitlines():
        cells = [c.strip() for c in row.split("|")[1:-1]]
        if len(cells) == 3 and cells[0].startswith("`"):
            fields = tuple(f.strip() for f in cells[2].split(","))
            rows.append((cells[0].strip("`"), cells[1], fields))
    return rows


def documented_rows(text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """The rows of HISTORY.md's anomaly table."""
    table = text.split("Anomaly names and their fields", 1)[1].split("Rules that decide", 1)[0]
    return table_rows(table)


def group_rows(text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """The rows of HISTORY-GROUPS.md's table of added anomalies."""
    return table_rows(text.split("## Anomalies (added)", 1)[1].split("## Rules", 1)[0])


def test_the_anomaly_table_is_the_registry() -> None:
    """Each row says what its ``harness.base.contract.AnomalyType`` says, in registry order:
    HISTORY.md's table, then HISTORY-GROUPS.md's."""
    documented = documented_rows(CONTRACT.read_text()) + group_rows(GROUPS.read_text())
    registered = [(t.name, t.meaning, t.fields) for t in contract.ANOMALY_TYPES]
    assert documented == registered


def test_the_informational_rule_names_the_registry_types() -> None:
    """The prose rule lists exactly the types the registry makes informational."""
    text = CONTRACT.read_text()
    rule = text.split("- **Informational types**", 1)[1].split("\n- **", 1)[0]
    named = set(re.findall(r"`([^`]+)`", rule)) & set(contract.anomaly_names())
    assert named == {t.name for t in contract.ANOMALY_TYPES if t.informational != "never"}


def test_the_table_parser_sees_a_changed_table() -> None:
    """The check above can fail: a row added to the table is seen."""
    text = CONTRACT.read_text()
    row = "| `garbage-read` |"
    assert row in text
    extra = text.replace(row, "| `phantom-read` | a made-up type | key |\n" + row, 1)
    assert "phantom-read" in documented_anomaly_types(extra)
    assert documented_anomaly_types(extra) != list(ANOMALY_TYPES)
    assert documented_rows(extra) != documented_rows(text)
    reworded = text.replace("one value appears at more than one offset", "one value twice", 1)
    assert documented_rows(reworded) != documented_rows(text)


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
        "lost-commit", "commit-skip", "phantom-commit", "garbage-commit",
        "duplicate-output", "missing-output",
    ]
