"""``insync serve``: a local web server over the results directory.

Only 127.0.0.1, only files inside the results directory: a request path is
resolved (symlinks included) and refused with 403 unless it stays under the
root, so ``..``, encoded ``%2e%2e`` and symlinks pointing out cannot leak
other files. stdlib ``http.server`` is enough for one person browsing runs.

Routes::

    /                     the index: every run, sortable and filterable (?q=words)
    /api/runs.json?q=     the same rows as JSON
    /api/op?run=&index=   whole ops of a run's history, for big reports' on-demand detail
    /runs/<path>          a file of the results directory (reports, histories, node logs)
"""

from __future__ import annotations

import html
import json
import logging
import mimetypes
import shutil
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from results import op_lookup, runs_index
from results.report_template import asset

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
MAX_OPS_PER_REQUEST = 100
TEXT_TYPES = {".jsonl": "text/plain", ".log": "text/plain", ".out": "text/plain",
              ".properties": "text/plain", ".md": "text/plain"}


def _static_row(run: runs_index.RunInfo) -> str:
    """A plain table row, for clients without JavaScript (the script redraws the table)."""
    anomalies = ", ".join(f"{k} {n}" for k, n in run.anomalies.items()) or "none"
    link = (f'<a class="report" href="/runs/{urllib.parse.quote(run.path)}/report.html">report</a>'
            if run.has_report else "no report")
    cells = [run.verdict, run.date, run.name, run.kafka, run.acks, run.min_insync, run.unclean,
             ", ".join(run.faults), anomalies, "" if run.ops is None else str(run.ops)]
    return (f'<tr data-path="{html.escape(run.path)}">'
            + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + f"<td>{link}</td></tr>")


def index_page(runs: list[runs_index.RunInfo], query: str, root: Path) -> bytes:
    """The index page: rows matching ``query`` as HTML, and every run as data for the script."""
    data = json.dumps(runs_index.as_json(runs)).replace("<", "\\u003c")
    rows = "".join(_static_row(r) for r in runs if runs_index.matches(r, query))
    page = (asset("index.html").replace("__ROOT__", html.escape(str(root)))
            .replace("__QUERY__", html.escape(query, quote=True)).replace("__ROWS__", rows))
    head, tail = page.split("__DATA__")
    return (head + data + tail).encode()


def safe_path(root: Path, rel: str) -> Path | None:
    """``root/rel`` if it exists and resolves inside ``root``; None otherwise."""
    if "\0" in rel:
        return None
    base = root.resolve()
    target = (base / rel.lstrip("/")).resolve()
    if target != base and base not in target.parents:
        return None
    return target


class Handler(BaseHTTPRequestHandler):
    """Serves one results directory (``server.root``)."""

    server: ResultsServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query).get("q", [""])[0]
        path = urllib.parse.unquote(url.path)
        root = self.server.root
        if path in ("/", "/index.html"):
            page = index_page(runs_index.scan(root), query, root)
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", page)
        elif path == "/api/runs.json":
            runs = [r for r in runs_index.scan(root) if runs_index.matches(r, query)]
            self._send(HTTPStatus.OK, "application/json",
                       json.dumps(runs_index.as_json(runs)).encode())
        elif path == "/api/op":
            self._op(urllib.parse.parse_qs(url.query))
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, "image/x-icon", b"")
        elif path.startswith("/runs/"):
            self._file(path[len("/runs/"):])
        else:
            self._error(HTTPStatus.NOT_FOUND, "no such page")

    def _file(self, rel: str) -> None:
        target = safe_path(self.server.root, rel)
        if target is None:
            self._error(HTTPStatus.FORBIDDEN, "outside the results directory")
        elif target.is_dir():
            self._listing(target, rel)
        elif not target.is_file():
            self._error(HTTPStatus.NOT_FOUND, "no such file")
        else:
            ctype = TEXT_TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0] \
                or "application/octet-stream"
            if ctype.startswith("text/") or ctype in ("application/json",):
                ctype += "; charset=utf-8"
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(target.stat().st_size))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            with target.open("rb") as fh:
                shutil.copyfileobj(fh, self.wfile)

    def _op(self, params: dict[str, list[str]]) -> None:
        """Whole ops of a run's history by index: ``?run=<run path>&index=N[&index=M...]``."""
        run = safe_path(self.server.root, params.get("run", [""])[0])
        try:
            indices = [int(i) for i in params.get("index", [])][:MAX_OPS_PER_REQUEST]
        except ValueError:
            self._error(HTTPStatus.BAD_REQUEST, "index must be an integer")
            return
        if run is None:
            self._error(HTTPStatus.FORBIDDEN, "outside the results directory")
        elif not (run / "history.jsonl").is_file():
            self._error(HTTPStatus.NOT_FOUND, "no history.jsonl in that run")
        else:
            found = op_lookup.lookup(run / "history.jsonl", indices)
            self._send(HTTPStatus.OK, "application/json",
                       json.dumps({str(i): ops for i, ops in found.items()}).encode())

    def _listing(self, target: Path, rel: str) -> None:
        base = "/runs/" + urllib.parse.quote(rel.strip("/")) + "/"
        items = sorted(target.iterdir(), key=lambda p: (not p.is_dir(), p.name))
        rows = "".join(
            f'<li><a href="{base}{urllib.parse.quote(p.name)}{"/" if p.is_dir() else ""}">'
            f'{html.escape(p.name)}{"/" if p.is_dir() else ""}</a></li>' for p in items)
        body = (f"<!doctype html><meta charset=utf-8><title>{html.escape(rel)}</title>"
                f'<p><a href="/">all runs</a></p><h1>{html.escape(rel)}</h1><ul>{rows}</ul>')
        self._send(HTTPStatus.OK, "text/html; charset=utf-8", body.encode())

    def _error(self, status: HTTPStatus, why: str) -> None:
        self._send(status, "text/plain; charset=utf-8", f"{status.value} {why}\n".encode())

    def _send(self, status: HTTPStatus, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


class ResultsServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 that knows its results directory."""

    daemon_threads = True

    def __init__(self, root: Path, port: int) -> None:
        self.root = root.resolve()
        super().__init__((HOST, port), Handler)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"


def make_server(root: Path, port: int = 8080) -> ResultsServer:
    """A server bound to 127.0.0.1:``port`` (0: any free port); call ``serve_forever``."""
    return ResultsServer(root, port)
