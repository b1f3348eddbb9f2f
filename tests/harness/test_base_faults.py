"""The fault-kind registry: its entries are consistent, its helpers derive from it, it stays low."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import harness.base
from harness.base import faults
from harness.base.faults import (
    FAULT_KINDS,
    FaultKind,
    all_fs,
    fault_kind,
    fault_names,
    fault_spans,
    in_heal_order,
    in_registry_order,
    kind_of,
    start_fs,
    stop_fs,
)

INSYNC = ("harness", "cluster", "nemesis", "workloads", "checkers", "results")


def test_names_are_unique_and_no_op_belongs_to_two_kinds() -> None:
    assert len(set(fault_names())) == len(FAULT_KINDS)
    owners: dict[str, str] = {}
    for kind in FAULT_KINDS:
        for f in kind.fs:
            assert f not in owners, f"{f} is both {owners[f]}'s and {kind.name}'s"
            owners[f] = kind.name
    assert set(owners) == all_fs()


def test_heal_order_is_total_resume_first_restart_last() -> None:
    assert len({k.heal_order for k in FAULT_KINDS}) == len(FAULT_KINDS), "ties leave it undefined"
    assert [k.heal["f"] for k in in_heal_order(FAULT_KINDS)] == [
        "resume", "stop-burst", "stop-partition", "stop-packet", "stop-disk", "reset-clock",
        "restore-config", "end-restart", "end-upgrade", "end-downgrade", "start", "power-on",
        "reassign-back", "elect-preferred", "add-controller"]


def test_labels_are_unique_and_every_start_has_a_span_to_its_stop() -> None:
    spans = fault_spans()
    assert len(spans) == sum(len(k.starts) for k in FAULT_KINDS), "a label used twice"
    for kind in FAULT_KINDS:
        assert sorted(start for start, _ in kind.spans.values()) == sorted(kind.starts)
        assert {stop for _, stop in kind.spans.values()} == {kind.stop}
    assert spans["clock-freeze"] == ("freeze-clock", "reset-clock")
    assert spans["clock-strobe"] == ("strobe-clock", "reset-clock")


def test_starts_and_stops_cover_every_op_once() -> None:
    assert set(start_fs()) | set(stop_fs()) == all_fs()
    assert not set(start_fs()) & set(stop_fs())
    assert "freeze-clock" in start_fs() and "heal" not in stop_fs()


@pytest.mark.parametrize(("f", "name"), [("kill", "kill"), ("start", "kill"),
                                         ("freeze-clock", "clock"), ("stop-packet", "packet"),
                                         ("compact-logs", None)],
                         ids=["kill", "start", "freeze", "stop-packet", "unknown"])
def test_kind_of_an_op(f: str, name: str | None) -> None:
    kind = kind_of(f)
    assert (kind.name if kind else None) == name


def test_lookups_by_name_keep_registry_order_and_name_what_is_known() -> None:
    assert fault_kind("pause").stop == "resume"
    with pytest.raises(KeyError, match="kinds are partition, kill"):
        fault_kind("meteor")
    assert [k.name for k in in_registry_order({"packet", "partition", "meteor"})] == [
        "partition", "packet"]
    assert set(fault_spans({"kill", "pause"})) == {"kill", "pause"}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"starts": ()}, "no start op"),
    ({"starts": ("fill", "free")}, "both starts and stops"),
    ({"starts": ("a", "b")}, "one label per start"),
    ({"labels": ("x", "y")}, "one label per start"),
], ids=["no-start", "stop-is-start", "unlabelled-starts", "extra-label"])
def test_a_malformed_entry_is_refused(kwargs: dict[str, object], match: str) -> None:
    fields: dict[str, object] = {"name": "disk", "starts": ("fill",), "stop": "free",
                                 "heal_value": None, "heal_order": 50, "impl": "x"}
    with pytest.raises(ValueError, match=match):
        FaultKind(**{**fields, **kwargs})  # type: ignore[arg-type]


def test_heal_ops_are_fresh_dicts() -> None:
    kind = fault_kind("kill")
    op = kind.heal
    op["value"] = "n1"
    assert kind.heal == {"f": "start", "value": "all"}


def test_helpers_read_the_registry_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = FaultKind("disk-full", ("fill-disk",), "free-disk", None, 50, "x")
    monkeypatch.setattr(faults, "FAULT_KINDS", (*FAULT_KINDS, extra))
    assert fault_names()[-1] == "disk-full"
    assert {"fill-disk", "free-disk"} <= all_fs()
    assert fault_spans()["disk-full"] == ("fill-disk", "free-disk")
    assert kind_of("free-disk") is extra


def _imported(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


def test_the_ground_floor_imports_nothing_of_insync_above_it() -> None:
    """Of insync, harness.base only: a report can read the registry without any machinery."""
    floor = Path(harness.base.__file__).parent
    for path in sorted(floor.glob("*.py")):
        if path.name == "faults.py":  # the registry needs nothing but the standard library
            tops = {n.split(".")[0] for n in _imported(path)}
            assert tops <= set(sys.stdlib_module_names) | {"__future__", "harness"}, tops
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                assert top not in INSYNC or name.startswith("harness.base"), f"{path.name}: {name}"


def test_the_ground_floor_says_what_it_is() -> None:
    assert " ".join((harness.base.__doc__ or "").split()).startswith(
        "The ground floor: modules every other insync package may import, "
        "which import nothing of insync above them.")
