"""``insync analyze`` end to end on synthetic runs, against numbers computed here in plain Python.

The expected table is rebuilt in this file straight from each run's
``results.json`` and ``history.jsonl`` (json module, no Spark, none of the
pipeline's code), so a wrong join, a wrong fault interval or a double count
in the Spark pipeline shows up as a mismatch. The one exception is a run's
coverage block: the runner, the report and analyze share one definition,
``results.coverage.coverage`` (tested on its own), so this file takes a run's
block from results.json or, for a run without one, from that function over
the history, and checks what the pipeline sums and divides. Ingestion is
exercised incrementally: some runs, then more runs, then nothing new; among
them, runs that wrote nothing during their fault (``stalled_run``), one with
and one without a coverage block.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pyspark = pytest.importorskip("pyspark")

from stalled_run import write_stalled_run  # noqa: E402

from checkers.spark.session import get_session, stop_session  # noqa: E402
from harness.base.faults import fault_spans, start_fs, stop_fs  # noqa: E402
from harness.base.history import read_history  # noqa: E402
from harness.bench._synth import plans, write_plan  # noqa: E402
from harness.cli import main  # noqa: E402
from results.analysis.analyze import compare, with_history_faults  # noqa: E402
from results.analysis.ingest import COVERAGE_COLUMNS, ingest  # noqa: E402
from results.analysis.tables import CONFIG_COLUMNS  # noqa: E402
from results.coverage import coverage, poor_coverage  # noqa: E402

pytestmark = pytest.mark.integration

OPS_PER_RUN = 2500
STARTS, STOPS = start_fs(), stop_fs()  # the registry: the spec analyze.py must follow


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = get_session("local[2]", app_name="insync-tests")
    yield session
    stop_session(session)


STAMP = "20261121T031501.123Z"


def drop_coverage(run: Path) -> Path:
    """results.json as a run from before coverage blocks left it."""
    verdict = json.loads((run / "results.json").read_text())
    del verdict["run"]["coverage"]
    (run / "results.json").write_text(json.dumps(verdict))
    return run


@pytest.fixture(scope="module")
def ingested(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Five runs ingested, then three more, then an ingestion with nothing new."""
    root = tmp_path_factory.mktemp("runs")
    out = root / "parquet"
    chosen = plans(6, OPS_PER_RUN, seed=3, nights=2)
    first = [write_plan(root, p) for p in chosen[:4]]
    drop_coverage(first[1])  # computed from its history at ingestion
    first.append(write_stalled_run(root / "stalled" / STAMP))
    r1 = ingest(spark, root, out)
    counts1 = _counts(spark, out)
    later = [write_plan(root, p) for p in chosen[4:]]
    later.append(write_stalled_run(root / "stalled-old" / STAMP, with_coverage=False))
    r2 = ingest(spark, root, out)
    r3 = ingest(spark, root, out)
    return {
        "root": root,
        "out": out,
        "first": first,
        "all": first + later,
        "reports": (r1, r2, r3),
        "counts1": counts1,
        "counts": _counts(spark, out),
    }


def _counts(spark: Any, out: Path) -> dict[str, Any]:
    runs = spark.read.parquet(str(out / "runs"))
    ops = spark.read.parquet(str(out / "ops"))
    per_run = {r["run_id"]: r["count"] for r in ops.groupBy("run_id").count().collect()}
    return {
        "runs": runs.count(),
        "run_ids": sorted(r["run_id"] for r in runs.collect()),
        "ops": per_run,
    }


def _history(d: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (d / "history.jsonl").read_text().splitlines()]


def _rid(root: Path, d: Path) -> str:
    return d.relative_to(root).as_posix()


def test_ingestion_is_incremental_and_exact(ingested: dict[str, Any]) -> None:
    r1, r2, r3 = ingested["reports"]
    root = ingested["root"]
    first, every = len(ingested["first"]), len(ingested["all"])
    assert sorted(r1.ingested) == sorted(_rid(root, d) for d in ingested["first"])
    assert len(r2.ingested) == every - first and r2.already == first
    assert r3.ingested == [] and r3.already == every
    assert ingested["counts1"]["runs"] == first
    counts = ingested["counts"]
    assert counts["run_ids"] == sorted(_rid(root, d) for d in ingested["all"])
    # every completion and every nemesis line, once: invokes are folded into latency
    for d in ingested["all"]:
        expected = sum(
            1 for op in _history(d) if op["type"] != "invoke" or op["process"] == "nemesis"
        )
        assert counts["ops"][_rid(root, d)] == expected


def _percentile(values: list[float], q: float) -> float | None:
    """Exact percentile with linear interpolation between closest ranks."""
    if not values:
        return None
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _delta(f: str) -> int:
    if f.startswith("start-") or f in STARTS:
        return 1
    if f.startswith("stop-") or f in STOPS:
        return -1
    return 0


def expected_table(dirs: list[Path]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The comparison, computed from the files with plain Python."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for d in dirs:
        test = json.loads((d / "test.json").read_text())
        verdict = json.loads((d / "results.json").read_text())
        w, c = test["workload"], test["cluster"]
        key = (
            c["kafka_version"],
            w["acks"],
            w["min_insync"],
            w["unclean_leader_election"],
            "+".join(sorted(test["nemesis"]["faults"])),
            w["txn"],
        )
        g = groups.setdefault(
            key,
            {
                "runs": 0,
                "acked": 0,
                "lost": 0,
                "unseen": 0,
                "lost_commits": 0,
                "commit_skips": 0,
                "garbage_commits": 0,
                "lat": [],
                "rec": [],
                **dict.fromkeys(("poor", "main_s", "acked_main", "sec", "live", "f_sec",
                                 "f_live", "f_sends", "n_sec", "n_live"), 0),
            },
        )
        g["runs"] += 1
        _add_coverage(g, d, test, verdict)
        g["lost"] += verdict.get("anomaly-counts", {}).get("lost-write", 0)
        g["unseen"] += sum(a["count"] for a in verdict["anomalies"].get("unseen", []))
        for kind in ("lost-commit", "commit-skip", "garbage-commit"):
            g[kind.replace("-", "_") + "s"] += verdict.get("anomaly-counts", {}).get(kind, 0)
        ops = _history(d)
        invoke_time: dict[Any, int] = {}
        heals: list[int] = []
        ok_sends: list[int] = []
        for op in ops:  # latency pairs follow file order per process
            if op["process"] == "nemesis":
                continue
            if op["type"] == "invoke":
                invoke_time[op["process"]] = op["time"]
                continue
            if op["f"] in ("send", "poll", "txn") and op["type"] == "ok":
                g["lat"].append((op["time"] - invoke_time[op["process"]]) / 1e6)
        for op in sorted(ops, key=lambda o: (o["time"], o["index"])):
            if op["process"] == "nemesis":
                if op["type"] != "invoke" and _delta(op["f"]) < 0:
                    heals.append(op["time"])
                continue
            if op["type"] == "invoke" or op["f"] not in ("send", "poll", "txn"):
                continue
            ok = op["type"] == "ok"
            sends = sum(1 for m in op.get("value") or [] if m[0] == "send") if ok else 0
            g["acked"] += sends if op["f"] in ("send", "txn") else 0
            if ok and sends and op["f"] in ("send", "txn"):
                ok_sends.append(op["time"])
        for h in heals:
            after = [t for t in ok_sends if t >= h]
            if after:
                g["rec"].append((min(after) - h) / 1e6)
    out = {}
    for key, g in groups.items():
        out[key] = {
            "runs": g["runs"],
            "acked": g["acked"],
            "lost": g["lost"],
            "lost_rate": g["lost"] / g["acked"],
            "unseen": g["unseen"],
            "lost_commits": g["lost_commits"],
            "commit_skips": g["commit_skips"],
            "garbage_commits": g["garbage_commits"],
            "poor_coverage": g["poor"],
            "acked_per_s": g["acked_main"] / g["main_s"],
            "live_share": g["live"] / g["sec"],
            "avail_fault": g["f_live"] / g["f_sec"] if g["f_sec"] else None,
            "avail_normal": g["n_live"] / g["n_sec"] if g["n_sec"] else None,
            "fault_sends": g["f_sends"],
            "latency_p50_ms": _percentile(g["lat"], 0.5),
            "latency_p99_ms": _percentile(g["lat"], 0.99),
            "latency_max_ms": max(g["lat"]),
            "recovery_p50_ms": _percentile(g["rec"], 0.5),
            "recovery_max_ms": max(g["rec"]) if g["rec"] else None,
        }
    return out


def _add_coverage(g: dict[str, Any], d: Path, test: dict[str, Any],
                  verdict: dict[str, Any]) -> None:
    """The run's coverage block (or, without one, the shared function over its history),
    added into the group's sums; outside faults is the whole minus the union."""
    cov = verdict["run"].get("coverage")
    if cov is None:
        cov = coverage(read_history(d / "history.jsonl"), fault_spans())
    inside = cov["in_faults"]
    g["poor"] += verdict["valid"] is True and poor_coverage(cov) is not None
    g["main_s"] += cov["main_s"]
    g["acked_main"] += cov["acked_sends_main"]
    g["sec"] += cov["seconds"]
    g["live"] += cov["live_seconds"]
    g["f_sec"] += inside["seconds"]
    g["f_live"] += inside["live_seconds"]
    g["f_sends"] += inside["acked_sends"]
    g["n_sec"] += cov["seconds"] - inside["seconds"]
    g["n_live"] += cov["live_seconds"] - inside["live_seconds"]


STALLED_KEY = ("4.1.x", "all", 2, False, "kill", True)


def test_comparison_matches_plain_python(spark: Any, ingested: dict[str, Any]) -> None:
    rows = [r.asDict() for r in compare(spark, ingested["out"]).collect()]
    expected = expected_table(ingested["all"])
    got = {tuple(r[c] for c in CONFIG_COLUMNS): r for r in rows}
    assert set(got) == set(expected)
    assert any(e["lost"] > 0 for e in expected.values()), "no loss: the test proves little"
    # the two stalled runs, one counted from its block, one from its history: VALID, flagged,
    # and not one live second in 45 s of faults (per completion it looked ~95% available)
    stalled = expected[STALLED_KEY]
    assert stalled["runs"] == stalled["poor_coverage"] == 2
    assert stalled["avail_fault"] == 0 and stalled["fault_sends"] == 0
    assert stalled["avail_normal"] > 0.5
    for key, want in expected.items():
        for name, value in want.items():
            have = got[key][name]
            if value is None:
                assert have is None, (key, name)
            else:
                assert have == pytest.approx(value, rel=1e-9), (key, name)


def test_outputs_and_cli(spark: Any, ingested: dict[str, Any], capsys: Any) -> None:
    root, out = ingested["root"], ingested["out"]
    assert main(["analyze", str(root), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"ingested 0 new run(s); {len(ingested['all'])} already" in printed
    with (out / "comparison.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(expected_table(ingested["all"]))
    by_faults = {(r["acks"], r["faults"], r["kafka_version"]): r for r in rows}
    assert by_faults[("all", "kill", "4.1.x")]["poor_coverage"] == "2"
    assert "POOR: 2" in printed
    page = (out / "report.html").read_text()
    assert "loss rate by configuration" in page and "class='poor'" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert (out / "trend.csv").is_file()  # two nights


def test_a_bad_run_is_skipped_and_the_rest_analysed(spark: Any, tmp_path: Path,
                                                    capsys: Any) -> None:
    """One malformed results.json costs one skip line, not the whole ingestion."""
    root = tmp_path / "results"
    good = write_plan(root, plans(1, 500, seed=9, nights=1)[0])
    bad = root / "broken" / good.name
    shutil.copytree(good, bad)
    (bad / "results.json").write_text('{"valid": false, "anomalies": []}')
    assert main(["analyze", str(root)]) == 0
    captured = capsys.readouterr()
    assert "ingested 1 new run(s); 0 already" in captured.out
    assert "skipped 1 unreadable" in captured.out
    [line] = captured.err.splitlines()
    assert line.startswith(f"insync: skipping broken/{good.name}: {bad / 'results.json'}")
    assert "anomalies must be an object" in line
    with (root / "parquet" / "comparison.csv").open() as f:
        assert sum(int(r["runs"]) for r in csv.DictReader(f)) == 1


def test_a_history_coverage_cannot_be_counted_from_is_skipped(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    """No coverage block, and an ok send whose value is a number: one skip line."""
    root = tmp_path / "results"
    write_plan(root, plans(1, 500, seed=9, nights=1)[0])
    bad = write_stalled_run(root / "stalled" / STAMP, with_coverage=False)
    lines = (bad / "history.jsonl").read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if '"type":"ok","f":"send"' in line)
    lines[i] = lines[i].replace('"value":[["send"', '"value":7,"was":[["send"')
    (bad / "history.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["analyze", str(root)]) == 0
    captured = capsys.readouterr()
    assert "ingested 1 new run(s); 0 already" in captured.out
    assert "skipped 1 unreadable" in captured.out
    [line] = captured.err.splitlines()
    assert line.startswith(f"insync: skipping stalled/{STAMP}: {bad / 'history.jsonl'}")
    assert "cannot count acknowledged sends" in line


def test_a_table_from_before_coverage_still_compares(spark: Any, tmp_path: Path) -> None:
    """Rows ingested before the coverage columns existed read as nulls beside new ones."""
    root, out = tmp_path / "results", tmp_path / "parquet"
    old = write_plan(root, plans(1, 500, seed=9, nights=1)[0])
    ingest(spark, root, out)
    runs = spark.read.parquet(str(out / "runs")).drop(*COVERAGE_COLUMNS)
    legacy = tmp_path / "legacy"
    runs.write.parquet(str(legacy))
    shutil.rmtree(out / "runs")
    shutil.move(str(legacy), str(out / "runs"))
    write_stalled_run(root / "stalled" / STAMP)
    assert len(ingest(spark, root, out).ingested) == 1
    rows = {r["faults"]: r.asDict() for r in compare(spark, out).collect()}
    test = json.loads((old / "test.json").read_text())
    before = rows["+".join(test["nemesis"]["faults"])]
    assert before["runs"] == 1 and before["acked"] > 0
    assert before["live_share"] is None and before["poor_coverage"] == 0
    assert rows["kill"]["avail_fault"] == 0 and rows["kill"]["poor_coverage"] == 1


def test_faults_come_from_the_history_where_test_json_names_none(spark: Any) -> None:
    """A scenario's script kills and pauses without --nemesis: its row says so."""
    runs = spark.createDataFrame(
        [("scripted", "none"), ("random", "kill"), ("quiet", "none")],
        "run_id string, faults string")
    events = spark.createDataFrame(
        [("scripted", "pause"), ("scripted", "kill"), ("scripted", "start"),
         ("scripted", "kill"), ("random", "start-partition"), ("quiet", "await-state")],
        "run_id string, f string")
    got = {r["run_id"]: r["faults"] for r in with_history_faults(runs, events).collect()}
    assert got == {"scripted": "kill+pause", "random": "kill", "quiet": "none"}
