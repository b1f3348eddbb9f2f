"""``insync serve``: a local web server over the results directory.

Only 127.0.0.1, only files inside the results directory: every path a route
touches (``/runs/`` files and listings, ``/api/op``'s history, the index's
test.json and results.json) is resolved, symlinks included, by
``harness.base.paths.resolve_within`` and refused with 403 unless it stays
under the root, so ``..``, encoded ``%2e%2e`` and symlinks pointing out cannot
leak other files. A symlink loop is 404 and an over-long name 414; every
refusal is one short line with what to do, never a traceback. ``HEAD``
answers as ``GET`` without the body. stdlib ``http.server`` is enough for one
person browsing runs.

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
import os
import shutil
import sys
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness.base.paths import Refused, printable, resolve_within, shown, url_path
from harness.base.rundir import HISTORY, REPORT
from results.browser import runs_index
from results.report import op_lookup
from results.report.template import asset

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
MAX_OPS_PER_REQUEST = 100
#: How long a connection may stay idle before the server closes it (``Handler.timeout``).
IDLE_S = 15
TEXT_TYPES = {".jsonl": "text/plain", ".log": "text/plain", ".out": "text/plain",
              ".properties": "text/plain", ".md": "text/plain"}


def _static_row(run: runs_index.RunInfo) -> str:
    """A plain table row, for clients without JavaScript (the script redraws the table)."""
    anomalies = ", ".join(f"{k} {n}" for k, n in run.anomalies.items()) or "none"
    href = f"{run.href}/{REPORT}"
    link = f'<a class="report" href="{href}">report</a>' if run.has_report else "no report"
    cells = [run.verdict, run.date, run.name, run.kafka, run.acks, run.min_insync, run.unclean,
             ", ".join(run.faults), anomalies, "" if run.ops is None else str(run.ops)]
    return (f'<tr data-path="{html.escape(run.path)}">'
            + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + f"<td>{link}</td></tr>")


def index_page(runs: list[runs_index.RunInfo], query: str, root: Path) -> bytes:
    """The index page: rows matching ``query`` as HTML, and every run as data for the script."""
    data = json.dumps(runs_index.as_json(runs)).replace("<", "\\u003c")
    rows = "".join(_static_row(r) for r in runs if runs_index.matches(r, query))
    page = (asset("index.html").replace("__ROOT__", html.escape(printable(str(root))))
            .replace("__QUERY__", html.escape(query, quote=True)).replace("__ROWS__", rows))
    head, tail = page.split("__DATA__")
    return (head + data + tail).encode()


#: What each reason ``resolve_within`` refuses a path for is answered with.
REFUSED = {"outside": HTTPStatus.FORBIDDEN, "loop": HTTPStatus.NOT_FOUND,
           "too-long": HTTPStatus.REQUEST_URI_TOO_LONG, "invalid": HTTPStatus.BAD_REQUEST,
           "unreadable": HTTPStatus.FORBIDDEN}
#: What to do, after each refusal's reason.
REFUSED_HINT = {"outside": "only files inside the results directory are served",
                "loop": "fix that symlink in the results directory",
                "too-long": "shorten the URL", "invalid": "remove it from the URL",
                "unreadable": "check the file's permissions"}
API_OP_USAGE = f"use /api/op?run=<run path>&index=N, N a line of its {HISTORY}"
#: Largest op index: a line number of a history that fits in a signed 64-bit integer.
MAX_INDEX = 2**63 - 1


class BadRequest(Exception):
    """A request insync answers with ``status`` and a one-line reason (no traceback)."""

    def __init__(self, status: HTTPStatus, why: str) -> None:
        super().__init__(why)
        self.status = status


def safe_path(root: Path, rel: str) -> Path:
    """``root/rel`` with symlinks followed, if it stays inside ``root``; else ``BadRequest``."""
    try:
        return resolve_within(root, rel)
    except Refused as err:
        raise BadRequest(REFUSED[err.reason], f"{err} ({REFUSED_HINT[err.reason]})") from None


def op_indices(params: dict[str, list[str]]) -> list[int]:
    """``/api/op``'s ``index`` values: 1 to ``MAX_OPS_PER_REQUEST`` non-negative integers."""
    raw = params.get("index", [])
    if not raw:
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"index is missing ({API_OP_USAGE})")
    if len(raw) > MAX_OPS_PER_REQUEST:
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"{len(raw)} index values, at most "
                         f"{MAX_OPS_PER_REQUEST} per request (ask in several requests)")
    out = []
    for text in raw:
        if not (text.isascii() and text.isdigit()):
            raise BadRequest(HTTPStatus.BAD_REQUEST, f"index must be a non-negative integer, "
                             f"got {shown(text)!r} ({API_OP_USAGE})")
        if len(text) > 19 or int(text) > MAX_INDEX:
            raise BadRequest(HTTPStatus.BAD_REQUEST, f"index {shown(text)} is larger than "
                             f"any history can be ({API_OP_USAGE})")
        out.append(int(text))
    return out


class Handler(BaseHTTPRequestHandler):
    """Serves one results directory (``server.root``); ``HEAD`` answers as ``GET`` without body."""

    server: ResultsServer
    protocol_version = "HTTP/1.1"
    #: Seconds a connection may sit idle (or trickle a request) before it is closed: each
    #: holds a thread, so idle keep-alive connections must not pile up without end.
    timeout = IDLE_S
    head_only = False
    headers_sent = False

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._answer(head_only=False)

    def do_HEAD(self) -> None:
        self._answer(head_only=True)

    def _answer(self, *, head_only: bool) -> None:
        """Route the request; every failure becomes a status with a one-line reason."""
        self.head_only, self.headers_sent = head_only, False
        try:
            self._route()
        except BadRequest as err:
            self._error(err.status, str(err))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the browser went away: nothing to answer
        except OSError as err:  # a file changed under us between the check and the read
            log.info("%s %s: %s", self.command, self.path[:200], err)
            self._error(HTTPStatus.NOT_FOUND, f"cannot read it: {err.strerror or err} "
                        "(reload the page)")
        except Exception as err:  # a bug in insync: one line in the log, 500 to the browser
            log.error("%s %s failed: %r", self.command, self.path[:200], err)
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"insync failed: {err!r:.200} "
                        "(please report it with the URL)")

    def _route(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        params = urllib.parse.parse_qs(url.query, errors="surrogateescape")
        query = printable(params.get("q", [""])[0])
        # byte for byte: a run directory whose name is not UTF-8 is linked as its bytes
        path = urllib.parse.unquote(url.path, errors="surrogateescape")
        root = self.server.root
        if path in ("/", "/index.html"):
            page = index_page(runs_index.scan(root), query, root)
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", page)
        elif path == "/api/runs.json":
            runs = [r for r in runs_index.scan(root) if runs_index.matches(r, query)]
            self._send(HTTPStatus.OK, "application/json",
                       json.dumps(runs_index.as_json(runs)).encode())
        elif path == "/api/op":
            self._op(params)
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, "image/x-icon", b"")
        elif path.startswith("/runs/"):
            self._file(path[len("/runs/"):])
        else:
            self._error(HTTPStatus.NOT_FOUND, "no such page (the index of all runs is at /)")

    def _file(self, rel: str) -> None:
        target = safe_path(self.server.root, rel)
        if target.is_dir():
            self._listing(target, rel)
        elif not target.is_file():
            self._error(HTTPStatus.NOT_FOUND, "no such file (the index of all runs is at /)")
        else:
            ctype = TEXT_TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0] \
                or "application/octet-stream"
            if ctype.startswith("text/") or ctype in ("application/json",):
                ctype += "; charset=utf-8"
            with target.open("rb") as fh:
                self._headers(HTTPStatus.OK, ctype, os.fstat(fh.fileno()).st_size)
                if not self.head_only:
                    shutil.copyfileobj(fh, self.wfile)

    def _op(self, params: dict[str, list[str]]) -> None:
        """Whole ops of a run's history by index: ``?run=<run path>&index=N[&index=M...]``."""
        run = params.get("run", [""])[0].strip("/")
        if not run:
            raise BadRequest(HTTPStatus.BAD_REQUEST, f"run is missing ({API_OP_USAGE})")
        indices = op_indices(params)
        safe_path(self.server.root, run)
        # the history itself is resolved too: a symlinked history must not leave the root
        history = safe_path(self.server.root, f"{run}/{HISTORY}")
        if not history.is_file():
            raise BadRequest(HTTPStatus.NOT_FOUND,
                             f"no {HISTORY} in that run (the index at / lists the runs)")
        found = op_lookup.lookup(history, indices)
        self._send(HTTPStatus.OK, "application/json",
                   json.dumps({str(i): ops for i, ops in found.items()}).encode())

    def _listing(self, target: Path, rel: str) -> None:
        """A directory's entries, without those that lead out of the root or nowhere."""
        base = "/runs/" + url_path(rel.strip("/")) + "/"
        entries = []
        for p in target.iterdir():
            try:
                real = safe_path(self.server.root, str(p.relative_to(self.server.root)))
            except BadRequest:
                continue
            entries.append((p.name, real.is_dir()))
        entries.sort(key=lambda e: (not e[1], e[0]))
        rows = "".join(
            f'<li><a href="{base}{url_path(name)}{"/" if is_dir else ""}">'
            f'{html.escape(printable(name))}{"/" if is_dir else ""}</a></li>'
            for name, is_dir in entries)
        title = html.escape(printable(rel))
        body = (f"<!doctype html><meta charset=utf-8><title>{title}</title>"
                f'<p><a href="/">all runs</a></p><h1>{title}</h1><ul>{rows}</ul>')
        self._send(HTTPStatus.OK, "text/html; charset=utf-8", body.encode())

    def _error(self, status: HTTPStatus, why: str) -> None:
        if self.headers_sent:  # mid-body: the only honest signal left is to hang up
            self.close_connection = True
            return
        self._send(status, "text/plain; charset=utf-8", f"{status.value} {why}\n".encode())

    def _headers(self, status: HTTPStatus, ctype: str, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.headers_sent = True

    def _send(self, status: HTTPStatus, ctype: str, body: bytes) -> None:
        self._headers(status, ctype, len(body))
        if not self.head_only:
            self.wfile.write(body)


class ResultsServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 that knows its results directory."""

    daemon_threads = True
    #: Connections the kernel queues before ``accept``: a burst of page loads (a report
    #: pulls a few files at once, several people at once) must not be dropped at 5.
    request_queue_size = 1024

    def __init__(self, root: Path, port: int) -> None:
        self.root = root.resolve()
        super().__init__((HOST, port), Handler)

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        """One log line, not socketserver's traceback on stderr (a handler's own errors
        are answered in ``Handler._answer``; this is only the connection failing)."""
        err = sys.exc_info()[1]
        log.info("connection from %s failed: %r", client_address[0], err)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"


def make_server(root: Path, port: int = 8080) -> ResultsServer:
    """A server bound to 127.0.0.1:``port`` (0: any free port); call ``serve_forever``."""
    return ResultsServer(root, port)
