"""The collector's one-poll and one-send fast paths must build what the general path builds."""

from __future__ import annotations

import random
from typing import Any

import kafka_model as km
from hypothesis import given, settings
from hypothesis import strategies as st
from test_checker_parallel import INJECTORS, SETTINGS

from checkers._check import _judge
from checkers._collect import Collector
from checkers._history import Scanner
from checkers._verdict import Anomalies


def _verdict(ops: list[dict[str, Any]], *, fast: bool) -> dict[str, Any]:
    collector = Collector()
    collector.fast_paths = fast
    scanner = Scanner(collector)
    scanner.feed_all(ops)
    return _judge(
        collector, scanner, Anomalies(1000), ww_deps=True, budget_s=60.0, again=lambda: ops
    )


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=SETTINGS,
    inject=st.integers(0, len(INJECTORS) - 1),
)
def test_fast_and_general_paths_give_one_verdict(
    seed: int, shape: km.Settings, inject: int
) -> None:
    ops = km.generate(seed, shape)
    injector = INJECTORS[inject]
    if injector is not None:
        injector(ops, random.Random(seed))
    fast = _verdict(ops, fast=True)
    assert fast == _verdict(ops, fast=False)
    assert fast["stats"]["client-ops"] > 0
