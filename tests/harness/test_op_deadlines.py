"""Every client op has a deadline, and no fault or heal waits for clients.

In virtual time (``harness.gen.simulate``), the runner's own plan for the case
that held a 15 s pause for 250 s (3 nodes, ``--txn``, pauses of leaders, 150 s):
client ops invoked while a leader is paused never return by themselves. With the
interpreter's op timeout the main phase ends within one op timeout of the time
limit, every stuck op is ``info`` at its deadline, and the final heal comes at the
time limit; without it the same plan's main phase runs on as long as the stuck ops.
Then the real interpreter, with a client blocked in a call that never returns.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import orjson
from mem_kafka import MemClient, MemKafka

from harness.base.history import NEMESIS, Op
from harness.base.history_writer import HistoryWriter
from harness.gen import clients, ns, plan_gen, simulate, time_limit
from harness.gen.simulate import ABANDONED
from harness.run.interpreter import Interpreter
from harness.run.options import RunOptions
from harness.run.plan import build_plan
from harness.run.setup import build_package, nemesis_options
from workloads import WORKLOADS
from workloads.client import Completed

T = 150.0
OP_TIMEOUT = 15.0
STUCK = ns(2_000)  # a client op during a pause: it never returns by itself


def paused_leaders(op_timeout: float | None) -> list[Op]:
    opts = RunOptions(txn=True, nemesis=["pause"], nemesis_targets=["leaders"], time_limit=T,
                      nodes=3, seed=1, rate=50.0, final_time_limit=5.0).validate().resolved()
    nopts = nemesis_options(opts)
    assert nopts is not None and opts.concurrency is not None
    plan = build_plan(opts, WORKLOADS[opts.workload], build_package(nopts))
    paused = [False]

    def latency(op: Op, rng: Any) -> int:
        if op["process"] == NEMESIS:
            paused[0] = op["f"] == "pause" or (paused[0] and op["f"] != "resume")
            return ns(0.5)
        return STUCK if paused[0] else ns(0.01)

    return simulate(plan_gen(plan), concurrency=opts.concurrency, seed=1, latency_fn=latency,
                    op_timeout=None if op_timeout is None else ns(op_timeout),
                    max_ops=2_000_000)


def main_phase_end(history: list[Op]) -> int:
    """When the last op invoked before the time limit completed."""
    invoked = {op["index"]: op for op in history if op["type"] == "invoke"
               and op["time"] < ns(T) and op["process"] != NEMESIS}
    pending: dict[Any, Op] = {}
    end = 0
    for op in history:
        if op["process"] == NEMESIS:
            continue
        if op["type"] == "invoke":
            pending[op["process"]] = op
        elif pending.pop(op["process"])["index"] in invoked:
            end = max(end, op["time"])
    return end


def test_paused_leaders_hold_no_phase_and_no_fault_past_its_time() -> None:
    history = paused_leaders(OP_TIMEOUT)
    assert main_phase_end(history) <= ns(T + OP_TIMEOUT)
    nem = [op for op in history if op["process"] == NEMESIS]
    pauses = [op for op in nem if op["f"] == "pause" and op["type"] == "info"]
    resumes = [op for op in nem if op["f"] == "resume" and op["type"] == "invoke"]
    # as in the run this case comes from, the last pause begins in the last 15 s
    assert len(pauses) >= 5 and pauses[-1]["time"] > ns(T - 15)
    holds = [(r["time"] - p["time"]) / 1e9 for p, r in zip(pauses, resumes, strict=True)]
    assert max(holds) < 20.0, holds  # held as the nemesis drew, whatever the clients did
    assert resumes[-1]["time"] == ns(T)  # the final heal: at the time limit, not after ops
    abandoned = [op for op in history if op.get("error") == ABANDONED]
    assert abandoned and all(op["type"] == "info" and op["value"] is None for op in abandoned)
    by_index = {op["index"]: op for op in history}
    for op in abandoned:  # each at its invoke's deadline, exactly
        invoke = max((i for i in history if i["type"] == "invoke"
                      and i["process"] == op["process"] and i["index"] < op["index"]),
                     key=lambda i: i["index"])
        assert op["time"] - by_index[invoke["index"]]["time"] == ns(OP_TIMEOUT)


def test_coverage_ends_at_the_time_limit_and_reports_the_final_heal_on_its_own() -> None:
    """The runner's coverage window for this plan: the main phase runs past the time limit
    while the last ops complete and the final heal and its recovery wait run, yet its
    figures stop at the limit, and the resume at the limit is no heal "never" followed."""
    from harness.base.faults import fault_spans
    from results.coverage import coverage, until_limit

    history = paused_leaders(OP_TIMEOUT)
    window = until_limit((0, main_phase_end(history)), T)
    assert window is not None and window[1] == ns(T) < main_phase_end(history)
    cov = coverage(history, fault_spans(), window)
    assert cov["main_s"] == T and cov["seconds"] == T
    assert cov["recoveries"] and all(r["healed_at_s"] < T for r in cov["recoveries"])
    final = cov["final_heal"]
    assert final is not None and final["heals"] == ["resume"] and final["healed_after_s"] >= 0
    # a pause in force at the limit counts up to the limit, not to its resume after it
    assert cov["faults"]["pause"]["in_force_s"] <= T


def test_without_a_deadline_the_same_plan_waits_for_its_stuck_ops() -> None:
    assert main_phase_end(paused_leaders(None)) > ns(T + 1_000)


# -- the real interpreter ------------------------------------------------------------------


def test_the_interpreter_abandons_a_stuck_op_and_carries_on_with_a_fresh_client(
    tmp_path: Path,
) -> None:
    release = threading.Event()
    kafka = MemKafka()
    late: list[int] = []

    def handler(client: MemClient, op: dict[str, Any]) -> Completed | None:
        if client.process == 0:  # the first process of thread 0 never gets an answer
            release.wait(30)
            late.append(client.process)
            return Completed("ok", op["value"])
        return None

    path = tmp_path / "history.jsonl"
    history = HistoryWriter(path)
    interp = Interpreter(history=history, concurrency=2, seed=1, start_ns=time.monotonic_ns(),
                         client_factory=lambda thread, process: MemClient(kafka, process,
                                                                          handler),
                         op_timeout_s=0.3)

    def sends(ctx: Any) -> dict[str, Any]:
        return {"f": "send", "value": [["send", "k", 1]]}

    interp.start()
    started = time.monotonic()
    try:
        interp.run(clients(time_limit(1.0, sends)))
        took = time.monotonic() - started
    finally:
        release.set()
        assert interp.stop(5)
        history.close()
    ops = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert took < 1.0 + 0.3 + 0.3
    stuck = [op for op in ops if op["process"] == 0]
    assert [op["type"] for op in stuck] == ["invoke", "info"]
    assert "op timeout" in stuck[1]["error"]
    # no value: what the abandoned op did is unknown (a group member's commit may land)
    assert stuck[1]["value"] is None
    # The deadline runs from the op's hand-over; its invoke is stamped by the worker just
    # after, so the recorded gap can fall short of 0.3 s by that hand-over's microseconds.
    assert 0.25e9 <= stuck[1]["time"] - stuck[0]["time"] < 0.5e9
    fresh = [op for op in ops if op["process"] == 2]  # thread 0's next process
    assert fresh and fresh[-1]["type"] != "invoke"
    assert interp.abandoned == 1
    time.sleep(0.1)
    assert late == [0]  # the stuck call did return, and recorded nothing
    assert len([orjson.loads(line) for line in path.read_bytes().splitlines()]) == len(ops)
