"""What ``insync scenario run`` and ``insync catalogue`` print and store, from judged cases.

The catalogue's table is versions x scenarios: one row per scenario (or
variant), one column per Kafka version, each cell ``k/N`` runs that ended as
expected, marked ``bug`` where the scenario expects its anomalies and ``ok``
where it expects none (``-`` outside the range). Under it, one line per cell
says the expected and the observed outcome, so a reader sees *what* differed.
The same rows go to ``catalogue.json`` (machine-readable) and ``catalogue.md``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.base.errors import EnvironmentProblem
from harness.scenario.runs import CaseResult, observed, run_line

#: The files ``insync catalogue`` writes into the results dir.
TABLE_JSON = "catalogue.json"
TABLE_MD = "catalogue.md"


def scenario_summary(result: CaseResult) -> str:
    """``insync scenario run``'s closing lines: each run, expected, observed, the count."""
    case = result.case
    build = "" if case.build is None else f" on {case.target}"
    lines = [f"scenario {case.label} on {case.target} "
             f"({case.combo.opts.mode}): {case.scenario.bug}"]
    tests = result.case.tests
    lines += [f"  {run_line(k, v, tests)}" for k, v in enumerate(result.verdicts, 1)]
    lines += [f"expected: {case.expected.describe()}",
              f"observed: {observed(result.verdicts, tests)}",
              f"reproduced {result.matched} of {len(result.verdicts)}{build}"
              f" ({'as expected' if result.ok else 'NOT as expected'})"]
    return "\n".join(lines)


def _cell(r: CaseResult) -> str:
    tag = "bug" if r.case.expected.bug_shows else "ok"
    return f"{r.matched}/{len(r.verdicts)} {tag}" + ("" if r.ok else " !")


def _versions(results: Sequence[CaseResult]) -> list[str]:
    """The columns, oldest version first (a build's by its version)."""
    seen = sorted({(r.case.version.order, r.case.column) for r in results})
    return [column for _, column in seen]


def grid(results: Sequence[CaseResult]) -> list[list[str]]:
    """Header row then one row per scenario/variant: cells ``k/N bug|ok`` (``!`` when
    some run did not end as expected), ``-`` where the version is not covered."""
    versions = _versions(results)
    rows: dict[str, dict[str, str]] = {}
    for r in results:
        rows.setdefault(r.case.label, {})[r.case.column] = _cell(r)
    out = [["scenario", *versions]]
    out += [[label, *(cells.get(v, "-") for v in versions)] for label, cells in rows.items()]
    return out


def _details(results: Sequence[CaseResult]) -> list[list[str]]:
    out = [["scenario", "version", "expected", "observed", "as expected"]]
    out += [[r.case.label, r.case.column, r.case.expected.describe(),
             observed(r.verdicts, r.case.tests), f"{r.matched}/{len(r.verdicts)}"] for r in results]
    return out


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


def _markdown(rows: list[list[str]]) -> str:
    def line(r: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in r) + " |"

    return "\n".join([line(rows[0]), line(["---"] * len(rows[0])), *map(line, rows[1:])])


def catalogue_text(results: Sequence[CaseResult], runs: int) -> str:
    ok = sum(1 for r in results if r.ok)
    return "\n".join([
        text_table(grid(results)), "", text_table(_details(results)), "",
        f"catalogue: {ok} of {len(results)} scenario x version cells as expected "
        f"({runs} run(s) each)"])


def catalogue_json(results: Sequence[CaseResult], runs: int) -> dict[str, Any]:
    return {
        "runs": runs,
        "cells": [{"scenario": r.case.scenario.name, "variant": r.case.variant,
                   "version": r.case.version.line, "mode": r.case.combo.opts.mode,
                   "build": None if r.case.build is None else r.case.build.record(),
                   "test": r.case.combo.name, "expected": r.case.expected.describe(),
                   "bug_expected": r.case.expected.bug_shows,
                   "observed": observed(r.verdicts, r.case.tests), "runs": len(r.verdicts),
                   "as_expected": r.matched} for r in results],
    }  # fmt: skip


def store(results: Sequence[CaseResult], runs: int, results_dir: str | Path,
          now: datetime | None = None) -> list[Path]:
    """Write ``catalogue.json`` and ``catalogue.md`` into the results dir; their paths."""
    when = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    folder = Path(results_dir)
    md = "\n".join([f"# insync catalogue ({when}, {runs} run(s) per cell)", "",
                    "Cells: runs that ended as expected / runs; `bug`: the scenario expects "
                    "its anomalies there, `ok`: it expects none; `!`: some run did not.", "",
                    _markdown(grid(results)), "", _markdown(_details(results)), ""])
    data = {"measured": when, **catalogue_json(results, runs)}
    paths = [folder / TABLE_JSON, folder / TABLE_MD]
    try:
        paths[0].write_text(json.dumps(data, indent=2) + "\n")
        paths[1].write_text(md)
    except OSError as err:
        raise EnvironmentProblem(f"cannot write the catalogue table in {folder}: "
                                 f"{err.strerror or err}",
                                 hint="make the results dir writable; the runs are stored, "
                                 "so the same command resumes and writes it") from None
    return paths
