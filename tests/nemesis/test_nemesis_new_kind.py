"""Adding a fault kind is one module plus one registry entry: nothing else needs an edit.

A made-up ``disk-full`` kind (``disk_full_kind``, a test module) is appended
to ``harness.base.faults.FAULT_KINDS``; the options, the package, the generator
simulation, the final heal, the composed nemesis, the residue check and the
report's fault bands all pick it up.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import disk_full_kind
import pytest
from fakes import fake_cluster

from harness.base import faults
from harness.base.errors import UsageError
from harness.base.faults import FAULT_KINDS, FaultKind
from harness.gen import nemesis, phases, simulate, time_limit
from nemesis import NemesisOptions, build_package, residue
from results.plot_data import nemesis_bands

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
