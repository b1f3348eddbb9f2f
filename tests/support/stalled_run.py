"""A run directory whose producers wrote nothing while a fault was in force, and was VALID.

The case coverage exists for: a kill holds for 45 s of a 70 s main phase, every
send invoked in that time blocks for the client's 10 s timeout and ends
``info`` (one completion per 10 s per producer), while a consumer's polls keep
returning ``ok`` with nothing in them. Counted per completion, the fault looks
~95% available; counted per second, it was dead. Nothing is lost, so the
checker says VALID: exactly the verdict that proves little.

Times are explicit (nanoseconds from 0), unlike ``history_builder.Hist``, because
coverage is about seconds.
"""

from __future__ import annotations

import heapq
import json
from pathlib import Path
from typing import Any

import orjson

from checkers import check_file
from harness.base.faults import fault_spans
from harness.bench._synth.runs import synthetic_test_json
from results.coverage import coverage

S = 1_000_000_000
PRODUCERS = 4
CONSUMER = PRODUCERS  # process numbers: producers 0-3, the consumer 4, retired producers p + 5n
CONCURRENCY = PRODUCERS + 1
KEYS = [f"k{p}" for p in range(PRODUCERS)]


def stalled_ops(*, main_s: float = 70.0, fault: tuple[float, float] = (10.0, 55.0),
                period_s: float = 0.5, timeout_s: float = 10.0,
                poll_s: float = 0.1, drain_s: float = 5.0) -> list[dict[str, Any]]:
    """The history's ops in file order, with dense indices: sends and polls for ``main_s``,
    then the consumer's drain, polling once a second for ``drain_s``."""
    lines: list[tuple[int, int, dict[str, Any]]] = []  # (time, seq, op)

    def emit(t_s: float, process: Any, type_: str, f: str, value: Any = None) -> None:
        op = {"time": round(t_s * S), "process": process, "type": type_, "f": f}
        if value is not None or type_ == "invoke":
            op["value"] = value
        heapq.heappush(lines, (op["time"], len(lines), op))

    kill_at, heal_at = fault
    emit(kill_at, "nemesis", "invoke", "kill", None)
    emit(kill_at + 0.1, "nemesis", "info", "kill", {"killed": ["n1", "n2"]})
    emit(heal_at, "nemesis", "invoke", "start", None)
    emit(heal_at + 0.3, "nemesis", "info", "start", {"started": ["n1", "n2"]})

    acked: list[tuple[float, str, int, int]] = []  # (ack time, key, offset, value)
    value = 0
    for p, key in enumerate(KEYS):
        process, t, offset = p, 0.05 + p * 0.1, 0
        while t < main_s:
            value += 1
            emit(t, process, "invoke", "send", [["send", key, value]])
            if kill_at <= t < heal_at:  # blocked until the client gives up: maybe written
                emit(t + timeout_s, process, "info", "send")
                process += CONCURRENCY
                t += timeout_s + 0.01
                continue
            emit(t + 0.005, process, "ok", "send", [["send", key, [offset, value]]])
            acked.append((t + 0.005, key, offset, value))
            offset += 1
            t += period_s

    emit(0.01, CONSUMER, "invoke", "assign", KEYS)
    emit(0.02, CONSUMER, "ok", "assign", KEYS)
    acked.sort()
    read = 0
    t = 0.1
    while t < main_s + drain_s:
        upto = read
        while upto < len(acked) and acked[upto][0] < t:
            upto += 1
        records: dict[str, list[list[int]]] = {}
        for _at, key, offset, v in acked[read:upto]:
            records.setdefault(key, []).append([offset, v])
        emit(t, CONSUMER, "invoke", "poll", [["poll"]])
        emit(t + 0.002, CONSUMER, "ok", "poll", [["poll", records]])
        read = upto
        t += poll_s if t < main_s else 1.0
    assert read == len(acked), "the drain must read every acknowledged value"

    ordered = [heapq.heappop(lines)[2] for _ in range(len(lines))]
    return [{"index": i, **op} for i, op in enumerate(ordered)]


def write_stalled_run(run_dir: Path, *, with_coverage: bool = True, main_s: float = 70.0,
                      name: str = "stalled", config: dict[str, Any] | None = None) -> Path:
    """history.jsonl, test.json and results.json (the real checker's verdict, a ``run`` block,
    and, ``with_coverage``, the coverage block ``insync run`` would have written)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    ops = stalled_ops(main_s=main_s)
    (run_dir / "history.jsonl").write_bytes(b"".join(orjson.dumps(op) + b"\n" for op in ops))
    test = synthetic_test_json(name, 1, "2026-11-21T03:15:01.123Z", concurrency=CONCURRENCY,
                               faults=["kill"], interval_s=45.0, config=config)
    (run_dir / "test.json").write_text(json.dumps(test, indent=2) + "\n")
    verdict = check_file(run_dir)
    end_s = ops[-1]["time"] / S
    verdict["run"] = {"exit_code": 0, "duration_s": round(end_s, 3),
                      "phase_times": {"main": [0.0, main_s], "drain": [main_s, end_s]}}
    if with_coverage:
        verdict["run"]["coverage"] = coverage(ops, fault_spans(), (0, round(main_s * S)))
    (run_dir / "results.json").write_text(json.dumps(verdict) + "\n")
    return run_dir
