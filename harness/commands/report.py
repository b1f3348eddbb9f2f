"""``insync report RUN_DIR``: (re)generate a run directory's report.html and PNG plots.

Works on any directory holding a ``history.jsonl``: a run of ours, or a bare
history (the verdict is computed when ``results.json`` is missing).
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "report",
        help="write a run's report.html and PNG plots",
        description="Write report.html (timeline, latency, throughput, anomaly panels, "
        "configuration) and timeline/latency/throughput PNGs into RUN_DIR. RUN_DIR needs "
        "history.jsonl; results.json is used when present, computed otherwise.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (or its history.jsonl)")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from harness.base.rundir import RunDir
    from results.report import write_report

    run = RunDir.open(args.run_dir)  # one line saying so when it is not a run
    started = time.monotonic()
    path = write_report(run.path)
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB, {time.monotonic() - started:.1f} s)")
    return 0
