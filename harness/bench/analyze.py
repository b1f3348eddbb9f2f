"""``insync bench analyze``: ``insync analyze`` over synthetic runs: time, and Spark's share.

Also home of ``insync bench spark-check`` (``harness/bench/spark_check.py`` only names
it): ``insync check --engine spark`` against the in-memory checker on one
history per size, each engine in a fresh child process, timing the whole
command (JVM start included: that is what a user waits for) and sampling the
summed RSS of the child's whole process tree every 0.2 s, so the Spark JVM
counts. ``ru_maxrss`` alone would miss it: it is the largest *single* process.

Why subprocesses: a benchmark in-process would share the JVM, the page cache
effects and the Python heap between contenders.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from harness.bench._options import add_workdir

HELP = "time 'insync analyze' on synthetic runs (default 100 runs, ~10M ops) and Spark's share"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=100, help="synthetic runs (default 100)")
    parser.add_argument(
        "--ops-per-run", type=int, default=100_000, help="history lines per run (default 100000)"
    )
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    add_workdir(parser, "where to write the runs (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the runs and tables")


def _tree(root: int, cpu: dict[int, float]) -> int:
    """Summed RSS in bytes of ``root`` and its descendants (Linux /proc); updates ``cpu``.

    ``cpu`` maps each pid seen in the tree to its latest user+system seconds: the
    Spark JVM is a grandchild that ``RUSAGE_CHILDREN`` never sees.
    """
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    ticks: dict[int, float] = {}
    hz = os.sysconf("SC_CLK_TCK")
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/statm") as f:
                resident = int(f.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
        fields = stat.rsplit(")", 1)[1].split()
        ppid = int(fields[1])
        pid = int(entry)
        ticks[pid] = (int(fields[11]) + int(fields[12])) / hz
        children.setdefault(ppid, []).append(pid)
        rss[pid] = resident
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        if pid in ticks:
            cpu[pid] = ticks[pid]
        todo.extend(children.get(pid, ()))
    return total


@dataclass(frozen=True)
class Measured:
    """One child command: wall time, peak summed tree RSS, CPU of the tree, output."""

    wall_s: float
    peak_tree_rss: int
    cpu_s: float
    stdout: str
    returncode: int


def measure(argv: list[str], interval_s: float = 0.2) -> Measured:
    """Run ``argv``; sample the process tree's RSS until it exits."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    cpu: dict[int, float] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree(proc.pid, cpu))
            stop.wait(interval_s)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    stop.set()
    sampler.join()
    if proc.returncode not in (0, 1, 2):
        print(f"  exit {proc.returncode}; stderr ends: {err.strip()[-400:]}", file=sys.stderr)
    elif proc.returncode == 1 and not out.strip():
        print(f"  exit 1 without a verdict; stderr ends: {err.strip()[-400:]}", file=sys.stderr)
    return Measured(wall, peak, sum(cpu.values()), out, proc.returncode)


def insync(*args: str) -> list[str]:
    """argv running this interpreter's insync CLI."""
    return [sys.executable, "-m", "harness", *args]


def main(args: argparse.Namespace) -> int:
    from harness.base.rundir import RunDir
    from harness.bench._synth import write_runs

    with tempfile.TemporaryDirectory(prefix="insync-bench-analyze-", dir=args.workdir) as tmp:
        root = Path(tmp) / "results"
        t0 = time.perf_counter()
        dirs = write_runs(root, args.runs, args.ops_per_run, nights=3)
        lines = sum(sum(1 for _ in RunDir(d).history_path.open("rb")) for d in dirs)
        print(
            f"wrote {len(dirs)} synthetic runs, {lines:,} history lines "
            f"({time.perf_counter() - t0:.0f}s, not measured)",
            flush=True,
        )
        m = measure(insync("analyze", str(root), "--master", args.master))
        if m.returncode != 0:
            print(f"insync analyze failed (exit {m.returncode})", file=sys.stderr)
            return 1
        for line in m.stdout.splitlines():
            if line.startswith(("spark:", "timings:", "ingested")):
                print(line)
        print(
            f"insync analyze: {len(dirs)} runs, {lines:,} ops: {m.wall_s:.1f}s wall, "
            f"CPU {m.cpu_s:.0f}s, peak RSS of the process tree {m.peak_tree_rss / 2**20:.0f} MiB"
        )
        if args.keep:
            kept = Path(args.workdir or ".") / f"insync-bench-analyze-{os.getpid()}"
            os.replace(tmp, kept)
            os.makedirs(tmp)
            print(f"kept in {kept}")
    return 0


SPARK_CHECK_HELP = (
    "'insync check --engine spark' vs the in-memory checker: time and peak memory (with the JVM)"
)


def add_spark_check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        default="1000000,10000000",
        help="comma-separated history sizes in ops (default 1000000,10000000)",
    )
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    add_workdir(parser, "where to write histories (default temp)")
    parser.add_argument(
        "--engines", default="memory,spark", help="which engines (default memory,spark)"
    )


def spark_check_main(args: argparse.Namespace) -> int:
    from harness.bench._synth import write_history

    sizes = [int(s) for s in args.sizes.split(",") if s]
    engines = [e for e in args.engines.split(",") if e]
    print(
        f"{'ops':>12}  {'engine':>6}  {'wall':>8}  {'CPU':>8}  {'peak RSS (tree)':>15}  verdict",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="insync-bench-spark-", dir=args.workdir) as tmp:
        for n in sizes:
            path = Path(tmp) / f"history-{n}.jsonl"
            lines = write_history(path, n)
            for engine in engines:
                argv = insync("check", "--engine", engine, "--json", "--max-anomalies", "10")
                if engine == "spark":
                    argv += ["--master", args.master]
                m = measure([*argv, str(path)])
                verdict = m.stdout[:40].strip() if m.returncode in (0, 1, 2) else "error"
                print(
                    f"{lines:>12,}  {engine:>6}  {m.wall_s:>7.1f}s  {m.cpu_s:>7.1f}s  "
                    f"{m.peak_tree_rss / 2**20:>11.0f} MiB  exit {m.returncode} {verdict}",
                    flush=True,
                )
            path.unlink()
    return 0
