"""Adding a fault kind is one module plus one registry entry: nothing else needs an edit.

A made-up ``disk-full`` kind (``disk_full_kind``, a test module) is appended
to ``harness.base.faults.FAULT_KINDS``; the options, the package, the generator
simulation, the final heal, the composed nemesis, the residue check, the
fault spans a run records in its test.json and the report's fault bands all
pick it up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import disk_full_kind
import pytest
from fakes import fake_cluster

from harness.base import faults
from harness.base.errors import UsageError
from harness.base.faults import FAULT_KINDS, FaultKind
from harness.base.history_writer import HistoryWriter
from harness.base.rundir import RunDir
from harness.gen import nemesis, phases, simulate, time_limit
from harness.run import parse, setup
from nemesis import NemesisOptions, build_package, residue
from results.report.plot_data import nemesis_bands
from results.report.write import write_report

DISK_FULL = FaultKind("disk-full", ("fill-disk",), "free-disk", "all", 50, "disk_full_kind")


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(faults, "FAULT_KINDS", (*FAULT_KINDS, DISK_FULL))
    disk_full_kind.FILLED.clear()
    yield
    disk_full_kind.FILLED.clear()


def test_the_package_runs_the_new_kind_beside_the_others() -> None:
    opts = NemesisOptions(faults=frozenset({"disk-full", "kill", "clock"}), interval=5, seed=6)
    pkg = build_package(opts)
    assert pkg.nemesis is not None
    assert {"fill-disk", "free-disk", "kill", "start"} <= pkg.nemesis.fs()
    assert pkg.fault_spans["disk-full"] == ("fill-disk", "free-disk")
    assert not NemesisOptions(faults=frozenset({"disk-full"})).needs_faketime
    # the final heal puts it where its heal order says: after clocks, before restarts
    assert pkg.final_generator == [{"f": "reset-clock", "value": "all"},
                                   {"f": "free-disk", "value": "all"},
                                   {"f": "start", "value": "all"},
                                   {"f": "await-recovery", "value": None}]

    gen = phases(time_limit(400, nemesis(pkg.generator)), nemesis(pkg.final_generator))
    history = simulate(gen, concurrency=1, seed=opts.seed)
    invokes = [op for op in history if op["type"] == "invoke"]
    assert [op["f"] for op in invokes[-4:]] == ["reset-clock", "free-disk", "start",
                                                "await-recovery"]
    # in the main phase its heal is followed by a wait for recovery, as every kind's is
    main = invokes[:-4]
    after = [main[i + 1]["f"] for i, op in enumerate(main[:-1]) if op["f"] == "free-disk"]
    assert after and set(after) == {"await-recovery"}
    disk = [op for op in invokes[:-4] if op["f"] in DISK_FULL.fs]
    assert len(disk) > 10
    starts = [op for op in disk if op["f"] == "fill-disk"]
    # start and heal alternate (the main phase may end with the disk still full)
    assert [op["f"] for op in disk] == (["fill-disk", "free-disk"] * len(disk))[:len(disk)]
    assert {op["value"] for op in starts} == {"one", "all"}

    bands = [b for b in nemesis_bands(history, history[-1]["time"]) if b.kind == "disk-full"]
    assert len(bands) == len(starts) and not any(b.open for b in bands)


def test_its_nemesis_and_residue_probe_are_the_ones_the_run_uses() -> None:
    cluster, _ = fake_cluster(3)
    pkg = build_package(NemesisOptions(faults=frozenset({"disk-full"})))
    assert pkg.nemesis is not None
    pkg.nemesis.setup(cluster)
    done = pkg.nemesis.invoke(cluster, {"f": "fill-disk", "value": "n2"})
    assert done == {"value": {"filled": ["n2"]}}
    assert residue(cluster) == {"n2": ["disk still full"]}
    pkg.nemesis.teardown(cluster)
    assert residue(cluster) == {}


def test_a_schedule_may_name_its_ops_and_gets_it_healed(tmp_path: Path) -> None:
    script = tmp_path / "disk.jsonl"
    script.write_text('{"at": 1, "f": "fill-disk", "value": "n1"}\n')
    pkg = build_package(NemesisOptions(schedule=script))
    assert pkg.final_generator == [{"f": "free-disk", "value": "all"},
                                   {"f": "await-recovery", "value": None}]


def test_without_the_entry_the_kind_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faults, "FAULT_KINDS", FAULT_KINDS)
    with pytest.raises(UsageError, match="unknown nemesis faults"):
        NemesisOptions(faults=frozenset({"disk-full"}))


def _embedded(report: Path) -> dict[str, Any]:
    """The data a report page embeds (``results.report.data.build``)."""
    found = re.search(r'<script id="insync-data" type="application/json">(.*?)</script>',
                      report.read_text(), re.S)
    assert found, "no embedded data"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_runs_test_json_records_its_fault_spans_and_its_report_pairs_by_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spans outlive the registry entry: a report drawn later by an insync that no
    longer knows ``disk-full`` still draws its fault as one band, from the run's test.json."""
    opts = parse(["--nemesis", "disk-full,kill", "--results-dir", str(tmp_path), "--seed", "3"])
    nopts = setup.nemesis_options(opts)  # as the runner builds its package
    assert nopts is not None
    package = setup.build_package(nopts)
    test = setup.test_json(opts, datetime(2026, 11, 21, tzinfo=UTC), None, package)
    assert test["nemesis"]["fault_spans"] == {
        label: list(span) for label, span in package.fault_spans.items()}
    assert test["nemesis"]["fault_spans"]["disk-full"] == ["fill-disk", "free-disk"]

    run = RunDir.create(tmp_path, "disk", datetime(2026, 11, 21, tzinfo=UTC))
    run.write_test(test)
    clock = iter(range(0, 10**9, 10**6))
    with HistoryWriter(run.history_path, clock=lambda: next(clock), start_ns=0) as history:
        history.nemesis_invoke("fill-disk", "one")
        history.nemesis("fill-disk", {"filled": ["n2"]})
        sent = history.invoke(0, "send", [["send", "t0-0", 1]])
        history.complete(sent, "ok", [["send", "t0-0", [0, 1]]])
        history.nemesis_invoke("free-disk", "all")
        history.nemesis("free-disk", {"freed": ["n2"]})
        polled = history.invoke(0, "poll", [["poll"]])
        history.complete(polled, "ok", [["poll", {"t0-0": [[0, 1]]}]])

    monkeypatch.setattr(faults, "FAULT_KINDS", FAULT_KINDS)  # this insync forgot the kind
    bands = _embedded(write_report(run.path, pngs=False))["bands"]
    assert [(b["kind"], b["start_index"], b["stop_index"]) for b in bands] == [
        ("disk-full", 1, 5)]

    del test["nemesis"]["fault_spans"]  # a run without them: the registry alone decides
    run.write_test(test)
    bands = _embedded(write_report(run.path, pngs=False))["bands"]
    assert [(b["kind"], b["start_index"], b["stop_index"]) for b in bands] == [
        ("fill-disk", 1, 1), ("free-disk", 5, 5)]  # two instant markers, no fault band
