"""The nemesis's seeded op sequences are pinned: a refactor must not change what a run does.

``golden/sequences.json`` holds, per case, what the nemesis issues today: every heal
followed by an ``await-recovery`` op (back-to-back heals wait once, after the last of
them: ``nemesis.recovery.AwaitAfterHeals``), default targets that never draw
``all``/``majority``, kinds taking turns one fault at a time on 3 nodes
(``nemesis.package.one_at_a_time``), and a main phase that lasts its time limit
(``harness.gen.choose.TimeLimit``). A change that alters a sequence re-records it on
purpose, and its commit message says why.
For each case: the nemesis ops a 300 s simulation issues (time, f, value), then
the final heal, the package's ``fs`` and its report spans. A run's ``--seed`` must keep
replaying the same faults across insync versions, so any difference here is a
behaviour change, not a detail. When a change of behaviour is intended,
regenerate with ``python -m tests.nemesis.test_nemesis_sequences`` and say why
in the commit.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from harness.gen import nemesis, phases, simulate, time_limit
from nemesis.package import NemesisOptions, build_package

GOLDEN = Path(__file__).with_name("golden") / "sequences.json"

#: case id -> options; every kind alone, all together, and the options that steer the draw.
CASES: dict[str, dict[str, Any]] = {
    "partition": {"faults": ["partition"]},
    "kill": {"faults": ["kill"]},
    "pause": {"faults": ["pause"]},
    "clock": {"faults": ["clock"]},
    "packet": {"faults": ["packet"]},
    "all": {"faults": ["partition", "kill", "pause", "clock", "packet"], "seed": 11},
    "targets": {"faults": ["partition", "kill", "clock", "packet"],
                "targets": ["majorities-ring", "leaders", "one"], "seed": 5},
    "packet-netem": {"faults": ["packet"], "packet": ["loss", "rate", "delay", "duplicate"],
                     "seed": 9},
    "long-interval": {"faults": ["clock", "pause"], "interval": 30.0, "seed": 2},
    # on 3 nodes the default ring is drawn as the bridge it would become
    "three-nodes": {"faults": ["partition", "kill"], "nodes": 3, "seed": 7},
    # a script's kinds (not --nemesis) decide the final heal and the spans
    "schedule": {"faults": [], "schedule": [
        {"at": 5, "f": "kill", "value": "leader:t0-0"}, {"at": 9, "f": "strobe-clock"},
        {"at": 12, "f": "start-partition", "value": {"isolate": "n1"}},
        {"at": 20, "f": "start", "value": "all"}] + [
        {"at": 30 + i, "f": "pause", "value": "one"} for i in range(8)]},
}


def options(case: dict[str, Any], tmp: Path) -> NemesisOptions:
    schedule = None
    if "schedule" in case:
        schedule = tmp / "schedule.jsonl"
        schedule.write_text("".join(json.dumps(step) + "\n" for step in case["schedule"]))
    return NemesisOptions(
        schedule=schedule,
        faults=frozenset(case["faults"]),
        interval=case.get("interval", 7.0),
        targets=tuple(case.get("targets", ())),
        seed=case.get("seed", 3),
        packet=tuple(case.get("packet", ("loss", "rate"))),
        nodes=case.get("nodes"),
    )


def record(case: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """What a package built from ``case`` issues and declares, as plain JSON."""
    opts = options(case, tmp)
    pkg = build_package(opts)
    assert pkg.nemesis is not None
    gen = phases(time_limit(300, nemesis(pkg.generator)), nemesis(pkg.final_generator))
    history = simulate(gen, concurrency=1, seed=opts.seed)
    ops = [[op["time"], op["f"], op["value"]] for op in history if op["type"] == "invoke"]
    return json.loads(json.dumps({
        "ops": ops,
        "final": pkg.final_generator,
        "fs": sorted(pkg.nemesis.fs()),
        "spans": {k: list(v) for k, v in sorted(pkg.fault_spans.items())},
    }))


@pytest.mark.parametrize("case", sorted(CASES))
def test_seeded_sequence_is_unchanged(case: str, tmp_path: Path) -> None:
    expected = json.loads(GOLDEN.read_text())[case]
    got = record(CASES[case], tmp_path)
    assert len(got["ops"]) > 10, "the case must exercise the generator"
    assert got == expected


def test_every_case_is_recorded() -> None:
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(CASES)


if __name__ == "__main__":  # regenerate (only for an intended change of behaviour)
    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps({c: record(o, Path(tmp)) for c, o in sorted(CASES.items())},
                                     indent=1, sort_keys=True) + "\n")
