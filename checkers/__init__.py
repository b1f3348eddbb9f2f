"""insync's history checker: judges a queue/transaction history (docs/HISTORY.md).

Public surface::

    check(path, *, engine="memory", ...)  # the one entry point: engine "memory" (every
                                          # anomaly type) or "spark" (checkers.spark)
    check_history(ops, *, ww_deps=False, max_anomalies=1000, cycle_time_budget_s=60.0)
    check_file(path, ..., jobs=None)  # a history .jsonl or a run directory holding
                                      # history.jsonl; large files on every core
    render_verdict(verdict)    # the verdict as sentences for a person
    ANOMALY_TYPES              # every anomaly type, in HISTORY.md's order
                               # (the registry: harness.base.contract)
    exit_code(verdict)         # 0 valid, 1 invalid, 2 unknown
    anomaly_ops(example)       # the op indices an anomaly example names (registry's fields)
    without_drain(verdict)     # the verdict of a run whose drain never finished
    read_stalls_in(path)       # the read_committed stalls of a history (stats' block), or
                               # None when it has no txn op (docs/HISTORY.md "Read stalls")
    describe_stall(stall)      # one stall in words
    unread_intervals(block)    # stats' group-unread-keys intervals as (group, part,
                               # interval), longest first (docs/HISTORY-GROUPS.md)
    REWIND_CLASSES             # where a consumer reads after an aborted transaction
    describe_rewinds(block)    # stats' abort-rewinds in words (docs/HISTORY.md "After
                               # an abort")

Both checks raise ``harness.base.errors.HistoryError`` for malformed input and
never raise while judging: trouble there becomes ``valid: "unknown"``.
"""

from checkers._check import DEFAULT_CYCLE_BUDGET_S, check, check_file, check_history
from checkers._explain import render_verdict
from checkers._rewinds import CLASSES as REWIND_CLASSES
from checkers._rewinds import describe_rewinds
from checkers._stalls import describe_stall, read_stalls_in
from checkers._unread_spans import unread_intervals
from checkers._verdict import ANOMALY_TYPES, anomaly_ops, exit_code, without_drain

__all__ = [
    "ANOMALY_TYPES",
    "DEFAULT_CYCLE_BUDGET_S",
    "REWIND_CLASSES",
    "anomaly_ops",
    "check",
    "check_file",
    "check_history",
    "describe_rewinds",
    "describe_stall",
    "exit_code",
    "read_stalls_in",
    "render_verdict",
    "unread_intervals",
    "without_drain",
]
