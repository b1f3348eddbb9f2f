"""``Topics``: the queue workload's topics, prefixed per run and created on demand."""

from __future__ import annotations

import pytest
from kafka_fakes import topics

from workloads.queue.topics import topic_number


def test_topic_names_are_prefixed_and_keys_map_back() -> None:
    t = topics()
    assert t.real("t3-5") == ("run1-t3", 5)
    assert t.key("run1-t3", 5) == "t3-5"
    assert topic_number("t12") == 12
    with pytest.raises(ValueError):
        topic_number("x1")


def test_ensure_creates_the_topic_and_the_next_ones() -> None:
    t = topics()
    t.ensure_keys(["t0-1", "t0-2"])
    assert t.created == ["run1-t0", "run1-t1", "run1-t2"]
