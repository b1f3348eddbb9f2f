"""Synthetic run directories (results/LAYOUT.md) for tests and benchmarks of the Spark pipeline.

Why: the runner and the nemesis are written in parallel, and a 100-run, 10M-op
benchmark cannot wait for a night of real clusters. Each synthetic run is a
plausible queue run: producers send 1-2 values per op, consumers poll the keys
they own, a nemesis opens and heals faults (``start-partition``/``stop-partition``
or ``kill``/``start``) during which ops fail, time out (``info``) and take
longer, and a final drain reads everything. Runs whose configuration is unsafe
(``acks=1``, ``min.insync=1`` or unclean election, under faults) get *injected*
lost writes: acknowledged values that no replica kept, which readers skip over.

``results.json`` is the verdict of the real in-memory checker on the written
history, plus the optional ``run`` summary, so downstream code reads exactly
what a real run would leave.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from harness.base.faults import fault_kind

#: The configuration grid the synthetic runs cycle through.
GRID: dict[str, list[Any]] = {
    "kafka_version": ["3.9.x", "4.0.x", "4.1.x"],
    "acks": ["1", "all"],
    "min_insync": [1, 2],
    "unclean_leader_election": [False, True],
    "faults": [["partition"], ["kill"]],
    "txn": [False, True],
}
EXACT = {"3.9.x": "3.9.1", "4.0.x": "4.0.1", "4.1.x": "4.1.2"}
STEP_NS = 1_000_000  # one producer/consumer step per simulated millisecond


@dataclass(frozen=True)
class Plan:
    """One synthetic run: where, what configuration, how big, and whether to lose data."""

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
        night = i % max(1, nights)
        started = base + timedelta(days=night, minutes=i)
        stamp = started.strftime("%Y%m%dT%H%M%S.000Z")
        name = f"queue-{config['kafka_version']}-acks{config['acks']}"
        loss = 0.0005 * (1 + i % 3) if lossy and unsafe(config) else 0.0
        out.append(Plan(name, stamp, started, config, ops_per_run, seed * 100_003 + i, loss))
    return out


class _History:
    """Writes one run's history straight to text, op by op, and keeps its summary."""

    def __init__(self, out: TextIO, plan: Plan) -> None:
        self.out = out
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self.index = 0
        self.now = 0
        self.keys = [f"t0-{i}" for i in range(4)]
        self.logs: list[list[tuple[int, int]]] = [[] for _ in self.keys]  # visible (offset, v)
        self.next_offset = [0] * len(self.keys)
        self.value = 0
        self.next_process = 0
        self.producers = [self._fresh() for _ in range(4)]
        self.consumers = [self._fresh() for _ in range(4)]
        self.owned = {c: [i % 4, (i + 1) % 4] for i, c in enumerate(self.consumers)}
        self.positions = {c: [0] * len(self.keys) for c in self.consumers}
        self.counts = {"ok": 0, "fail": 0, "info": 0, "acked_sends": 0, "faults": 0}
        self.fault: str | None = None

    def _fresh(self) -> int:
        self.next_process += 1
        return self.next_process - 1

    def _line(self, process: int | str, type_: str, f: str, value: str | None) -> None:
        proc = f'"{process}"' if isinstance(process, str) else str(process)
        tail = "" if value is None else f',"value":{value}'
        self.out.write(
            f'{{"index":{self.index},"time":{self.now},"process":{proc},'
            f'"type":"{type_}","f":"{f}"{tail}}}\n'
        )
        self.index += 1
        if type_ in self.counts and process != "nemesis":
            self.counts[type_] += 1

    def _nemesis(self) -> None:
        """Open a fault or heal the open one (completion lines only, as the runner records)."""
        faults = self.plan.config["faults"]
        if self.fault is None:
            self.fault = faults[self.counts["faults"] % len(faults)]
            self.counts["faults"] += 1
            self._line("nemesis", "info", fault_kind(self.fault).starts[0], '{"nodes":["n1"]}')
        else:
            self._line("nemesis", "info", fault_kind(self.fault).stop, '{"nodes":["n1"]}')
            self.fault = None

    def _send(self, process: int) -> int:
        """One producer op (invoke, then completion); returns the process to use next."""
        rng = self.rng
        sends = []
        for _ in range(1 + rng.random().__lt__(0.5)):
            self.value += 1
            sends.append((rng.randrange(len(self.keys)), self.value))
        invoke = ",".join(f'["send","{self.keys[k]}",{v}]' for k, v in sends)
        self._line(process, "invoke", "send", f"[{invoke}]")
        faulty = self.fault is not None
        self.now += rng.randint(1, 40 if faulty else 4) * STEP_NS // 2
        r = rng.random()
        if faulty and r < 0.25:
            self._line(process, "fail", "send", None)
            return process
        if faulty and r < 0.30:
            for k, v in sends[: rng.randint(0, len(sends))]:
                self._append(k, v, visible=True)
            self._line(process, "info", "send", None)
            return self._fresh()
        done = []
        for k, v in sends:
            lost = faulty and rng.random() < self.plan.loss_rate * 10
            offset = self._append(k, v, visible=not lost)
            done.append(f'["send","{self.keys[k]}",[{offset},{v}]]')
        self.counts["acked_sends"] += len(sends)
        self._line(process, "ok", "send", "[" + ",".join(done) + "]")
        return process

    def _append(self, k: int, v: int, *, visible: bool) -> int:
        offset = self.next_offset[k]
        self.next_offset[k] = offset + 1
        if visible:
            self.logs[k].append((offset, v))
        return offset

    def _poll(self, consumer: int, limit: int) -> None:
        self._line(consumer, "invoke", "poll", '[["poll"]]')
        self.now += self.rng.randint(1, 3) * STEP_NS // 2
        if self.fault is not None and self.rng.random() < 0.2:
            self._line(consumer, "fail", "poll", None)
            return
        pos = self.positions[consumer]
        parts = []
        for k in self.owned[consumer]:
            log = self.logs[k]
            end = min(len(log), pos[k] + limit)
            if end > pos[k]:
                recs = ",".join(f"[{o},{v}]" for o, v in log[pos[k] : end])
                parts.append(f'"{self.keys[k]}":[{recs}]')
                pos[k] = end
        self._line(consumer, "ok", "poll", '[["poll",{' + ",".join(parts) + "}]]")

    def write(self) -> None:
        """About ``plan.ops`` lines: assigns, the main phase with faults, heal, drain."""
        for c in self.consumers:
            keys = json.dumps([self.keys[k] for k in self.owned[c]])
            self._line(c, "invoke", "assign", keys)
            self._line(c, "ok", "assign", keys)
        budget = self.plan.ops - 200
        interval = max(200, budget // 12)
        step = 0
        while self.index < budget:
            step += 1
            if step % (interval // 4) == 0:
                self._nemesis()
            i = step % len(self.producers)
            self.producers[i] = self._send(self.producers[i])
            self._poll(self.consumers[step % len(self.consumers)], 4)
        if self.fault is not None:
            self._nemesis()
        for c in self.consumers:
            while any(self.positions[c][k] < len(self.logs[k]) for k in self.owned[c]):
                self._poll(c, 256)


def _test_json(plan: Plan) -> dict[str, Any]:
    c = plan.config
    return {
        "name": plan.name,
        "argv": ["insync", "run", "--synthetic", "--seed", str(plan.seed)],
        "seed": plan.seed,
        "started": plan.started.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "insync_version": "0.1.0",
        "synthetic": True,
        "cluster": {
            "name": "insync",
            "nodes": 3,
            "kafka_version": c["kafka_version"],
            "kafka_version_exact": EXACT[c["kafka_version"]],
            "mode": "kraft",
            "controllers": 3,
            "heap_mb": 384,
            "broker_config": {},
            "base_image": None,
        },
        "workload": {
            "name": "queue",
            "acks": c["acks"],
            "idempotence": c["acks"] == "all",
            "retries": None,
            "max_in_flight": 5,
            "txn": c["txn"],
            "sub_via": "assign",
            "replication_factor": 3,
            "min_insync": c["min_insync"],
            "unclean_leader_election": c["unclean_leader_election"],
            "rate": 1000,
            "concurrency": 8,
            "time_limit": 60,
            "final_time_limit": 60,
        },
        "nemesis": {
            "faults": c["faults"],
            "interval": 10,
            "targets": ["one"],
            "schedule": None,
            "partition_clients": False,
        },
    }


def write_run(root: Path, plan: Plan) -> Path:
    """Write one run directory: history.jsonl, test.json, results.json (real checker)."""
    from checkers import check_file

    run_dir = root / plan.name / plan.timestamp
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "history.jsonl").open("w", buffering=1 << 20) as out:
        history = _History(out, plan)
        history.write()
    (run_dir / "test.json").write_text(json.dumps(_test_json(plan), indent=2) + "\n")
    verdict = check_file(run_dir)
    seconds = history.now / 1e9
    verdict["run"] = {
        "exit_code": 0,
        "duration_s": round(seconds, 3),
        "ops": history.index,
        **history.counts,
        "phase_times": {"main": [0.0, seconds]},
    }
    (run_dir / "results.json").write_text(json.dumps(verdict) + "\n")
    return run_dir


def write_runs(
    root: Path, runs: int, ops_per_run: int, *, seed: int = 0, nights: int = 2, lossy: bool = True
) -> list[Path]:
    """Write ``runs`` synthetic run directories under ``root``; returns them."""
    return [
        write_run(root, p) for p in plans(runs, ops_per_run, seed=seed, nights=nights, lossy=lossy)
    ]


def iter_run_dirs(root: Path) -> Iterator[Path]:
    """Every run directory under a results root (one holding test.json and history.jsonl)."""
    for test in sorted(root.glob("*/*/test.json")):
        if (test.parent / "history.jsonl").is_file():
            yield test.parent
