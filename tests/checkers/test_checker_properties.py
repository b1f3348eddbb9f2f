"""Property tests: valid histories from the in-memory Kafka model pass; planted faults are found.

Histories come from ``tests/support/kafka_model.py`` (several processes, random
ok/fail/info outcomes, crashed clients, assign and subscribe, transactions whose
aborts are never visible). A failing example prints its seed and settings;
``kafka_model.generate(seed, settings)`` rebuilds the history.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import kafka_model as km
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from checkers import check_history

SETTINGS = st.builds(
    km.Settings,
    ops=st.integers(10, 150),
    clients=st.integers(1, 5),
    keys=st.integers(1, 3),
    p_txn=st.sampled_from([0.0, 0.25, 0.5]),
    p_fail=st.sampled_from([0.0, 0.1, 0.3]),
    p_info=st.sampled_from([0.0, 0.05, 0.15]),
    p_assign=st.sampled_from([0.05, 0.15, 0.3]),
    p_crash=st.sampled_from([0.0, 0.03]),
    max_batch=st.integers(1, 4),
)
SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=50, deadline=None)
@given(seed=SEEDS, shape=SETTINGS, ww_deps=st.booleans())
def test_model_histories_have_no_invalid_anomaly(
    seed: int, shape: km.Settings, ww_deps: bool
) -> None:
    ops = km.generate(seed, shape)
    verdict = check_history(ops, ww_deps=ww_deps)
    assert verdict["bad-anomaly-types"] == [], verdict["anomalies"]
    judged = any(op["f"] in ("send", "poll", "txn") for op in ops)
    assert verdict["valid"] is (True if judged else verdict["valid"])
    if not judged:
        assert verdict["valid"] == "unknown"


Injector = Callable[[list[dict[str, Any]], random.Random], Any]

# (fault, the type it must produce, how to match the example, types it may drag along)
# The extras are consequences HISTORY.md's rules imply, not tolerance: dropping a record
# from every read leaves the gap its readers jumped over (int-poll-skip/poll-skip) and
# the value unread (unseen); a duplicate's position is its *last* one, so readers of the
# original copy seem to jump over a position; swapping two records inside a poll also
# breaks the pairs on either side of them.
FAULTS = [
    pytest.param(km.inject_lost_write, "lost-write", ("key", "value"),
                 {"unseen", "int-poll-skip", "poll-skip"}, id="lost-write"),
    pytest.param(km.inject_duplicate, "duplicate", ("key", "value"),
                 {"int-poll-skip", "poll-skip", "int-send-skip"}, id="duplicate"),
    pytest.param(km.inject_inconsistent_offsets, "inconsistent-offsets", ("key", "offset"),
                 set(), id="inconsistent-offsets"),
    pytest.param(km.inject_int_reorder, "int-nonmonotonic-poll", ("key", "values"),
                 {"int-poll-skip", "poll-skip"}, id="reorder-inside-a-poll"),
    pytest.param(km.inject_poll_reorder, "nonmonotonic-poll", ("key", "values"),
                 {"poll-skip"}, id="reorder-two-polls"),
    pytest.param(km.inject_g1a, "G1a", ("key", "value"), set(), id="read-a-failed-write"),
    pytest.param(km.inject_send_reorder, "nonmonotonic-send", ("key", "values"),
                 set(), id="reorder-a-producers-sends"),
]


@pytest.mark.parametrize(("inject", "kind", "fields", "extras"), FAULTS)
@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, shape=SETTINGS.filter(lambda s: s.ops >= 40))
def test_injected_fault_is_reported_where_it_was_planted(  # noqa: PLR0917 - parametrize+given
    inject: Injector,
    kind: str,
    fields: tuple[str, str],
    extras: set[str],
    seed: int,
    shape: km.Settings,
) -> None:
    ops = km.generate(seed, shape)
    assert check_history(ops)["bad-anomaly-types"] == []
    planted = inject(ops, random.Random(seed))
    assume(planted is not None)
    verdict = check_history(ops)
    found = set(verdict["anomaly-types"])
    assert kind in found
    assert found - {kind} <= extras, verdict["anomalies"]
    where = [(a[fields[0]], a[fields[1]]) for a in verdict["anomalies"][kind]]
    assert tuple(planted) in where
    if kind == "nonmonotonic-poll" and any(op["f"] == "subscribe" for op in ops):
        assert kind not in verdict["bad-anomaly-types"]  # rebalances may move consumers
    else:
        assert verdict["valid"] is False
        assert kind in verdict["bad-anomaly-types"]
