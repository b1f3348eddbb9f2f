"""The text ``insync bench run`` prints: each loop's line, the pairs and the verdict."""

from __future__ import annotations

import json
from typing import Any

LABELS = {"insync": "insync run (recorded)", "bare": "bare producer loop",
          "ceiling": "free-running producer", "memory": "harness, fake Kafka",
          "fake_bare": "bare loop, fake Kafka"}


def render_loop(label: str, loop: dict[str, Any]) -> str:
    """One loop's line: sends/s, and where known ops/s, busy share and CPU."""
    share, per_send = loop["cpu_share"], loop.get("cpu_us_per_send")
    cpu = "n/a (see the run's)" if share is None else f"{share:.0%} of one core"
    line = (f"  {label:22}: {loop['sends_s']:8.0f} acked sends/s over "
            f"{loop['seconds']:.0f}s, CPU {cpu}")
    if per_send is not None:
        line += f", {per_send:.0f} us/send"
    if "ops_s" in loop:
        line += f"; {loop['ops_s']:.0f} ops/s"
    if "busy_share" in loop:
        line += f", busy share {loop['busy_share']:.2f}"
    return line


def render_fake(result: dict[str, Any]) -> list[str]:
    """The fake-Kafka part: both loops and their ratio."""
    loops, v, lat = result["loops"], result["verdict"], result["latency"]
    lines = [f"  on a fake Kafka of {lat['op_ms']:g} ms per request + {lat['record_ms']:g} ms "
             "per record:"]
    lines += [render_loop(LABELS[name], loops[name]) for name in ("memory", "fake_bare")]
    lines.append(f"  ratio on the fake: {v['fake_ratio']} (goal >= {v['target_fake_ratio']}: "
                 f"{'met' if v['meets_fake_ratio'] else 'NOT met'})")
    return lines


def render(result: dict[str, Any]) -> str:
    loops, run = result["loops"], result["run"]
    s = run["settings"]
    lines = [f"{s['concurrency']} client threads/producers at --rate {s['rate']:g}, "
             f"1-{s['sends_per_op']} records per op"]
    if "insync" not in loops:  # --no-kafka
        return "\n".join([*lines, *render_fake(result)])
    lines[0] = f"nodes {result['nodes']}, {lines[0]}, producer {json.dumps(s['producer'])}"
    lines += [render_loop(LABELS[name], loops[name]) for name in ("insync", "bare", "ceiling")]
    if "pair_ratios" in run:
        lines.append("  bare, insync, ..., bare (acked sends/s): " + ", ".join(
            f"{b} | {i}" for b, i in zip(run["bare_sends_s"], run["insync_sends_s"],
                                           strict=False)) + f" | {run['bare_sends_s'][-1]}")
        lines.append("  each run against the mean of the bare loops either side: "
                     + ", ".join(str(r) for r in run["pair_ratios"])
                     + " (the ratio is their median)")
    if run.get("settle_sends_s"):
        lines.append("  bare loop until steady (uncounted, "
                     f"{run['settle_slice_s']:g} s slices): "
                     + " / ".join(str(rate) for rate in run["settle_sends_s"]))
    lines.append(f"  insync run: valid {run['valid']}, {run['ops']} ops, CPU "
                 f"{run.get('cpu_s_whole_run')}s in all (cluster, run, drain, check), "
                 f"{run['send_ops_in_flight']} send ops / {run['records_in_flight']} records "
                 f"in flight, {run['records_per_op']} records per send op ({run['run_dir']})")
    v = result["verdict"]
    lines.append(f"  ratio insync/bare: {v['ratio']} (goal >= {v['target_ratio']}: "
                 f"{'met' if v['meets_ratio'] else 'NOT met'}); recorded sends/s goal >= "
                 f"{v['target_sends_s']:.0f}: {'met' if v['meets_sends_s'] else 'NOT met'}")
    return "\n".join([*lines, *render_fake(result)])
