"""The README's lists are the code's tables: versions, fault kinds, workloads, anomaly
types and commands. Each list sits between ``<!-- name -->`` markers; when the code
gains, loses or renames an entry, this fails until the README says so too.

Also here, because they guard the same front page: every relative link of the README
and of ``docs/`` resolves, and the README stays a front page (at most ~300 lines).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from checkers import ANOMALY_TYPES
from cluster.versions import KRAFT, VERSIONS, ZOOKEEPER
from harness.base.faults import fault_names
from harness.cli import build_parser
from workloads import WORKLOADS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MODE_NAMES = {KRAFT: "KRaft", ZOOKEEPER: "ZooKeeper"}


def rows(section: str) -> list[list[str]]:
    """The table rows (cells stripped, header and rule dropped) between the markers."""
    text = README.read_text()
    match = re.search(rf"<!-- {section} -->\n(.*?)<!-- /{section} -->", text, re.S)
    assert match, f"README.md has no <!-- {section} --> ... <!-- /{section} --> block"
    lines = [ln for ln in match.group(1).splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def names(section: str) -> list[str]:
    """The first column's names, backticks and an ``insync`` prefix removed."""
    return [r[0].strip("`").removeprefix("insync ") for r in rows(section)]


def test_versions_and_modes_are_cluster_versions() -> None:
    listed = [(r[0], r[1]) for r in rows("versions")]
    code = [(v.version, ", ".join(MODE_NAMES[m] for m in sorted(v.modes)))
            for v in VERSIONS]
    assert listed == code


def test_fault_kinds_are_the_registry() -> None:
    assert names("faults") == list(fault_names())


def test_workloads_are_the_registry() -> None:
    assert names("workloads") == list(WORKLOADS)


def test_anomaly_types_are_the_checkers_table() -> None:
    assert names("anomalies") == list(ANOMALY_TYPES)


def test_commands_are_the_cli() -> None:
    sub = next(a for a in build_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    assert names("commands") == list(sub.choices)


def test_the_readme_is_a_front_page() -> None:
    assert len(README.read_text().splitlines()) <= 300


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").glob("*.md"))],
                         ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken, f"{page.name} links to missing files: {broken}"
