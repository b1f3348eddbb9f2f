"""``insync bench soak``: does a long run stay bounded? Peak memory, history, check, report.

One ``insync run`` (default: 3 nodes, ``--nemesis partition,kill,pause,clock``,
``--time-limit 3600``, seed 7, ``--teardown``) runs as a child process, as a
user would start it; every ``--sample-every`` seconds the bench writes a row to
``samples.tsv`` beside the run: seconds since the start, the child's RSS and
peak RSS (``VmRSS``, ``VmHWM`` from ``/proc``), the history's bytes and lines.
Then it times ``insync check`` and ``insync report`` on the stored run, each a
child too, with its peak RSS (``wait4``'s ``ru_maxrss``).

It reports the run's peak RSS, the history's size, the check's and the report's
seconds and peak RSS, and how RSS grew with the history: the least-squares slope
of RSS against history lines over the samples of the second half of the main
phase (the first minutes fill the clients' buffers and the interpreter's
caches, which a long run's later hours do not grow), in bytes per history line.
A run whose memory is bounded by its own length shows a slope near zero; the
history itself is on disk, never held by the run.

Slow and not in CI: a real cluster for as long as ``--time-limit`` says (a
three-minute run, ``--time-limit 120``, checks that the bench works).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.base.rundir import HISTORY

HELP = "peak memory, history size, check and report time of one long run"

#: The run's own options, as the issue's soak run had them; flags after ``--`` are added.
RUN = ("--nodes", "3", "--nemesis", "partition,kill,pause,clock", "--teardown", "true")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--time-limit", type=float, default=3600.0,
                        help="the run's main phase in seconds (default: 3600)")
    parser.add_argument("--seed", type=int, default=7, help="the run's seed (default: 7)")
    parser.add_argument("--kafka-version", default="4.1.x", help="(default: 4.1.x)")
    parser.add_argument("--cluster-name", default="soak-bench")
    parser.add_argument("--results-dir", default="results",
                        help="where the run is stored (default: ./results)")
    parser.add_argument("--sample-every", type=float, default=15.0,
                        help="seconds between memory samples (default: 15)")
    parser.add_argument("--run-option", action="append", default=[], metavar="FLAG=VALUE",
                        help="an insync run option, e.g. nemesis=partition (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


@dataclass
class Sample:
    t_s: float
    rss_kb: int
    hwm_kb: int
    history_bytes: int
    history_lines: int


@dataclass
class Figures:
    run_dir: str
    exit_code: int
    run_s: float
    peak_rss_mb: float
    history_mb: float
    history_lines: int
    rss_bytes_per_line: float | None  # slope over the second half of the main phase
    check_s: float
    check_exit: int
    check_peak_rss_mb: float
    report_s: float
    report_exit: int
    report_peak_rss_mb: float
    samples: int


def insync() -> list[str]:
    return [sys.executable, "-m", "harness"]


def status_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in KiB; (0, 0) once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def kb(name: str) -> int:
        return int(fields.get(name, "0 kB").split()[0])

    return kb("VmRSS"), kb("VmHWM")


def history_of(results: Path, name: str) -> Path | None:
    found = sorted(results.glob(f"{name}/*/{HISTORY}"))
    return found[-1] if found else None


def count_lines(path: Path | None) -> tuple[int, int]:
    if path is None or not path.exists():
        return 0, 0
    lines = 0
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            lines += block.count(b"\n")
    return path.stat().st_size, lines


def timed_child(argv: list[str]) -> tuple[float, int, float]:
    """(seconds, exit status, peak RSS in MiB) of one child process."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - t0, proc.returncode, usage.ru_maxrss / 1024


def slope(samples: list[Sample], main_s: float | None = None) -> float | None:
    """Least-squares bytes of RSS per history line over the second half of the main
    phase (the first ``main_s`` seconds; all samples when ``None``). The drain after it
    fills the consumers' fetch buffers while the history grows by its reads, and the
    run then judges its history in its own process: neither grows with the run's
    length, and counted here they would look as if it did."""
    during = [s for s in samples if main_s is None or s.t_s <= main_s]
    half = [s for s in during[len(during) // 2:] if s.rss_kb and s.history_lines]
    if len(half) < 3:
        return None
    xs = [s.history_lines for s in half]
    ys = [s.rss_kb * 1024 for s in half]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var


def soak(args: argparse.Namespace) -> Figures:
    results = Path(args.results_dir)
    name = f"soak-{int(time.time())}"
    extra = [f"--{o.split('=', 1)[0]}={o.split('=', 1)[1]}" for o in args.run_option]
    argv = [*insync(), "run", *RUN, "--name", name, "--cluster-name", args.cluster_name,
            "--kafka-version", args.kafka_version, "--time-limit", f"{args.time_limit:g}",
            "--seed", str(args.seed), "--results-dir", str(results), *extra]
    results.mkdir(parents=True, exist_ok=True)
    said = results / f"{name}.stderr"  # a file, not a pipe nobody reads for an hour
    t0 = time.monotonic()
    with said.open("w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    samples: list[Sample] = []
    while proc.poll() is None:
        rss, hwm = status_kb(proc.pid)
        size, lines = count_lines(history_of(results, name))
        samples.append(Sample(round(time.monotonic() - t0, 1), rss, hwm, size, lines))
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=args.sample_every)
    run_s = time.monotonic() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    history = history_of(results, name)
    if history is None:
        raise SystemExit(f"insync bench soak: the run stored no history (see {said})")
    run_dir = history.parent
    with (run_dir / "samples.tsv").open("w") as out:
        out.write("t_s\trss_kb\thwm_kb\thistory_bytes\thistory_lines\n")
        for s in samples:
            out.write("\t".join(str(v) for v in asdict(s).values()) + "\n")
    size, lines = count_lines(history)
    check_s, check_exit, check_mb = timed_child([*insync(), "check", str(run_dir)])
    report_s, report_exit, report_mb = timed_child([*insync(), "report", str(run_dir)])
    return Figures(str(run_dir), proc.returncode, round(run_s, 1),
                   round(max(peak_kb, *(s.hwm_kb for s in samples), 0) / 1024, 1),
                   round(size / 2**20, 1), lines, _round(slope(samples, args.time_limit)),
                   round(check_s, 1), check_exit, round(check_mb, 1),
                   round(report_s, 1), report_exit, round(report_mb, 1), len(samples))


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def main(args: argparse.Namespace) -> int:
    figures = soak(args)
    if args.json:
        print(json.dumps(asdict(figures), indent=2))
        return 0
    f: dict[str, Any] = asdict(figures)
    print(f"run: {f['run_dir']} (exit {f['exit_code']}, {f['run_s']:g} s)")
    print(f"peak RSS of insync run: {f['peak_rss_mb']:g} MiB")
    print(f"history: {f['history_mb']:g} MiB, {f['history_lines']:,} lines")
    growth = f["rss_bytes_per_line"]
    print("RSS growth over the main phase's second half: "
          + ("not enough samples" if growth is None else f"{growth:g} bytes per history line"))
    print(f"insync check: {f['check_s']:g} s (exit {f['check_exit']}), "
          f"peak RSS {f['check_peak_rss_mb']:g} MiB")
    print(f"insync report: {f['report_s']:g} s (exit {f['report_exit']}), "
          f"peak RSS {f['report_peak_rss_mb']:g} MiB")
    print(f"samples: {f['run_dir']}/samples.tsv ({f['samples']} rows)")
    return 0
