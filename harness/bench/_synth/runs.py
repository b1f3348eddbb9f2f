"""Synthetic histories and run directories (results/LAYOUT.md), from one simulation.

Three callers, three entry points, one :class:`~.sim.Simulation` underneath:

* :func:`write_history`: a bare valid history (``insync bench check``,
  ``spark-check``), in the :data:`~.shape.CHECK` shape;
* :func:`write_run`: one run directory (history.jsonl + test.json) shaped like
  ``insync run`` leaves it, with faults and optionally planted anomalies
  (``insync bench report``, the report and checker tests);
* :func:`plans` + :func:`write_plan` / :func:`write_runs`: many run
  directories cycling through a grid of durability settings, spread over
  nights, each with the real checker's ``results.json`` and the coverage
  block ``insync run`` adds to it (``insync bench analyze``, the Spark tests).
  Runs whose configuration is unsafe (``acks=1``, ``min.insync=1`` or unclean
  election) lose acknowledged writes under faults.

Every test.json carries ``"synthetic": true`` and an ``argv`` that
``insync run`` parses (built by ``RunOptions.argv``).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness.base.faults import fault_spans
from harness.base.rundir import RunDir
from harness.bench._synth.shape import CHECK, Shape, analyze_shape, report_shape
from harness.bench._synth.sim import Simulation, Summary

#: The configuration grid the planned runs cycle through.
GRID: dict[str, list[Any]] = {
    "kafka_version": ["3.9.x", "4.0.x", "4.1.x"],
    "acks": ["1", "all"],
    "min_insync": [1, 2],
    "unclean_leader_election": [False, True],
    "faults": [["partition"], ["kill"]],
    "txn": [False, True],
}
EXACT = {"3.9.x": "3.9.1", "4.0.x": "4.0.1", "4.1.x": "4.1.2"}
#: Fault windows (start to stop) in a planned run.
PLANNED_FAULTS = 6


def simulate(path: Path, shape: Shape, *, ops: int, seed: int) -> Summary:
    """Write the history of one simulated run of about ``ops`` lines to ``path``."""
    with path.open("wb", buffering=1 << 20) as out:
        return Simulation(out, shape, ops=ops, seed=seed).run()


def write_history(path: Path, n_ops: int, seed: int = 1) -> int:
    """A valid history of about ``n_ops`` lines in the CHECK shape; returns the line count."""
    return simulate(path, CHECK, ops=n_ops, seed=seed).lines


def synthetic_test_json(name: str, seed: int, started: str, *, concurrency: int, faults: list[str],
              interval_s: float, config: dict[str, Any] | None = None,
              inject: Iterable[str] = ()) -> dict[str, Any]:
    """A test.json for a synthetic run (results/LAYOUT.md), with a replayable argv."""
    from harness.run.options import RunOptions

    c = {"kafka_version": "4.1.x", "acks": "all", "min_insync": 2,
         "unclean_leader_election": False, "txn": True, **(config or {})}
    opts = RunOptions(name=name, kafka_version=c["kafka_version"], acks=c["acks"],
                      min_insync=c["min_insync"],
                      unclean_leader_election=c["unclean_leader_election"], txn=c["txn"],
                      idempotence=c["acks"] == "all", concurrency=concurrency,
                      nemesis=faults or ["none"], nemesis_interval=interval_s, seed=seed)
    return {
        "name": name, "argv": opts.argv(), "seed": seed, "started": started,
        "insync_version": "0.1.0", "synthetic": True,
        "cluster": {"name": opts.cluster_name, "nodes": opts.nodes,
                    "kafka_version": opts.kafka_version,
                    "kafka_version_exact": EXACT[opts.kafka_version], "mode": opts.mode,
                    "controllers": 3, "heap_mb": opts.heap_mb, "broker_config": {},
                    "base_image": None},
        "workload": {"name": "queue", "acks": opts.acks, "idempotence": opts.idempotence,
                     "retries": None, "max_in_flight": opts.max_in_flight, "txn": opts.txn,
                     "sub_via": "assign", "replication_factor": opts.replication_factor,
                     "min_insync": opts.min_insync,
                     "unclean_leader_election": opts.unclean_leader_election,
                     "rate": opts.rate, "concurrency": concurrency,
                     "time_limit": opts.time_limit, "final_time_limit": opts.drain_limit,
                     "synthetic_inject": list(inject)},
        "nemesis": {"faults": faults, "interval": interval_s, "targets": ["one"],
                    "schedule": None, "partition_clients": False,
                    "fault_spans": {k: list(v) for k, v in fault_spans(faults).items()}},
    }


def write_run(
    run_dir: Path,
    *,
    ops: int = 2000,
    seed: int = 1,
    concurrency: int = 8,
    keys: int = 6,
    faults: Iterable[str] = ("partition", "kill", "pause", "clock"),
    interval_s: float = 2.0,
    inject: Iterable[str] = (),
    name: str = "synthetic",
) -> Path:
    """Write ``history.jsonl`` and ``test.json`` of a simulated run of about ``ops`` lines."""
    run_dir.mkdir(parents=True, exist_ok=True)
    run = RunDir(run_dir)
    fault_list, inject_list = list(faults), list(inject)
    shape = replace(report_shape(concurrency, keys), inject=frozenset(inject_list))
    shape = shape.with_faults(fault_list, int(interval_s * 1e9))
    simulate(run.history_path, shape, ops=ops, seed=seed)
    run.write_test(synthetic_test_json(name, seed, "2026-11-21T03:15:01.123Z",
                                       concurrency=concurrency, faults=fault_list,
                                       interval_s=interval_s, inject=inject_list))
    return run_dir


# -- planned runs over the grid --------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """One planned run: where, what configuration, how big, and whether to lose data."""

    name: str
    timestamp: str
    started: datetime
    config: dict[str, Any]
    ops: int
    seed: int
    loss_rate: float


def unsafe(config: dict[str, Any]) -> bool:
    """Configurations that may lose acknowledged writes under faults."""
    return bool(
        config["acks"] == "1" or config["min_insync"] < 2 or config["unclean_leader_election"]
    )


def plans(
    runs: int, ops_per_run: int, *, seed: int = 0, nights: int = 2, lossy: bool = True
) -> list[Plan]:
    """``runs`` plans cycling through ``GRID``, spread over ``nights`` dates."""
    combos = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    rng = random.Random(seed)
    rng.shuffle(combos)
    base = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)
    out = []
    for i in range(runs):
        config = combos[i % len(combos)]
        started = base + timedelta(days=i % max(1, nights), minutes=i)
        stamp = started.strftime("%Y%m%dT%H%M%S.000Z")
        name = f"queue-{config['kafka_version']}-acks{config['acks']}"
        loss = 0.0005 * (1 + i % 3) if lossy and unsafe(config) else 0.0
        out.append(Plan(name, stamp, started, config, ops_per_run, seed * 100_003 + i, loss))
    return out


def plan_shape(plan: Plan) -> Shape:
    """The plan's shape: about :data:`PLANNED_FAULTS` fault windows over the run."""
    shape = analyze_shape(loss=plan.loss_rate * 10, txn=plan.config["txn"])
    interval = shape.expected_ns(plan.ops, faulty=True) / (2 * PLANNED_FAULTS + 1)
    return shape.with_faults(plan.config["faults"], int(interval))


def write_plan(root: Path, plan: Plan) -> Path:
    """Write one run directory: history.jsonl, test.json, results.json (real checker, and
    ``run.coverage`` over the whole simulated main phase, as ``insync run`` writes it)."""
    from checkers import check_file
    from results.coverage import coverage, slim

    run_dir = root / plan.name / plan.timestamp
    run_dir.mkdir(parents=True, exist_ok=True)
    run = RunDir(run_dir)
    shape = plan_shape(plan)
    summary = simulate(run.history_path, shape, ops=plan.ops, seed=plan.seed)
    started = plan.started.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    test = synthetic_test_json(plan.name, plan.seed, started, concurrency=len(shape.roles),
                               faults=list(plan.config["faults"]),
                               interval_s=shape.interval_ns / 1e9, config=plan.config)
    run.write_test(test)
    verdict = check_file(run_dir)
    seconds = summary.duration_ns / 1e9
    verdict["run"] = {
        "exit_code": 0,
        "duration_s": round(seconds, 3),
        "ops": summary.lines,
        **summary.counts,
        "phase_times": {"main": [0.0, seconds]},
        "coverage": coverage(map(slim, run.history()), fault_spans(), (0, summary.duration_ns)),
    }
    run.write_results(verdict)
    return run_dir


def write_runs(
    root: Path, runs: int, ops_per_run: int, *, seed: int = 0, nights: int = 2, lossy: bool = True
) -> list[Path]:
    """Write ``runs`` planned run directories under ``root``; returns them."""
    return [
        write_plan(root, p) for p in plans(runs, ops_per_run, seed=seed, nights=nights, lossy=lossy)
    ]

