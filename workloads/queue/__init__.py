"""The queue workload: sends, polls and transactions over a rolling set of partitions.

Jepsen's Kafka queue workload, as one :class:`~workloads.protocol.Workload`
record (:data:`QUEUE`, registered in ``workloads.WORKLOADS``). Its pieces, one
job per module:

* ``options``: its rows of ``insync run``'s table, their checks, its test.json block;
* ``generator``: the main-phase generator (pure); ``drain``: the final drain and
  its tracker (pure);
* ``setup``: one run's topics and clients; ``topics``: topics created on demand;
* ``client``: the ``QueueClient`` (``config``, ``sending``, ``reading``, ``txn``);

and its histories are judged by docs/HISTORY.md's checker, and by the group rules of
docs/HISTORY-GROUPS.md where they record groups: ``--txn`` (offsets committed inside
transactions, assigns from the committed offsets) and ``--sub-via subscribe``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workloads.protocol import CheckerSpec, RunEnv, Workload
from workloads.queue import combinations, options
from workloads.queue.drain import Drain, DrainTracker
from workloads.queue.generator import QueueGen
from workloads.queue.options import QueueSettings

if TYPE_CHECKING:
    from workloads.queue.setup import QueueRun


def _open(env: RunEnv, s: QueueSettings) -> QueueRun:
    from workloads.queue.setup import QueueRun  # confluent-kafka only once a run starts

    return QueueRun(env, s)


QUEUE: Workload[QueueSettings] = Workload(
    name="queue",
    settings=QueueSettings,
    options=options.OPTIONS,
    open=_open,
    generator=lambda s: QueueGen.start(options.generator_options(s)),
    final_generator=lambda s: Drain(groups=options.group_names_of(s)),
    tracker=DrainTracker,
    block=options.block,
    name_parts=options.name_parts,
    checker=CheckerSpec("history"),
    validate=combinations.validate,
    automatic=options.automatic,
)

__all__ = ["QUEUE", "QueueSettings"]
