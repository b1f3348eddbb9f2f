"""``insync serve`` answers every name, and stays responsive under a burst of local connections.

A run directory or file whose name is not UTF-8 (a byte such as 0xff, which
Python keeps as a lone surrogate) must not turn the index into a 500 for every
user: it is listed with U+FFFD in its text, and its link carries its bytes
percent-encoded, so following it reaches that very directory. Idle keep-alive
connections each hold a thread; they are closed after ``IDLE_S`` and the
listen queue is deep, so a burst after many idle connections is still answered.
"""

from __future__ import annotations

import concurrent.futures
import http.client
import os
import re
import socket
from pathlib import Path

from serving import serving

from results.browser.serve import ResultsServer

HISTORY = b'{"type":"invoke","f":"send","process":0,"time":1,"index":0,"value":[["send","x",1]]}\n'


def get(server: ResultsServer, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_names_that_are_not_utf8_are_listed_and_linked_by_their_bytes(tmp_path: Path) -> None:
    root = tmp_path / "results"
    run = Path(os.fsdecode(bytes(root) + b"/t\xff/20260101T000000.000Z"))
    run.mkdir(parents=True)
    (run / "history.jsonl").write_bytes(HISTORY)
    Path(os.fsdecode(bytes(run) + b"/f\xfe.txt")).write_bytes(b"odd\n")
    with serving(root) as srv:
        status, page = get(srv, "/")
        assert status == 200 and "t\ufffd".encode() in page
        assert get(srv, "/api/runs.json")[0] == 200
        assert b'"href": "/runs/t%FF/20260101T000000.000Z"' in get(srv, "/api/runs.json")[1]
        status, listing = get(srv, "/runs/t%FF/20260101T000000.000Z/")
        assert status == 200 and b'href="/runs/t%FF/20260101T000000.000Z/f%FE.txt"' in listing
        assert get(srv, "/runs/t%FF/20260101T000000.000Z/f%FE.txt") == (200, b"odd\n")
        assert get(srv, "/?q=%FF")[0] == 200


def test_a_burst_after_many_idle_connections_is_answered(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    with serving(root) as srv:
        port = srv.server_address[1]
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(200)]
        try:
            with concurrent.futures.ThreadPoolExecutor(50) as pool:
                answers = list(pool.map(lambda _: get(srv, "/api/runs.json")[0], range(200)))
        finally:
            for sock in idle:
                sock.close()
    assert answers == [200] * 200


def test_the_static_rows_link_a_non_utf8_run_by_its_bytes(tmp_path: Path) -> None:
    root = tmp_path / "results"
    run = Path(os.fsdecode(bytes(root) + b"/n\xff/20260101T000000.000Z"))
    run.mkdir(parents=True)
    (run / "history.jsonl").write_bytes(HISTORY)
    (run / "report.html").write_text("<p>r</p>")
    with serving(root) as srv:
        page = get(srv, "/")[1]
        (href,) = re.findall(rb'class="report" href="(/runs/[^"]+)"', page)
        assert href == b"/runs/n%FF/20260101T000000.000Z/report.html"
        assert get(srv, href.decode()) == (200, b"<p>r</p>")
