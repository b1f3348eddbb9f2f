"""Progress while a run goes on: a rich live panel on a terminal, log lines elsewhere.

A terminal gets phase, ops/s, ok/fail/info counts, faults in force, elapsed
and remaining time, redrawn a few times a second. Anything else (CI logs, a
pipe) gets one plain line every ``interval_s`` seconds, so logs stay readable.
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table

from harness.run.stats import Stats


def line(stats: Stats) -> str:
    s = stats.snapshot()
    left = "" if s["remaining_s"] is None else f", {s['remaining_s']:.0f}s left"
    faults = ",".join(s["in_force"]) or "none"
    return (
        f"[{s['elapsed_s']:6.1f}s] {s['phase']}{left}: {stats.rate():.0f} ops/s, "
        f"ok {s['ok']} fail {s['fail']} info {s['info']}, faults in force: {faults}"
    )


def _table(stats: Stats, title: str) -> Table:
    s = stats.snapshot()
    table = Table(title=title, show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    remaining = "-" if s["remaining_s"] is None else f"{s['remaining_s']:.0f}s"
    table.add_row("phase", f"{s['phase']} (remaining {remaining})")
    table.add_row("elapsed", f"{s['elapsed_s']:.1f}s")
    table.add_row("ops/s", f"{stats.rate():.0f}")
    table.add_row("ok / fail / info", f"{s['ok']} / {s['fail']} / {s['info']}")
    table.add_row("acked sends", str(s["acked_sends"]))
    table.add_row("faults in force", ", ".join(s["in_force"]) or "none")
    return table


class Display:
    """Shows ``stats`` until closed; a context manager."""

    def __init__(
        self,
        stats: Stats,
        title: str,
        *,
        out: TextIO | None = None,
        live: bool | None = None,
        interval_s: float = 10.0,
    ) -> None:
        self.stats = stats
        self.title = title
        self.out = out or sys.stdout
        self.live = self.out.isatty() if live is None else live
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="display", daemon=True)

    def __enter__(self) -> Display:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _loop(self) -> None:
        if self.live:
            console = Console(file=self.out)
            with Live(
                _table(self.stats, self.title),
                console=console,
                transient=False,
                refresh_per_second=4,
            ) as live:
                while not self._stop.wait(0.25):
                    live.update(_table(self.stats, self.title))
                live.update(_table(self.stats, self.title))
            return
        while not self._stop.wait(self.interval_s):
            print(line(self.stats), file=self.out, flush=True)
