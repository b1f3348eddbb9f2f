"""The public entry points: ``check_history`` and ``check_file``.

The split of responsibilities is the one HISTORY.md draws: input that breaks the
format raises ``HistoryError`` (exit 3) while it is read; once read, judging
never raises: a bug or a surprise in an analysis becomes ``valid: "unknown"``
with an ``error`` field, keeping whatever anomalies were already proven (a
proven anomaly stays proven, so validity still merges false > unknown > true).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from checkers._analyses import analyse_key
from checkers._collect import Collector
from checkers._cycles import find_cycles
from checkers._fork import can_fork
from checkers._history import NeedsWholeFile, Scanner
from checkers._input import (
    Source,
    count_lines,
    cut_short_warning,
    open_history,
    open_source,
    parse_lines,
)
from checkers._key_parts import judge_in_parts
from checkers._measures import REWINDS, STALLS, UNREAD, Measures, Tap
from checkers._parallel import chunk_count, read_parallel
from checkers._verdict import Anomalies, assemble, informational, nothing_to_judge
from checkers._versions import VersionOrder, build
from checkers.groups import judge_groups
from harness.base import contract
from harness.base.contract import (
    ENGINES,
    F_MASK,
    F_SHIFT,
    FAIL,
    INFO,
    KIND_MASK,
    NEMESIS_F,
    OK,
    TYPE_NAMES,
)
from harness.base.errors import HistoryError

#: How long the G0/G1c search may take before the verdict becomes "unknown".
DEFAULT_CYCLE_BUDGET_S = 60.0


def check(
    path: str | os.PathLike[str],
    *,
    engine: str = "memory",
    ww_deps: bool = False,
    max_anomalies: int = 1000,
    jobs: int | None = None,
    master: str = "local[2]",
) -> dict[str, Any]:
    """The verdict on a history file or run directory, by either engine.

    ``memory`` judges every anomaly type (``check_file``; ``jobs`` as there);
    ``spark`` judges the types the registry gives it, on the Spark master
    ``master``, for histories larger than memory. Both verdicts are assembled by
    ``checkers._verdict.assemble``.
    """
    if engine == "memory":
        return check_file(path, ww_deps=ww_deps, max_anomalies=max_anomalies, jobs=jobs)
    if engine == "spark":
        from checkers.spark.check import check_with_spark

        return check_with_spark(path, master=master, max_anomalies=max_anomalies)
    raise ValueError(f"no checker engine {engine!r}; engines are {', '.join(ENGINES)}")


def check_file(
    path: str | os.PathLike[str],
    *,
    ww_deps: bool = False,
    max_anomalies: int = 1000,
    cycle_time_budget_s: float = DEFAULT_CYCLE_BUDGET_S,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Check a history file, or the ``history.jsonl`` of a run directory.

    ``jobs`` is how many processes read the file (``checkers._parallel``);
    None picks by file size and cores, 1 reads it in this process alone. The
    verdict is the same either way.

    Raises ``HistoryError`` when the file is unreadable or malformed. A last
    line cut short by a crash is left out, and the verdict's ``warnings`` say so.
    """
    source = open_source(path)
    verdict = _check_source(source, ww_deps, max_anomalies, cycle_time_budget_s, jobs)
    if source.cut_short:
        line = count_lines(source.path, 0, source.end) + 1
        verdict["warnings"] = [*verdict.get("warnings", []), cut_short_warning(line)]
    return verdict


def _check_source(
    source: Source, ww_deps: bool, max_anomalies: int, budget_s: float, jobs: int | None
) -> dict[str, Any]:
    chunks = chunk_count(source.end, jobs=jobs)
    fallback = None
    if chunks > 1:
        try:
            collector, scanner = read_parallel(source.path, chunks, source.end)
        except HistoryError:
            raise
        except NeedsWholeFile:
            pass  # a chunk edge splits an op from its value: one pass below, as designed
        except Exception as err:  # a bug or a failed fork: one pass still judges, and says so
            fallback = _internal(err, "reading in parallel") + "; read in one pass instead"
        else:
            out = Anomalies(max_anomalies)
            return _judge(
                collector, scanner, out, ww_deps=ww_deps, budget_s=budget_s, parts=chunks,
                again=_reread(source),
            )
    with open_history(source.path) as handle:
        verdict = _check_ops(
            parse_lines(handle, source), _reread(source), ww_deps, max_anomalies, budget_s
        )
    if fallback is not None:
        verdict["warnings"] = [*verdict.get("warnings", []), fallback]
    return verdict


def _reread(source: Source) -> Callable[[], Iterator[dict[str, Any]]]:
    """The lines of ``source`` once more, for the group rules (a second pass, taken only
    by a history that uses HISTORY-GROUPS.md) and for the measures when the check's own
    pass could not feed them (``checkers._measures``)."""
    def lines() -> Iterator[dict[str, Any]]:
        with open_history(source.path) as handle:
            yield from parse_lines(handle, source)
    return lines


def check_history(
    ops: Iterable[dict[str, Any]],
    *,
    ww_deps: bool = False,
    max_anomalies: int = 1000,
    cycle_time_budget_s: float = DEFAULT_CYCLE_BUDGET_S,
) -> dict[str, Any]:
    """Check a history given as op dicts in file order; returns the verdict dict.

    Raises ``HistoryError`` for malformed ops (the position in ``ops`` is the line).
    A history may be read twice (for the group rules of HISTORY-GROUPS.md, or for the
    measures of one whose first ``txn`` op comes late, ``checkers._measures``), so ``ops``
    is kept as a list unless it is one already.
    """
    kept = ops if isinstance(ops, list | tuple) else list(ops)
    return _check_ops(kept, lambda: iter(kept), ww_deps, max_anomalies, cycle_time_budget_s)


def _check_ops(
    ops: Iterable[dict[str, Any]],
    again: Callable[[], Iterable[dict[str, Any]]],
    ww_deps: bool,
    max_anomalies: int,
    cycle_time_budget_s: float,
) -> dict[str, Any]:
    collector = Collector()
    scanner = Scanner(collector)
    out = Anomalies(max_anomalies)
    tap = Tap()
    try:
        lines = iter(ops)
        scanner.feed_all(tap.head(lines), finish=False)
        scanner.feed_all(tap.rest(lines))
    except HistoryError:
        raise
    except Exception as err:
        return _verdict(collector, scanner, out, [_internal(err, "while reading")], None)
    return _judge(
        collector, scanner, out, ww_deps=ww_deps, budget_s=cycle_time_budget_s, again=again,
        tap=tap,
    )


def _judge(
    collector: Collector,
    scanner: Scanner,
    out: Anomalies,
    *,
    ww_deps: bool,
    budget_s: float,
    again: Callable[[], Iterable[dict[str, Any]]] | None = None,
    parts: int = 1,
    tap: Tap | None = None,
) -> dict[str, Any]:
    reasons: list[str] = []
    group_stats: dict[str, Any] = {}
    wanted = _wanted(collector, scanner)
    measured = tap.measures if tap is not None and tap.whole else None
    missing = [name for name in wanted if measured is None or not measured.has(name)]
    extra = Measures(missing) if missing else None
    wr_only_cycle = False
    cycle_stats: dict[str, Any] | None = None
    try:
        if collector.judged == 0:
            reasons.append(nothing_to_judge())
        proven = _proven_info_ops(collector)
        proven_offsets = _proven_offsets(collector, proven)
        orders: dict[str, VersionOrder] = {}
        if parts > 1 and not ww_deps and len(collector.keys) > 1 and can_fork():
            # the cycle search needs the version orders only for ww edges
            judge_in_parts(collector, sorted(collector.keys), proven, proven_offsets, out, parts)
        else:
            for k in sorted(collector.keys):
                ks = collector.keys[k]
                vo = orders[k] = build(ks, proven_offsets.get(k, []))
                analyse_key(k, ks, vo, proven, out)
        for op, k, v in collector.precommitted:
            if out.counted("precommitted-read"):
                out.keep("precommitted-read", {"op": op, "key": k, "value": v})
        cycles = find_cycles(collector, orders, ww_deps=ww_deps, budget_s=budget_s, out=out)
        wr_only_cycle = cycles.wr_only_cycle
        cycle_stats = {"complete": cycles.complete, "edges": cycles.edges}
        if not cycles.complete:
            reasons.append(cycles.reason)
        if collector.saw_groups or scanner.saw_groups:
            if again is None:  # only a caller that scanned a one-time stream itself
                reasons.append("the group rules need the history once more, and it is gone")
            else:  # the measures the check's pass lacks ride on this one
                lines = again() if extra is None else extra.through(again())
                group_stats = judge_groups(lines, out)
    except Exception as err:
        reasons.append(_internal(err, "while checking"))
    group_stats = {**group_stats, **_measures(wanted, missing, measured, extra, again)}
    return _verdict(
        collector,
        scanner,
        out,
        reasons,
        cycle_stats,
        ww_deps=ww_deps,
        wr_only_cycle=wr_only_cycle,
        group_stats=group_stats,
    )


def _wanted(collector: Collector, scanner: Scanner) -> list[str]:
    """The measures a verdict shows: ``read-committed-stalls`` (``checkers._stalls``) of a
    history that holds a ``txn`` op (its readers are read_committed), its
    ``abort-rewinds`` (``checkers._rewinds``) if a ``txn`` op failed, and its
    ``group-unread-keys`` (``checkers._unread``) if it holds a ``subscribe`` op."""
    txn = contract.f_codes()["txn"]
    wanted = []
    if any((m >> F_SHIFT) & F_MASK == txn for m in scanner.meta):
        wanted.append(STALLS)
        aborted = txn << F_SHIFT | FAIL
        if any(m & (F_MASK << F_SHIFT | KIND_MASK) == aborted for m in scanner.meta):
            wanted.append(REWINDS)
    if collector.saw_rebalance:
        wanted.append(UNREAD)
    return wanted


def _measures(
    wanted: list[str], missing: list[str], measured: Measures | None,
    extra: Measures | None, again: Callable[[], Iterable[dict[str, Any]]] | None,
) -> dict[str, Any]:
    """``stats``' blocks of the ``wanted`` measures: from the check's own pass for those it
    fed the whole history (``measured``), from the group rules' pass for the others if it
    fed them all of it (``extra``), else from one more pass over its lines
    (``checkers._measures``); ``missing``: the wanted ones ``measured`` lacks. Measures,
    not anomalies: whatever happens here, ``valid`` does not change."""
    out = {} if measured is None else measured.results(
        [n for n in wanted if n not in missing], _internal)
    if missing and (extra is None or not extra.whole) and again is not None:
        extra = Measures(missing).read(again)
    if missing and extra is not None and extra.whole:
        out.update(extra.results(missing, _internal))
    return {name: out[name] for name in wanted if name in out}


def _proven_info_ops(collector: Collector) -> set[int]:
    """info ops that some ok read proves committed: it read one of their values."""
    keys = collector.keys
    return {
        index
        for index, sent, _ in collector.info_ops
        if any(v in keys[k].ok_reads for k, v in sent)
    }


def _proven_offsets(
    collector: Collector, proven: set[int]
) -> dict[str, list[tuple[int, int, int]]]:
    """key -> (offset, value, op) of the sends of proven info ops: they join the log."""
    offsets: dict[str, list[tuple[int, int, int]]] = {}
    for index, _, sent in collector.info_ops:
        if index in proven:
            for k, o, v in sent:
                offsets.setdefault(k, []).append((o, v, index))
    return offsets


def _verdict(
    collector: Collector,
    scanner: Scanner,
    out: Anomalies,
    reasons: list[str],
    cycle_stats: dict[str, Any] | None,
    *,
    ww_deps: bool = False,
    wr_only_cycle: bool = False,
    group_stats: dict[str, Any] | None = None,
) -> dict[str, Any]:
    outcomes = collector.outcomes
    stats: dict[str, Any] = {
        "ops": scanner.lines,
        "client-ops": outcomes[OK] + outcomes[INFO] + outcomes[FAIL],
        "ok": outcomes[OK],
        "fail": outcomes[FAIL],
        "info": outcomes[INFO],
        "never-completed": scanner.never_completed,
        "nemesis-ops": scanner.nemesis_ops,
        "keys": len(collector.keys),
    }
    if cycle_stats is not None:
        stats["cycle-search"] = cycle_stats
    stats.update(group_stats or {})
    return assemble(
        out,
        informational_types=informational(
            ww_deps=ww_deps, saw_rebalance=collector.saw_rebalance, wr_only_cycle=wr_only_cycle
        ),
        stats=stats,
        unknown_reasons=reasons,
        ops=_op_details(scanner, out),
        waits_not_held=scanner.waits_not_held,
    )


def _op_details(scanner: Scanner, out: Anomalies) -> dict[str, dict[str, Any]]:
    """process/f/type of every op an anomaly points at, for explanations."""
    meta = scanner.meta
    f_names = contract.f_names()
    details: dict[str, dict[str, Any]] = {}
    for index in sorted(out.referenced_ops()):
        if not 0 <= index < len(meta):
            continue
        process, f_code, kind = contract.unpack_meta(meta[index])
        if f_code == NEMESIS_F:
            continue
        type_name = TYPE_NAMES[kind]
        details[str(index)] = {
            "process": process,
            "f": f_names.get(f_code, "other"),
            "type": "info" if type_name == "invoke" else type_name,
            **({"never-completed": True} if type_name == "invoke" else {}),
        }
    return details


def _internal(err: Exception, when: str) -> str:
    where = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
    return f"internal error in the checker {when}: {type(err).__name__}: {err}{at}"
