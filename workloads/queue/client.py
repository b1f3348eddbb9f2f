"""The queue workload's client: real confluent-kafka producers and consumers.

One ``QueueClient`` per worker and process: a producer (transactional with
``--txn``, :mod:`workloads.queue.sending`) and a consumer
(:mod:`workloads.queue.reading`), each created on first use. It performs one op
at a time:

``send``
    produce and wait for the delivery reports (with ``--txn``, a transaction of
    its own, :mod:`workloads.queue.txn`, since a transactional producer writes
    only inside transactions);
``poll``, ``assign``, ``subscribe``
    the consumer's;
``txn``
    sends and polls in one transaction, and with ``["commit"]`` the consumer's
    positions committed inside it (docs/HISTORY-GROUPS.md);
``committed``
    a group's committed offsets (docs/HISTORY-GROUPS.md);
``crash``
    nothing: the op ends ``info`` and the worker closes this client.

Whether a Kafka error means ``fail`` or ``info`` is decided by
``workloads.outcomes`` alone.
"""

from __future__ import annotations

import random

from workloads.client import Completed, Op
from workloads.queue.config import ClientOptions
from workloads.queue.reading import Reader
from workloads.queue.sending import Sender
from workloads.queue.topics import Topics
from workloads.queue.txn import Transactions


class QueueClient:
    """A producer and a consumer for one process of one worker thread."""

    def __init__(self, opts: ClientOptions, topics: Topics, thread: int, process: int) -> None:
        self.opts = opts
        self.topics = topics
        self.thread = thread
        self.process = process
        self.sender = Sender(opts, topics, thread, process)
        self.reader = Reader(opts, topics, process,
                             stall_s=opts.stall_member_s if thread == 0 else 0.0)
        rng = random.Random(opts.seed * 1_000_003 + process)
        self.txns = Transactions(opts, self.sender, self.reader, rng)

    def prepare(self, op: Op) -> None:
        """Create the topics the op names, before it is recorded. Not for the drain's
        re-read (``"seek": "beginning"``): it reads what exists, and a topic never
        created holds nothing. A 0.10.2 run's drain could not re-read partitions it held
        because creating a never-used lookahead topic in the same assign failed for 60 s
        (``NOT_CONTROLLER`` after a controller failover), and reported their values unseen.
        """
        if op["f"] == "assign" and op.get("seek") == "beginning":
            return
        keys: set[str] = set()
        if op["f"] in ("assign", "subscribe"):
            keys.update(op["value"] or ())
        elif op["f"] in ("send", "txn"):
            keys.update(m[1] for m in op["value"] if m[0] == "send")
        if keys:
            self.topics.ensure_keys(keys)

    def invoke(self, op: Op) -> Completed:
        f = op["f"]
        if f == "send":
            return self.txns.run(op) if self.opts.txn else self.sender.send(op)
        if f == "poll":
            return self.reader.poll(op)
        if f == "txn":
            return self.txns.run(op)
        if f == "assign":
            return self.reader.assign(op)
        if f == "subscribe":
            return self.reader.subscribe(op)
        if f == "committed":
            return self.reader.committed_read(op)
        if f == "crash":
            return Completed("info", None, "crashed on purpose: the client is closed")
        raise ValueError(f"the queue client has no op {f!r}")

    def warm_up(self) -> None:
        """Connect before the run's clock starts: a producer id and a consumer. Not the
        consumer of a member that joins late (``--members-from``): a consumer with a
        group looks up its coordinator as soon as it is made, and on brokers before 0.11
        that lookup creates ``__consumer_offsets``, which such a run wants created later."""
        self.sender.producer()
        if self.reader.group is None or not self.opts.members_from_s:
            self.reader.consumer()
        self.sender.warm_up()

    def close(self) -> None:
        self.reader.close()
        self.sender.close()
