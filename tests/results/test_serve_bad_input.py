"""``insync serve`` on hostile paths and bad queries: refused with a status, never a traceback.

A run directory may hold symlinks that lead out of the results directory
(``history.jsonl -> /etc/shadow``), symlink loops, and names too long for
the file system. Every route must refuse to follow a path out (403), answer a
loop with 404 and an over-long name with 414, and log no traceback.
"""

from __future__ import annotations

import http.client
import json
import logging
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from serving import serving

from results.browser.serve import ResultsServer

RUN = "queue/20261121T031501.123Z"
SECRET = {"name": "do-not-serve", "valid": False, "workload": {"acks": "secret-acks"}}


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory, valid_run_template: Path) -> Path:
    """One real run, and runs whose files are symlinks out of the root, loops and so on.

    Shared by the module (no test writes to it), as is the server.
    """
    tmp_path = tmp_path_factory.mktemp("serve")
    root = tmp_path / "results"
    shutil.copytree(valid_run_template, root / RUN)
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("history.jsonl", "test.json", "results.json", "report.html"):
        (outside / name).write_text(json.dumps(SECRET) + "\n")
    links = root / "links" / "20261121T031501.123Z"
    links.mkdir(parents=True)
    for name in ("history.jsonl", "test.json", "results.json", "report.html"):
        (links / name).symlink_to(outside / name)
    (root / "linked-run").symlink_to(outside)  # a whole run directory pointing out
    (root / "loop").symlink_to("loop")
    (root / RUN / "loop").symlink_to("loop")
    return root


@pytest.fixture(scope="module")
def server(results_dir: Path) -> Iterator[ResultsServer]:
    with serving(results_dir) as srv:
        yield srv


def request(server: ResultsServer, path: str, method: str = "GET",
            ) -> tuple[int, dict[str, str], bytes]:
    """A raw request: the path goes on the wire exactly as given."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.fixture(autouse=True)
def no_traceback(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str],
                 ) -> Iterator[None]:
    """Whatever a test asks, neither the log nor stderr may show a traceback."""
    caplog.set_level(logging.DEBUG)
    yield
    assert "Traceback" not in caplog.text
    assert "Traceback" not in capfd.readouterr().err


LEAKS = [
    "/runs/links/20261121T031501.123Z/history.jsonl",
    "/runs/links/20261121T031501.123Z/test.json",
    "/runs/links/20261121T031501.123Z/report.html",
    "/runs/linked-run/history.jsonl",
    "/runs/linked-run/",
    "/api/op?run=links/20261121T031501.123Z&index=0",
    "/api/op?run=linked-run&index=0",
    "/api/op?run=../outside&index=0",
    "/api/op?run=%2e%2e/outside&index=0",
]


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("path", LEAKS, ids=["runs-history", "runs-test-json", "runs-report",
                                             "runs-linked-dir-file", "runs-linked-dir-listing",
                                             "api-op-linked-history", "api-op-linked-run",
                                             "api-op-dotdot", "api-op-encoded-dotdot"])
def test_symlinks_out_of_the_root_are_forbidden(server: ResultsServer, path: str,
                                                method: str) -> None:
    status, _, body = request(server, path, method)
    assert status == 403
    assert b"do-not-serve" not in body


def test_index_and_listings_do_not_read_through_links_out(server: ResultsServer) -> None:
    for path in ("/", "/api/runs.json", "/runs/links/20261121T031501.123Z/"):
        status, _, body = request(server, path)
        assert status == 200
        assert b"do-not-serve" not in body and b"secret-acks" not in body
    _, _, body = request(server, "/runs/links/20261121T031501.123Z/")
    assert b"history.jsonl" not in body  # no link to a page that would be refused
    runs = {r["path"]: r for r in json.loads(request(server, "/api/runs.json")[2])}
    assert runs["links/20261121T031501.123Z"]["verdict"] == "unreadable"


@pytest.mark.parametrize(("path", "status"), [
    ("/runs/loop", 404),
    ("/runs/loop/history.jsonl", 404),
    (f"/runs/{RUN}/loop", 404),
    ("/api/op?run=loop&index=0", 404),
    ("/runs/" + "a" * 300, 414),
    (f"/runs/{RUN}/" + "b" * 256, 414),
    ("/runs/" + "a/" * 2100, 414),
    ("/api/op?run=" + "a" * 300 + "&index=0", 414),
    ("/runs/" + "x" * 70_000, 414),
    ("/runs/%00", 400),
], ids=["loop", "under-a-loop", "loop-in-a-run", "api-op-loop", "long-name", "long-name-in-run",
        "long-path", "api-op-long-run", "long-uri", "nul"])
def test_loops_and_over_long_names(server: ResultsServer, path: str, status: int) -> None:
    got, headers, body = request(server, path)
    assert got == status
    assert int(headers["content-length"]) == len(body) > 0
    if status != 414 or len(path) < 65_000:  # http.server answers the over-long URI itself
        assert body.decode().count("\n") == 1 and body.decode().rstrip().endswith(")")


@pytest.mark.parametrize(("query", "why"), [
    ("", "run is missing"),
    (f"run={RUN}", "index is missing"),
    (f"run={RUN}&index=", "index is missing"),
    (f"run={RUN}&index=x", "non-negative integer"),
    (f"run={RUN}&index=1.5", "non-negative integer"),
    (f"run={RUN}&index=-1", "non-negative integer"),
    (f"run={RUN}&index=+1", "non-negative integer"),
    (f"run={RUN}&index=%EF%BC%91", "non-negative integer"),  # a full-width digit one
    (f"run={RUN}&index=9223372036854775808", "larger than any history"),
    (f"run={RUN}&index=" + "9" * 5000, "larger than any history"),
    (f"run={RUN}" + "&index=1" * 101, "at most 100"),
], ids=["nothing", "no-index", "empty-index", "word", "float", "negative", "plus-sign",
        "full-width-digit", "beyond-int64", "5000-digits", "too-many"])
def test_bad_api_op_queries_get_400_with_a_reason(server: ResultsServer, query: str,
                                                  why: str) -> None:
    status, _, body = request(server, "/api/op?" + query)
    assert status == 400
    text = body.decode()
    assert why in text and text.count("\n") == 1 and text.rstrip().endswith(")")


def test_api_op_answers_a_good_query(server: ResultsServer, results_dir: Path) -> None:
    first = json.loads((results_dir / RUN / "history.jsonl").read_text().splitlines()[0])
    status, _, body = request(server, f"/api/op?run={RUN}&index=0&index=99999999")
    assert status == 200 and json.loads(body) == {"0": {"invoke": first}}


@pytest.mark.parametrize("path", [
    "/", "/index.html", "/?q=partition", "/api/runs.json", "/api/runs.json?q=x",
    f"/api/op?run={RUN}&index=0", "/favicon.ico", f"/runs/{RUN}/history.jsonl",
    f"/runs/{RUN}/test.json", f"/runs/{RUN}/", "/runs/", "/runs/nope", "/nope",
    "/api/op?run=nope&index=0", "/runs/linked-run/",
])
def test_head_answers_as_get_without_a_body(server: ResultsServer, path: str) -> None:
    get_status, get_headers, get_body = request(server, path)
    head_status, head_headers, head_body = request(server, path, "HEAD")
    assert head_status == get_status
    assert head_body == b""
    for name in ("content-type", "content-length", "cache-control"):
        assert head_headers.get(name) == get_headers.get(name)
    assert int(head_headers["content-length"]) == len(get_body)


@pytest.mark.parametrize(("make", "what"), [
    (lambda tmp: [str(tmp / "missing")], "does not exist"),
    (lambda tmp: [str(tmp / "file.txt")], "is a file, not a directory"),
    (lambda tmp: [str(tmp / "file.txt" / "x")], "parent of it is not a directory"),
    (lambda tmp: [str(tmp / ("r" * 300))], "too long"),
    (lambda tmp: [str(tmp / "loop")], "symlink loop"),
    (lambda tmp: [str(tmp), "--port", "70000"], "is not a TCP port"),
    (lambda tmp: [str(tmp), "--port", "-1"], "is not a TCP port"),
], ids=["missing", "a-file", "under-a-file", "name-too-long", "symlink-loop", "port-too-big",
        "port-negative"])
def test_serve_command_refuses_bad_arguments(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                             make: Callable[[Path], list[str]],
                                             what: str) -> None:
    from harness.cli import main

    (tmp_path / "file.txt").write_text("")
    (tmp_path / "loop").symlink_to("loop")
    dir_and_more = make(tmp_path)
    assert main(["serve", "--results-dir", *dir_and_more]) == 64
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith("insync: ") and err.rstrip().endswith(")")
    assert what in err
