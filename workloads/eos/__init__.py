"""The exactly-once workload: consume-transform-produce in one transaction per batch.

Members of one consumer group read an input topic at read_committed, derive one
output record per input record, and write the outputs and the offsets they
consumed in one transaction (``send_offsets_to_transaction`` with the
consumer's group metadata), while producers fill the input topic. Its pieces:
``shape`` (topics, keys, group), ``generator`` (pure), ``client``, ``setup``,
``options``. The final drain is the queue's (the group's committed offsets
first, then every key again), and docs/HISTORY-GROUPS.md's exactly-once rules
judge the history (``duplicate-output``, ``missing-output``, and ``G1a`` for an
aborted output read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workloads.eos import options
from workloads.eos.generator import EosGen
from workloads.eos.options import EosSettings
from workloads.eos.shape import GROUP
from workloads.protocol import CheckerSpec, RunEnv, Workload
from workloads.queue.drain import Drain, DrainTracker

if TYPE_CHECKING:
    from workloads.eos.setup import EosRun


def _open(env: RunEnv, s: EosSettings) -> EosRun:
    from workloads.eos.setup import EosRun  # confluent-kafka only once a run starts

    return EosRun(env, s)


EOS: Workload[EosSettings] = Workload(
    name="eos",
    settings=EosSettings,
    options=options.OPTIONS,
    open=_open,
    generator=lambda s: EosGen(),
    final_generator=lambda s: Drain(groups=(GROUP,)),
    tracker=DrainTracker,
    block=options.block,
    name_parts=options.name_parts,
    checker=CheckerSpec("history"),
    validate=options.validate,
)

__all__ = ["EOS", "EosSettings"]
