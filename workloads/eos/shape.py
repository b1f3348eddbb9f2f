"""The exactly-once workload's fixed shape: its topics, keys, group and values.

Input records are written to topic ``t0``; each member of group ``g1`` writes
the output of an input of ``t0-P`` to ``t1-P``. Keys are the queue's
(``t<topic>-<partition>``), so the queue's topics, drain and checker serve.
"""

from __future__ import annotations

from harness.base.contract import parse_key

#: Partitions of the input and of the output topic.
PARTITIONS = 8
INPUT_TOPIC, OUTPUT_TOPIC = 0, 1
INPUT_KEYS: tuple[str, ...] = tuple(f"t{INPUT_TOPIC}-{p}" for p in range(PARTITIONS))
#: The one consumer group, as histories name it.
GROUP = "g1"
#: One client thread in this many writes inputs; the others are members of the group.
PRODUCER_EVERY = 3
#: An output value is ``process << OUTPUT_SHIFT | n``: unique per key for the whole
#: run (a process number is never reused), and far from the inputs' small values.
OUTPUT_SHIFT = 32


def output_key(input_key: str) -> str:
    """The key an input's output goes to: the same partition of the output topic."""
    return f"t{OUTPUT_TOPIC}-{parse_key(input_key)[1]}"


def is_producer(thread: object) -> bool:
    """Whether a client thread writes inputs (the others transform them)."""
    return isinstance(thread, int) and thread % PRODUCER_EVERY == 0
