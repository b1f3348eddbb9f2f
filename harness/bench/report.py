"""``insync bench report``: how long a report takes to write, how big it is, how fast it opens.

For each size N (history lines) it simulates a run (``harness.bench._synth``: faults,
fail/info ops, transactions, one of each injectable anomaly), checks it and
writes results.json as the runner would, then times ``write_report`` (page only,
then page + PNGs), and opens the page in headless chromium three times,
reading the page's own "rendered" mark: ``performance.now()`` when the last
plot is drawn, i.e. milliseconds since navigation start. Targets at 1M ops:
report.html < 20 MB, rendered in < 5 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

HELP = "report.html generation time and size, and browser load time, at 100k and 1M ops"
DEFAULT_SIZES = (100_000, 1_000_000)
TARGET_BYTES = 20 * 10**6
TARGET_LOAD_S = 5.0
LOADS = 3
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")],
                        default=list(DEFAULT_SIZES), help="history lines, comma-separated")
    parser.add_argument("--keep", metavar="DIR", help="write the runs here and keep them")
    parser.add_argument("--no-browser", action="store_true", help="skip the load-time test")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="browser executable")


def load_times(report: Path, chromium: str, phases: list[dict[str, int]],
               runs: int = LOADS) -> list[float]:
    """Seconds from navigation start to the page's rendered mark, one fresh page per run.

    ``phases`` receives each load's marks (ms since navigation start): JSON parsed,
    columns decoded, indexes built, static sections built, plots drawn.
    """
    from playwright.sync_api import sync_playwright

    out = []
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            for _ in range(runs):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(report.as_uri(), timeout=120_000)
                page.wait_for_selector("html[data-rendered=true]", timeout=120_000)
                if errors:
                    raise RuntimeError(f"JavaScript errors in {report}: {errors}")
                out.append(float(page.evaluate("window.insync.renderedAt")) / 1000)
                phases.append(page.evaluate(
                    "Object.fromEntries(performance.getEntriesByType('mark')"
                    ".filter(m => m.name.startsWith('insync:'))"
                    ".map(m => [m.name.slice(7), Math.round(m.startTime)]))"))
                page.close()
        finally:
            browser.close()
    return out


def measure(n: int, root: Path, chromium: str | None) -> dict[str, Any]:
    from checkers import check_file
    from harness.base.rundir import RunDir
    from harness.bench._synth import INJECTABLE, write_run
    from results.report import write_report

    run = root / f"bench-{n}" / "20261121T031501.123Z"
    stored = RunDir(run)
    t = time.perf_counter()
    write_run(run, ops=n, seed=7, concurrency=10, keys=8, interval_s=10.0, inject=INJECTABLE,
              name=f"bench-{n}")
    gen_s, t = time.perf_counter() - t, time.perf_counter()
    verdict = check_file(run)
    stored.write_results(verdict)
    check_s, t = time.perf_counter() - t, time.perf_counter()
    report = write_report(run, pngs=False)
    html_s, t = time.perf_counter() - t, time.perf_counter()
    write_report(run)
    total_s = time.perf_counter() - t
    result: dict[str, Any] = {
        "lines": sum(1 for _ in stored.history_path.open("rb")),
        "valid": verdict["valid"], "anomalies": verdict.get("anomaly-counts"),
        "simulate_s": round(gen_s, 1), "check_s": round(check_s, 1),
        "report_html_s": round(html_s, 1), "report_with_pngs_s": round(total_s, 1),
        "report_mb": round(report.stat().st_size / 1e6, 2),
        "history_mb": round(stored.history_path.stat().st_size / 1e6, 1),
        "pngs_kb": {p: (run / p).stat().st_size // 1000
                    for p in ("timeline.png", "latency.png", "throughput.png")},
        "run_dir": str(run),
    }
    if chromium:
        phases: list[dict[str, int]] = []
        loads = load_times(report, chromium, phases)
        result["load_s"] = [round(x, 2) for x in loads]
        result["load_phases_ms"] = phases
        result["load_median_s"] = round(statistics.median(loads), 2)
    return result


def main(args: argparse.Namespace) -> int:
    chromium = None if args.no_browser else args.chromium
    failed = False
    with tempfile.TemporaryDirectory(prefix="insync-bench-report-") as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        for n in args.sizes:
            r = measure(n, root, chromium)
            ok = r["report_mb"] * 1e6 < TARGET_BYTES and r.get("load_median_s", 0) < TARGET_LOAD_S
            failed |= not ok
            print(json.dumps({"ops": n, **r, "meets_targets": ok}), flush=True)
    return 1 if failed else 0
