"""Exactly-once consume-transform-produce (docs/HISTORY-GROUPS.md): the rules, their
malformed input, and properties over a correct exactly-once model (``eos_model``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import eos_model as em
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from checkers import check_history
from checkers._verdict import without_drain
from harness.base.errors import HistoryError

SHAPES = st.builds(em.EosSettings, members=st.integers(1, 3), steps=st.integers(5, 80),
                   abort=st.booleans(), unknown=st.booleans())
SEEDS = st.integers(0, 2**32 - 1)
EXAMPLE = [  # the contract's example, with a final committed read and a drain
    {"process": 6, "type": "invoke", "f": "subscribe", "value": ["in-1"], "group": "g1"},
    {"process": 6, "type": "ok", "f": "subscribe", "value": ["in-1"], "group": "g1"},
    {"process": 0, "type": "invoke", "f": "send", "value": [["send", "in-1", 5]]},
    {"process": 0, "type": "ok", "f": "send", "value": [["send", "in-1", [3, 5]]]},
    {"process": 6, "type": "invoke", "f": "poll", "value": [["poll"]]},
    {"process": 6, "type": "ok", "f": "poll", "value": [["poll", {"in-1": [[3, 5]]}]]},
    {"process": 6, "type": "invoke", "f": "txn",
     "value": [["send", "out-0", 9], ["commit", {"in-1": 4}]], "from": [["out-0", 9, "in-1", 5]]},
    {"process": 6, "type": "ok", "f": "txn",
     "value": [["send", "out-0", [11, 9]], ["commit", {"in-1": 4}]]},
    {"process": 7, "type": "invoke", "f": "committed", "value": [["committed", ["in-1"]]],
     "group": "g1"},
    {"process": 7, "type": "ok", "f": "committed", "value": [["committed", {"in-1": 4}]],
     "group": "g1"},
    {"process": 8, "type": "invoke", "f": "poll", "value": [["poll"]]},
    {"process": 8, "type": "ok", "f": "poll", "value": [["poll", {"out-0": [[11, 9]]}]]},
]


def _indexed(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"index": i, "time": i, **op} for i, op in enumerate(ops)]


def _example() -> list[dict[str, Any]]:
    return _indexed(copy.deepcopy(EXAMPLE))


def test_the_contract_example_is_valid_and_counts_its_derivation() -> None:
    verdict = check_history(_example())
    assert verdict["valid"] is True, verdict["anomalies"]
    assert verdict["stats"]["transforms"] == 1


def test_a_second_committed_output_of_one_input_is_a_duplicate_output() -> None:
    ops = copy.deepcopy(EXAMPLE)
    ops[6:6] = [  # a zombie's transaction, committed before the member's own
        {"process": 5, "type": "invoke", "f": "txn", "value": [["send", "out-0", 8]],
         "from": [["out-0", 8, "in-1", 5]], "group": "g1"},
        {"process": 5, "type": "ok", "f": "txn", "value": [["send", "out-0", [10, 8]]]},
    ]
    ops[-1]["value"] = [["poll", {"out-0": [[10, 8], [11, 9]]}]]
    verdict = check_history(_indexed(ops))
    assert verdict["anomaly-types"] == ["duplicate-output"]
    assert verdict["anomalies"]["duplicate-output"] == [{
        "key": "in-1", "group": "g1", "value": 5, "outputs": [["out-0", 8], ["out-0", 9]],
        "writers": [7, 9], "count": 2}]


def test_an_aborted_transaction_is_no_output_and_its_read_is_g1a() -> None:
    ops = _example()
    ops[7]["type"] = "fail"
    verdict = check_history(ops)
    assert set(verdict["anomaly-types"]) == {"G1a", "missing-output", "garbage-commit"}
    assert verdict["anomalies"]["missing-output"] == [{
        "key": "in-1", "group": "g1", "offset": 4, "op": 9, "missing": [5], "count": 1}]


def test_an_unknown_transaction_counts_once_a_read_proves_it() -> None:
    ops = _example()
    ops[7]["type"] = "info"
    assert check_history(ops)["valid"] is True
    ops[11]["value"] = [["poll", {}]]  # nothing proves it: its output is missing
    verdict = check_history(ops)
    assert verdict["anomaly-types"] == ["missing-output"]


def test_inputs_at_or_above_the_final_committed_offset_are_not_judged() -> None:
    ops = _example()
    ops[9]["value"] = [["committed", {"in-1": 3}]]
    ops[7]["type"] = "fail"
    ops[11]["value"] = [["poll", {}]]
    assert "missing-output" not in check_history(ops)["anomalies"]


def test_a_cut_short_run_leaves_missing_output_unjudged_only_where_outputs_are_derived() -> None:
    ops = _example()
    ops[11]["value"] = [["poll", {}]]
    ops[7]["type"] = "info"
    cut = without_drain(check_history(ops))
    assert cut["not-judged"] == ["missing-output", "unseen"] and cut["valid"] == "unknown"
    plain = _indexed([{k: x for k, x in op.items() if k != "from"} for op in EXAMPLE])
    assert without_drain(check_history(plain))["not-judged"] == ["unseen"]


@pytest.mark.parametrize(("where", "field", "message"), [
    (6, [["out-0", 9, "in-1"]], "from must be a list of [key, value, key, value] entries"),
    (6, [["out-0", -1, "in-1", 5]], "from must be a list of [key, value, key, value] entries"),
    (6, "out-0", "from must be a list of [key, value, key, value] entries"),
    (4, [["out-0", 9, "in-1", 5]], 'from belongs on a txn op, not on a "poll" op'),
])
def test_a_malformed_from_is_malformed_input(where: int, field: Any, message: str) -> None:
    ops = _example()
    ops[where]["from"] = field
    with pytest.raises(HistoryError) as err:
        check_history(ops)
    assert message in str(err.value) and err.value.line == where + 1


@settings(max_examples=200, deadline=None)
@given(seed=SEEDS, shape=SHAPES)
def test_a_correct_exactly_once_group_is_never_flagged(seed: int, shape: em.EosSettings) -> None:
    ops = em.generate(seed, shape)
    verdict = check_history(ops)
    assert verdict["valid"] is True, json.dumps(verdict["anomalies"])[:2000]
    # a member that rewinds after an abort polls again (nonmonotonic-poll, informational
    # in a group); nothing else may be reported
    assert set(verdict["anomaly-types"]) <= {"nonmonotonic-poll"}, verdict["anomalies"]


def _committed_derivations(ops: list[dict[str, Any]]) -> list[tuple[int, list[Any]]]:
    """(op position of the invoke, entry) of ok transactions' derivations."""
    out = []
    for i, op in enumerate(ops):
        if op["type"] == "invoke" and "from" in op:
            done = next(c for c in ops[i + 1:] if c["process"] == op["process"])
            if done["type"] == "ok":
                out.extend((i, e) for e in op["from"])
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(seed=SEEDS, shape=SHAPES, pick=st.integers(0, 10**6))
def test_duplicating_one_committed_output_is_always_flagged(
    seed: int, shape: em.EosSettings, pick: int
) -> None:
    ops = em.generate(seed, shape)
    derived = _committed_derivations(ops)
    assume(derived)
    _, (ko, _, ki, v) = derived[pick % len(derived)]
    w = 10**9
    at = len(ops) - 4  # before the final committed read and the drain
    extra = [{"process": 500, "type": "invoke", "f": "txn", "value": [["send", ko, w]],
              "from": [[ko, w, ki, v]], "group": em.GROUP},
             {"process": 500, "type": "ok", "f": "txn", "value": [["send", ko, w]]}]
    ops = [{**op, "index": i, "time": i} for i, op in enumerate(ops[:at] + extra + ops[at:])]
    found = check_history(ops)["anomalies"].get("duplicate-output", [])
    assert [a for a in found if (a["key"], a["value"]) == (ki, v) and a["count"] == 2]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(seed=SEEDS, shape=SHAPES, pick=st.integers(0, 10**6))
def test_dropping_one_output_of_a_committed_input_is_always_flagged(
    seed: int, shape: em.EosSettings, pick: int
) -> None:
    ops = em.generate(seed, shape)
    final = ops[-5]["value"][0][1]  # the final committed read: {key: offset}
    offsets = {(k, v): o for op in ops if op["f"] == "send" and op["type"] == "ok"
               for _, k, (o, v) in op["value"]}
    derived = [(i, e) for i, e in _committed_derivations(ops)
               if offsets[e[2], e[3]] < (final[e[2]] or 0)]
    assume(derived)
    i, entry = derived[pick % len(derived)]
    ops[i]["from"] = [e for e in ops[i]["from"] if e != entry]
    found = check_history(ops)["anomalies"].get("missing-output", [])
    assert [a for a in found if a["key"] == entry[2] and entry[3] in a["missing"]]
