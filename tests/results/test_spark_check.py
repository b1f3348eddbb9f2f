"""The Spark engine agrees exactly with the in-memory checker on its four anomaly types.

Histories come from the in-memory Kafka model (``tests/support/kafka_model.py``),
drawn by Hypothesis with faults planted into some of them, and from synthetic
run directories with injected lost writes. Each set is checked by Spark in
*one* batch (``check_files_spark``): starting Spark jobs costs seconds, so one
Hypothesis example holds a list of 15 histories rather than 15 examples
holding one each. Agreement means: the same checked types found, the same
examples in the same order with the same fields, the same true counts, the
same stats, the same fault-script waits that did not hold (``waits-not-held``),
and ``valid`` computed from those four types, ``unknown`` when a wait did not hold.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

SUPPORT = str(Path(__file__).resolve().parents[1] / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

import bad_histories  # noqa: E402
import group_model as gm  # noqa: E402
import kafka_model as km  # noqa: E402
import wait_histories as wh  # noqa: E402
from history_builder import Hist  # noqa: E402

from checkers import check_file, check_history  # noqa: E402
from checkers._input import Source, open_source  # noqa: E402
from harness.base.errors import HistoryError  # noqa: E402

pyspark = pytest.importorskip("pyspark")

from checkers.spark.check import CHECKED_TYPES, check_files_spark, judge  # noqa: E402
from checkers.spark.history import read_histories  # noqa: E402
from checkers.spark.session import get_session, stop_session  # noqa: E402
from harness.bench._synth import plans, write_plan  # noqa: E402

pytestmark = pytest.mark.integration

CAP = 3  # small, so the example cap and the example order are exercised


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = get_session("local[2]", app_name="insync-tests")
    yield session
    stop_session(session)


def _write(ops: list[dict[str, Any]], path: Path) -> str:
    path.write_text("".join(json.dumps(op) + "\n" for op in ops))
    return str(path)


def assert_agree(memory: dict[str, Any], spark: dict[str, Any], where: str) -> None:
    """Spark's verdict is the in-memory verdict restricted to the four checked types."""
    mine = [t for t in memory["anomaly-types"] if t in CHECKED_TYPES]
    assert spark["anomaly-types"] == mine, where
    assert spark["bad-anomaly-types"] == mine, where
    for t in mine:
        assert spark["anomaly-counts"][t] == memory["anomaly-counts"][t], (where, t)
        assert spark["anomalies"][t] == memory["anomalies"][t], (where, t)
    for name, value in spark["stats"].items():
        assert value == memory["stats"][name], (where, name)
    judged = memory["stats"]["client-ops"] > 0 and memory.get("error", "").find("nothing") < 0
    waits = memory.get("waits-not-held")
    assert spark.get("waits-not-held") == waits, where
    if waits:  # the script did not run as written: unknown whatever was found
        assert spark["valid"] == "unknown", where
        assert spark["error"].startswith("; ".join(waits)), where
    else:
        assert spark["valid"] == ((not mine) if judged else "unknown"), where
    assert spark["engine"] == "spark"
    assert spark["checked-types"] == list(CHECKED_TYPES)


INJECTORS = [
    None,
    km.inject_lost_write,
    km.inject_duplicate,
    km.inject_inconsistent_offsets,
    km.inject_g1a,
    km.inject_poll_reorder,
]
CASES = st.lists(st.integers(0, 2**32 - 1), min_size=15, max_size=15, unique=True)


def shape_of(seed: int) -> km.Settings:
    """A history shape derived from the seed, so even Hypothesis's simplest list varies."""
    rng = random.Random(seed)
    return km.Settings(
        ops=rng.randint(40, 150),
        clients=rng.randint(1, 5),
        keys=rng.randint(1, 3),
        p_txn=rng.choice([0.0, 0.25, 0.5]),
        p_fail=rng.choice([0.0, 0.1, 0.3]),
        p_info=rng.choice([0.0, 0.05, 0.15]),
        p_assign=rng.choice([0.05, 0.15, 0.3]),
        p_crash=rng.choice([0.0, 0.03]),
        max_batch=rng.randint(1, 4),
    )


@settings(
    max_examples=1,
    deadline=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(seeds=CASES)
def test_hypothesis_histories_agree(spark: Any, tmp_path: Path, seeds: list[int]) -> None:
    batch = Path(tempfile.mkdtemp(dir=tmp_path))
    paths, memory, names = [], [], []
    for i, seed in enumerate(seeds):
        ops = km.generate(seed, shape_of(seed))
        inject = INJECTORS[i % len(INJECTORS)]
        if inject is not None:
            inject(ops, random.Random(seed))
        if i % 4 == 3:  # a run cut short: pending invokes count as info
            ops = ops[: random.Random(seed).randint(1, len(ops))]
        memory.append(check_history(ops, max_anomalies=CAP))
        paths.append(_write(ops, batch / f"h{i}.jsonl"))
        names.append(f"km.generate({seed}, shape_of({seed})) + {getattr(inject, '__name__', '-')}")
    verdicts = check_files_spark(spark, paths, max_anomalies=CAP)
    for name, mem, got in zip(names, memory, verdicts, strict=True):
        assert_agree(mem, got, name)
    planted = {t for mem in memory for t in mem["anomaly-types"] if t in CHECKED_TYPES}
    assert planted, "no checked anomaly in 15 histories: the agreement proved little"


WAITS = {
    "held": wh.history(wh.HELD),
    "held-lost-write": wh.history(wh.HELD, lose=True),
    "not-held": wh.history(wh.NOT_HELD),
    "not-held-lost-write": wh.history(wh.NOT_HELD, lose=True),
    "cut-short": wh.history({"held": False, "seconds": 12.5, "cut-short": True}),
    "failed-with-an-error": wh.history({}, error="ClusterError: no metadata"),
    "invoke-only": wh.history(None),
    "reconfigure-applied": wh.reconfigured(None),
    "reconfigure-failed-lost-write": wh.reconfigured(wh.CHANGE_ERROR, lose=True),
}


def test_scripted_waits_that_did_not_hold_agree(spark: Any, tmp_path: Path) -> None:
    """A fault script's wait that did not hold: ``unknown`` from both engines, whatever was
    found, the same reasons in ``waits-not-held`` and leading ``error``; one that held
    changes nothing."""
    hists = dict(WAITS)
    both = wh.history(wh.HELD)  # a second wait, after the first one held, does not
    both.add("nemesis", "invoke", "await-state", {**wh.WAIT, "step": 5})
    both.add("nemesis", "info", "await-state", {**wh.WAIT, **wh.NOT_HELD, "step": 5})
    hists["held-then-not-held"] = both
    nothing = Hist()  # no client op at all: nothing to judge, and the wait failed
    nothing.add("nemesis", "invoke", "await-state", wh.WAIT)
    nothing.add("nemesis", "info", "await-state", {**wh.WAIT, **wh.NOT_HELD})
    hists["nothing-to-judge"] = nothing
    paths = [_write(h.ops, tmp_path / f"{name}.jsonl") for name, h in hists.items()]
    memory = [check_file(p, max_anomalies=CAP) for p in paths]
    verdicts = check_files_spark(spark, paths, max_anomalies=CAP)
    for name, mem, got in zip(hists, memory, verdicts, strict=True):
        assert_agree(mem, got, name)
        assert got.get("error") == mem.get("error"), name
    got = dict(zip(hists, verdicts, strict=True))
    assert got["held"]["valid"] is True and got["held-lost-write"]["valid"] is False
    assert got["not-held-lost-write"]["valid"] == "unknown"
    assert "lost-write" in got["not-held-lost-write"]["anomaly-types"]  # still listed
    assert got["not-held"]["waits-not-held"] == [wh.REASON]
    assert got["held-then-not-held"]["waits-not-held"] == [wh.REASON.replace("3", "5", 1)]
    assert got["invoke-only"]["valid"] is True
    assert got["reconfigure-applied"]["valid"] is True
    assert got["reconfigure-failed-lost-write"]["valid"] == "unknown"
    assert got["reconfigure-failed-lost-write"]["waits-not-held"] == [wh.CHANGE_REASON]
    assert got["nothing-to-judge"]["error"].startswith(wh.REASON + "; nothing to judge")


def test_group_histories_are_read_and_agree_on_the_four_types(
    spark: Any, tmp_path: Path
) -> None:
    """HISTORY-GROUPS.md histories (commits, committed reads, rebalances, a lost commit): the
    Spark engine reads them as well formed and agrees on its four types; it does not claim
    the group types (they are not among its ``checked-types``)."""
    paths, memory = [], []
    for seed in range(6):
        ops = gm.generate(seed, gm.GroupSettings(groups=2, steps=60, crash_in_poll=seed > 3))
        if seed % 2:
            reads = [op for op in ops if op["f"] == "committed" and op["type"] == "ok"]
            reads[-1]["value"][0][1] = dict.fromkeys(reads[-1]["value"][0][1])  # all null
        memory.append(check_history(ops, max_anomalies=CAP))
        paths.append(_write(ops, tmp_path / f"g{seed}.jsonl"))
    verdicts = check_files_spark(spark, paths, max_anomalies=CAP)
    for seed, (mem, got) in enumerate(zip(memory, verdicts, strict=True)):
        assert_agree(mem, got, f"group_model {seed}")
        assert not set(got["anomaly-types"]) & {"lost-commit", "commit-skip", "garbage-commit"}
    assert any("lost-commit" in m["anomaly-types"] for m in memory)


def test_synthetic_runs_with_lost_writes_agree(spark: Any, tmp_path: Path) -> None:
    lossy = [p for p in plans(12, 4000, seed=7) if p.loss_rate > 0][:3]
    safe = [p for p in plans(48, 4000, seed=7) if p.loss_rate == 0][:1]
    dirs = [write_plan(tmp_path, p) for p in [*lossy, *safe]]
    verdicts = check_files_spark(spark, dirs, max_anomalies=CAP)
    for d, got in zip(dirs, verdicts, strict=True):
        assert_agree(check_file(d, max_anomalies=CAP), got, str(d))
    assert any("lost-write" in v["anomaly-types"] for v in verdicts)
    assert verdicts[-1]["valid"] is True


def test_malformed_histories_get_the_memory_engines_line_and_words(
    spark: Any, tmp_path: Path
) -> None:
    """Every case of ``bad_histories`` in one Spark batch: the same error, word for word."""
    memory: dict[str, str] = {}
    sources: dict[str, Source] = {}
    for case in bad_histories.CASES:
        path = tmp_path / f"{case.id}.jsonl"
        path.write_bytes(case.content)
        with pytest.raises(HistoryError) as caught:
            check_file(path)
        memory[case.id] = str(caught.value)
        try:
            sources[case.id] = open_source(path)  # what check_files_spark does first
        except HistoryError as err:
            assert str(err) == memory[case.id], case.id
    errors: dict[str, HistoryError] = {}
    read_histories(spark, list(sources.values()), errors=errors)
    got = {cid: str(errors.get(str(s.path.resolve()))) for cid, s in sources.items()}
    assert got == {cid: memory[cid] for cid in sources}
    assert len(sources) >= len(bad_histories.CASES) - 3, "most cases must reach Spark"


def test_lines_and_times_are_followed_across_file_splits(spark: Any, tmp_path: Path) -> None:
    """Files cut into many Spark splits: the same line numbers, errors and verdict.

    A line's time is compared with the last time of the splits before it, the
    way the memory engine's chunked reader compares across its chunk edges.
    """
    ops = km.generate(3, km.Settings(ops=120, clients=4, keys=2))
    valid = Path(_write(ops, tmp_path / "valid.jsonl"))
    broken: list[Path] = []
    for at in (1, 17, 60, len(ops) - 1):  # line at + 1 goes back in time
        bad = [dict(op) for op in ops]
        bad[at - 1]["time"] = bad[at]["time"] + 10**6
        broken.append(Path(_write(bad, tmp_path / f"time-{at}.jsonl")))
        bad = [dict(op) for op in ops]
        bad[at]["index"] += 1
        broken.append(Path(_write(bad, tmp_path / f"index-{at}.jsonl")))
    memory = {}
    for path in broken:
        with pytest.raises(HistoryError) as caught:
            check_file(path)
        memory[str(path.resolve())] = str(caught.value)
    spark.conf.set("spark.sql.files.maxPartitionBytes", "700")  # ~6 lines a split
    try:
        errors: dict[str, HistoryError] = {}
        tables = read_histories(spark, [open_source(p) for p in [valid, *broken]], errors=errors)
        verdict = judge(tables, max_anomalies=CAP)[str(valid.resolve())]
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert {h: str(e) for h, e in errors.items()} == memory
    assert_agree(check_file(valid, max_anomalies=CAP), verdict, str(valid))


def test_a_last_line_cut_short_is_dropped_by_both_engines_alike(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    from harness.cli import main

    ops = km.generate(5, km.Settings(ops=60, clients=3, keys=2))
    path = tmp_path / "torn.jsonl"
    path.write_text("".join(json.dumps(op) + "\n" for op in ops) + '{"index": 99, "ti')
    assert main(["check", "--json", str(path)]) == 0
    memory = capsys.readouterr()
    assert main(["check", "--engine", "spark", "--json", str(path)]) == 0
    got = capsys.readouterr()
    assert got.err == memory.err
    assert got.err.startswith(f"insync: warning: line {len(ops) + 1} has no final newline")
    verdict = json.loads(got.out)
    assert verdict["warnings"] == json.loads(memory.out)["warnings"]
    assert_agree(json.loads(memory.out), verdict, str(path))


def test_cli_engine_spark(spark: Any, tmp_path: Path, capsysbinary: Any) -> None:
    from harness.cli import main

    ops = km.generate(11, km.Settings(ops=80, clients=3, keys=2))
    planted = km.inject_lost_write(ops, random.Random(11))
    assert planted is not None
    path = _write(ops, tmp_path / "lost.jsonl")
    assert main(["check", "--engine", "spark", "--json", path]) == 1
    verdict = json.loads(capsysbinary.readouterr().out)
    assert verdict["engine"] == "spark"
    assert tuple(planted) in [(a["key"], a["value"]) for a in verdict["anomalies"]["lost-write"]]
    assert_agree(check_file(path), verdict, path)
    assert spark.sparkContext._jsc is not None  # the shared session survived the command
