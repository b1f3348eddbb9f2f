"""What a run works out once its clients have stopped: why its drain did not finish,
what its main phase exercised, which known bugs its brokers logged, and its report.

Each reads the run's stored history (or its few facts), never the live clients, so
the runner calls them after cleanup, and a failure of any of them is logged and
changes no verdict.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from harness.base.errors import InsyncError
from harness.base.rundir import RunDir
from harness.run.plan import DrainFeed
from harness.run.stats import Stats
from harness.run.watch import HostFault

LOG = logging.getLogger("insync.run")


def cut_short_reason(feed: DrainFeed, *, interrupted: bool, signal: str | None,
                     error: BaseException | None) -> str:
    """Why the drain did not finish, for the verdict's ``not judged`` line."""
    if interrupted:
        return f"the run was cut short by {signal or 'an interrupt'}"
    if isinstance(error, HostFault):
        return "the run was cut short by its own host"
    if error is not None:
        return "the run was cut short by an error"
    if feed.started and not feed.ran_its_course:
        return (f"the drain ran out of --final-time-limit with {feed.unread()} "
                "acknowledged value(s) unread")
    return "the run was cut short"


def run_summary(stats: Stats, feed: DrainFeed, *, exit_code: int, duration_s: float,
                interrupted: bool, drain_finished: bool, signal: str | None,
                error: str | None, coverage: dict[str, Any] | None,
                replicas: dict[str, Any] | None, build: dict[str, Any] | None,
                signatures: dict[str, Any] | None = None) -> dict[str, Any]:
    """results.json's ``run`` block: the live figures, how the run and its drain ended,
    and the optional blocks the run has (coverage, replicas compared, the user's build,
    known bugs' lines in the node logs collected)."""
    summary = stats.summary()
    summary.update(
        {
            "exit_code": exit_code,
            "duration_s": round(duration_s, 3),
            "interrupted": interrupted,
            "drain_finished": drain_finished,
            "drain_complete": feed.complete,
            "drain_read_to_end": feed.read_to_end,
            "drain_idle": feed.stopped_idle,
            "unread_after_drain": feed.unread(),
        }
    )
    said = {"signal": signal, "error": error}  # named only when there is one
    summary.update({k: v for k, v in said.items() if v})
    blocks = {"coverage": coverage, "replicas": replicas, "kafka_dist": build,
              "log_signatures": signatures}
    summary.update({k: v for k, v in blocks.items() if v is not None})
    return summary


def main_phase_coverage(run_dir: RunDir, stats: Stats, t0_ns: int,
                        time_limit: float) -> dict[str, Any] | None:
    """What the main phase exercised (``results.coverage``), from the history itself.

    The window ends at ``--time-limit``: after it the clients only complete the ops
    in flight while the nemesis heals, and those seconds are the final heal's, which
    the block reports on its own (``final_heal``)."""
    from harness.base.faults import fault_spans
    from results.coverage import coverage, slim, until_limit

    try:
        window = until_limit(stats.window_ns("main", t0_ns), time_limit)
        # slim: coverage holds every op it is given, and a long run's ops are gigabytes
        ops = (slim(op) for op in run_dir.history())
        return coverage(ops, fault_spans(), window)
    except InsyncError as err:  # the verdict already says what is wrong with the file
        LOG.warning("no coverage figures: %s", err)
        return None


def log_signatures(run_dir: RunDir) -> dict[str, Any] | None:
    """Known bugs' lines in the node logs cleanup collected (``results.log_signatures``):
    informational, so the verdict stays the history's. None when no log was collected."""
    from results.log_signatures import describe, scan

    found = scan(run_dir.nodes_path)
    if found:
        LOG.warning("broker logs: %s", describe(found))
    return found


def write_run_report(run_dir: RunDir, say: Any) -> Path | None:
    """``report.html`` and the PNGs; a failure is logged and said, and changes no verdict."""
    from results.report import write_report

    try:
        return write_report(run_dir.path)
    except Exception as err:
        LOG.warning("report not written: %s", err, exc_info=not isinstance(err, InsyncError))
        say(f"the report was not written: {err}")
        return None
