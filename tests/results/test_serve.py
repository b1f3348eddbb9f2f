"""``insync serve``: the index lists and filters runs, serves reports, refuses to leave its root."""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from ctrl_c import with_default_sigint
from serving import serving

from checkers import check_file
from results.browser.serve import ResultsServer
from results.report.write import write_report

BAD_TS, GOOD_TS = "20261121T031501.123Z", "20261121T041501.123Z"


@pytest.fixture
def results_dir(tmp_path: Path, invalid_run_template: Path, valid_run_template: Path) -> Path:
    """Two stored runs (one checked and reported, one bare), a ``latest`` link, a secret."""
    root = tmp_path / "results"
    bad = Path(shutil.copytree(invalid_run_template, root / "queue-acks-1" / BAD_TS))
    good = Path(shutil.copytree(valid_run_template, root / "queue-acks-all" / GOOD_TS))
    (bad / "results.json").write_text(json.dumps(check_file(bad)))
    test = json.loads((bad / "test.json").read_text())
    test["workload"]["acks"] = 1
    test["cluster"]["kafka_version_exact"] = "3.9.1"
    (bad / "test.json").write_text(json.dumps(test))
    write_report(bad, pngs=False)
    (good / "nodes" / "n1").mkdir(parents=True)
    (good / "nodes" / "n1" / "server.log").write_text("started\n")
    (root / "latest").symlink_to(good.relative_to(root))
    (tmp_path / "secret.txt").write_text("do not serve")
    (good / "escape").symlink_to(tmp_path / "secret.txt")
    return root


@pytest.fixture
def server(results_dir: Path) -> Iterator[ResultsServer]:
    with serving(results_dir) as srv:
        yield srv


def get(server: ResultsServer, path: str) -> tuple[int, bytes, str]:
    """A raw GET: the path goes on the wire exactly as given (no client-side normalising)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read(), resp.getheader("Content-Type", "")
    finally:
        conn.close()


def static_rows(page: bytes) -> list[str]:
    """run paths of the table rows the server rendered (before any script runs)."""
    body = page.decode().split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return sorted(p.split('"')[0] for p in body.split('<tr data-path="')[1:])


def test_listens_on_loopback_only(server: ResultsServer) -> None:
    assert server.server_address[0] == "127.0.0.1"


def test_index_lists_every_run_with_its_settings(server: ResultsServer) -> None:
    status, body, ctype = get(server, "/")
    assert status == 200 and ctype.startswith("text/html")
    assert len(static_rows(body)) == 2  # `latest` is a link to a run, not a run
    status, body, _ = get(server, "/api/runs.json")
    runs = {r["path"]: r for r in json.loads(body)}
    bad = runs["queue-acks-1/20261121T031501.123Z"]
    assert (bad["verdict"], bad["acks"], bad["kafka"], bad["has_report"]) == (
        "invalid", "1", "3.9.1", True)
    assert bad["anomalies"]["lost-write"] == 1
    assert bad["faults"] == ["partition", "kill", "pause", "clock"]
    good = runs["queue-acks-all/20261121T041501.123Z"]
    assert (good["verdict"], good["acks"], good["min_insync"], good["unclean"]) == (
        "unchecked", "all", "2", "off")
    assert bad["date"] == good["date"] == "2026-11-21T03:15:01.123Z"  # test.json's "started"


@pytest.mark.parametrize(("query", "expected"), [
    ("invalid", ["queue-acks-1/20261121T031501.123Z"]),
    ("acks=all", ["queue-acks-all/20261121T041501.123Z"]),
    ("kafka 3.9 lost-write", ["queue-acks-1/20261121T031501.123Z"]),
    ("partition", ["queue-acks-1/20261121T031501.123Z", "queue-acks-all/20261121T041501.123Z"]),
    ("nosuchthing", []),
], ids=["verdict", "setting", "version-and-anomaly", "fault", "none"])
def test_filter(server: ResultsServer, query: str, expected: list[str]) -> None:
    _, body, _ = get(server, "/api/runs.json?q=" + query.replace(" ", "+"))
    assert sorted(r["path"] for r in json.loads(body)) == expected
    _, page, _ = get(server, "/?q=" + query.replace(" ", "+"))
    assert static_rows(page) == expected


def test_serves_reports_and_raw_files(server: ResultsServer, results_dir: Path) -> None:
    run = "queue-acks-1/20261121T031501.123Z"
    status, body, ctype = get(server, f"/runs/{run}/report.html")
    assert status == 200 and ctype.startswith("text/html")
    assert body == (results_dir / run / "report.html").read_bytes()
    status, body, ctype = get(server, f"/runs/{run}/history.jsonl")
    assert status == 200 and ctype.startswith("text/plain")
    assert body == (results_dir / run / "history.jsonl").read_bytes()
    status, body, _ = get(server, "/runs/latest/nodes/n1/server.log")
    assert (status, body) == (200, b"started\n")
    status, body, _ = get(server, "/runs/latest/nodes/")
    assert status == 200 and b'href="/runs/latest/nodes/n1/"' in body
    assert get(server, f"/runs/{run}/nope.txt")[0] == 404


@pytest.mark.parametrize("path", [
    "/runs/../secret.txt",
    "/runs/%2e%2e/secret.txt",
    "/runs/queue-acks-1/../../secret.txt",
    "/runs/latest/escape",
    "/runs//etc/passwd",
    "/runs/%2Fetc%2Fpasswd",
], ids=["dotdot", "encoded", "nested", "symlink-out", "absolute", "encoded-absolute"])
def test_path_traversal_is_refused(server: ResultsServer, path: str) -> None:
    status, body, _ = get(server, path)
    assert status in (403, 404)
    assert b"do not serve" not in body and b"root:" not in body


def test_insync_serve_command_refuses_a_missing_dir(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    assert main(["serve", "--results-dir", str(tmp_path / "missing"), "--port", "0"]) == 64
    assert "does not exist" in capsys.readouterr().err


def test_insync_serve_command_serves_until_interrupted(results_dir: Path) -> None:
    """The real command: prints its URL, answers on loopback, exits 0 on Ctrl-C."""
    proc = subprocess.Popen(
        with_default_sigint([sys.executable, "-m", "harness", "serve", "--port", "0",
                             "--results-dir", str(results_dir)]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "api/runs.json?q=invalid", timeout=10) as resp:
            assert [r["verdict"] for r in json.loads(resp.read())] == ["invalid"]
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_api_op_returns_whole_ops_with_their_invokes(server: ResultsServer,
                                                     results_dir: Path) -> None:
    run = "queue-acks-1/20261121T031501.123Z"
    lines = (results_dir / run / "history.jsonl").read_text().splitlines()
    ops = [json.loads(line) for line in lines]
    done = next(op for op in ops[100:] if op["type"] == "fail" and op["process"] != "nemesis")
    invoke = max((op for op in ops[:done["index"]] if op["process"] == done["process"]),
                 key=lambda op: op["index"])
    status, body, _ = get(server, f"/api/op?run={run}&index={done['index']}&index=0"
                                  f"&index={len(lines)}")
    assert status == 200
    got = json.loads(body)
    assert got == {str(done["index"]): {"completion": done, "invoke": invoke},
                   "0": {"invoke": ops[0]}}
    assert invoke["type"] == "invoke"
    assert get(server, "/api/op?run=../..&index=1")[0] == 403
    assert get(server, f"/api/op?run={run}&index=x")[0] == 400


def test_run_names_cannot_break_out_of_the_index(tmp_path: Path) -> None:
    run = tmp_path / "evil" / "20261121T031501.123Z"
    run.mkdir(parents=True)
    (run / "test.json").write_text(json.dumps({"name": "<!--<script></script>x"}))
    with serving(tmp_path) as srv:
        status, body, _ = get(srv, "/")
    page = body.decode()
    assert status == 200 and page.count("<script") == 2 and page.count("</script>") == 2
    assert "&lt;!--&lt;script&gt;&lt;/script&gt;x" in page  # the server-rendered row
