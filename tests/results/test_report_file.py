"""write_report: a self-contained page whose embedded data matches the history and verdict."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from checkers import check_file
from harness.cli import main
from results.report import data as report_data
from results.report.history_table import read_table
from results.report.write import PNG_NAMES, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def payload(report: Path) -> dict[str, Any]:
    text = report.read_text()
    m = re.search(r'<script id="insync-data" type="application/json">(.*?)</script>', text, re.S)
    assert m, "no embedded data"
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def columns(data: dict[str, Any]) -> dict[str, np.ndarray[Any, Any]]:
    raw = gzip.decompress(base64.b64decode(data["columns"]))
    kinds = {"f64": "<f8", "f32": "<f4", "i32": "<i4", "u16": "<u2", "u8": "u1"}
    return {name: np.frombuffer(raw, dtype=kinds[kind], count=n, offset=off)
            for name, kind, off, n in data["layout"]}


def test_report_is_self_contained_with_pngs(invalid_run: Path) -> None:
    path = write_report(invalid_run)
    assert path == invalid_run / "report.html"
    html = path.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "external resource"
    assert "<script src" not in html and "<link" not in html
    for name in PNG_NAMES:
        png = (invalid_run / name).read_bytes()
        assert png.startswith(PNG_MAGIC) and len(png) > 10_000


def test_embedded_ops_are_the_history_ops(invalid_run: Path) -> None:
    data = payload(write_report(invalid_run, pngs=False))
    table = read_table(invalid_run / "history.jsonl")
    cols = columns(data)
    assert data["ops_total"] == data["ops_drawn"] == len(table)
    order = np.argsort(cols["index"])
    assert cols["index"][order].tolist() == table.index.tolist()
    assert cols["type"][order].tolist() == table.type.tolist()
    lat_ms = (table.end - table.start) / 1e6
    assert np.allclose(cols["lat"][order], lat_ms, rtol=1e-6)
    assert np.all(np.diff(cols["start"]) >= 0)  # the page binary-searches by start time
    assert len(data["details"]) == len(table)  # small run: every op's value is embedded


def test_anomaly_panels_match_the_verdict_with_offset_grids(invalid_run: Path) -> None:
    verdict = check_file(invalid_run)
    data = payload(write_report(invalid_run, pngs=False))
    panels = {p["type"]: p for p in data["anomalies"]}
    assert list(panels) == verdict["anomaly-types"]
    for kind in ("lost-write", "duplicate", "inconsistent-offsets", "G1a"):
        assert panels[kind]["bad"] and panels[kind]["count"] == verdict["anomaly-counts"][kind]
    dup = verdict["anomalies"]["duplicate"][0]
    grid = panels["duplicate"]["examples"][0]["grid"]
    assert grid["multi_offset_values"] == [dup["value"]]
    assert set(dup["offsets"]) <= set(grid["offsets"])
    inc = verdict["anomalies"]["inconsistent-offsets"][0]
    grid = panels["inconsistent-offsets"]["examples"][0]["grid"]
    assert grid["multi_value_offsets"] == [inc["offset"]]
    lost = verdict["anomalies"]["lost-write"][0]
    example = panels["lost-write"]["examples"][0]
    assert lost["value"] in example["grid"]["never_read"]
    assert example["ops"][:2] == [lost["writer"], lost["max-read"]]
    assert str(lost["value"]) in example["text"]
    g1a = verdict["anomalies"]["G1a"][0]
    assert panels["G1a"]["examples"][0]["ops"] == [g1a["writer"], g1a["reader"]]


def test_fault_bands_and_series_are_embedded(invalid_run: Path) -> None:
    data = payload(write_report(invalid_run, pngs=False))
    assert len(data["bands"]) > 4
    assert {b["kind"] for b in data["bands"]} == {"partition", "kill", "pause", "clock-bump"}
    q = data["quantiles"]
    assert len(q["v"]) == 4 and all(len(s) == len(q["t"]) for s in q["v"])
    ok, fail, info = data["throughput"]["v"]
    stats = check_file(invalid_run)["stats"]
    bucket_s = data["bucket_ms"] / 1000
    assert round(sum(ok) * bucket_s) == stats["ok"]
    assert round(sum(fail) * bucket_s) == stats["fail"]
    assert round(sum(info) * bucket_s) == stats["info"]
    assert data["command"].startswith("insync run ")


def test_big_runs_are_downsampled_but_keep_every_anomaly_op(
    invalid_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report_data, "MAX_DRAWN", 500)
    monkeypatch.setattr(report_data, "DETAIL_ALL", 100)
    data = payload(write_report(invalid_run, pngs=False))
    cols = columns(data)
    drawn = set(cols["index"].tolist())
    assert data["ops_drawn"] == len(drawn) < data["ops_total"]
    stats = check_file(invalid_run)["stats"]
    per_type = np.bincount(cols["type"], minlength=3) * np.array(data["type_weights"])
    assert per_type.round().tolist() == [stats["ok"], stats["fail"], stats["info"]]
    proof = {i for p in data["anomalies"] for e in p["examples"] for i in e["ops"]}
    assert proof and proof <= drawn
    assert proof <= {int(i) for i in data["details"]}
    assert len(data["details"]) < data["ops_total"]


def test_bare_history_gets_a_computed_verdict(invalid_run: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(invalid_run / "history.jsonl", bare)
    data = payload(write_report(bare, pngs=False))
    assert data["verdict"]["valid"] is False and data["test"] is None
    assert data["command"] is None


def test_results_json_is_used_when_present(valid_run: Path) -> None:
    verdict = check_file(valid_run)
    assert verdict["valid"] is True
    verdict.update({"valid": "unknown", "error": "cycle search ran out of time",
                    "run": {"duration_s": 12.5}})
    (valid_run / "results.json").write_text(json.dumps(verdict))
    data = payload(write_report(valid_run, pngs=False))
    assert data["verdict"]["valid"] == "unknown"
    assert data["verdict"]["run"] == {"duration_s": 12.5}


def test_insync_report_command(valid_run: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(valid_run / "history.jsonl")]) == 0
    assert str(valid_run / "report.html") in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 64
    assert "has no history.jsonl" in capsys.readouterr().err


def test_a_history_without_client_ops_still_gets_a_report(tmp_path: Path) -> None:
    lines = [{"index": 0, "time": 0, "process": "nemesis", "type": "info",
              "f": "start-partition", "value": None},
             {"index": 1, "time": 5_000_000, "process": "nemesis", "type": "info",
              "f": "stop-partition", "value": None}]
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(op) + "\n" for op in lines))
    data = payload(write_report(tmp_path))
    assert data["verdict"]["valid"] == "unknown" and data["ops_total"] == 0
    assert [(b["kind"], b["start"], b["stop"]) for b in data["bands"]] == [("partition", 0, 5)]
    assert all((tmp_path / name).is_file() for name in PNG_NAMES)


def test_history_text_cannot_break_out_of_the_page(valid_run: Path) -> None:
    """Errors and names are data: a ``</script>`` in them must not end the script element."""
    evil = "<!--<script></script><script>alert(1)</script>"
    lines = (valid_run / "history.jsonl").read_text().splitlines()
    ops = [json.loads(line) for line in lines]
    victim = next(op for op in ops if op["type"] == "fail")
    victim["error"] = evil
    (valid_run / "history.jsonl").write_text("".join(json.dumps(op) + "\n" for op in ops))
    test = json.loads((valid_run / "test.json").read_text())
    test["name"] = evil
    (valid_run / "test.json").write_text(json.dumps(test))
    html = write_report(valid_run, pngs=False).read_text()
    assert html.count("<script") == 2 and html.count("</script>") == 2
    data = payload(valid_run / "report.html")
    assert evil in data["errors"] and data["name"] == evil
    assert "<title>insync report: &lt;!--&lt;script&gt;" in html
