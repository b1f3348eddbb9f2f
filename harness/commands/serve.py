"""``insync serve``: browse stored runs and their reports at http://127.0.0.1:PORT/.

Listens on 127.0.0.1 only and serves files only from inside the results
directory (see ``results.browser.serve``). Stops on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.base.errors import EnvironmentProblem, UsageError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="browse stored runs and reports in a local web server",
        description="Serve an index of every run under the results directory (verdict, date, "
        "Kafka version, acks, min.insync, unclean election, faults, anomaly counts; sortable "
        "and filterable) with links to reports and raw files. Listens on 127.0.0.1 only.",
    )
    parser.add_argument("--port", type=int, default=8080, help="TCP port (default 8080; 0: any)")
    parser.add_argument("--results-dir", default="results", metavar="DIR",
                        help="the results directory (default ./results)")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from harness.base.paths import existing_dir
    from results.browser import make_server

    root = existing_dir(Path(args.results_dir), label="--results-dir ",
                        hint="pass --results-dir the directory holding the runs")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a TCP port", hint="use 0..65535")
    try:
        server = make_server(root, args.port)
    except OSError as err:
        raise EnvironmentProblem(f"cannot listen on 127.0.0.1:{args.port}: {err.strerror}",
                                 hint="pick another --port, or 0 for any free one") from err
    print(f"insync: serving {root.resolve()} at {server.url} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("insync: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
