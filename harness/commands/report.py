"""``insync report RUN_DIR``: (re)generate a run directory's report.html and PNG plots.

Works on any directory holding a ``history.jsonl``: a run of ours, or a bare
history (the verdict is computed when ``results.json`` is missing).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
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
    from results.report import write_report
    from results.run_files import existing_dir

    run_dir = Path(args.run_dir)
    if run_dir.name == "history.jsonl":
        run_dir = run_dir.parent
    existing_dir(run_dir, hint="give a run directory, one holding history.jsonl")
    started = time.monotonic()
    path = write_report(run_dir)
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB, {time.monotonic() - started:.1f} s)")
    return 0
