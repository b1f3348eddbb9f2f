"""``checkers.replicas``: replicas that differ at an offset diverge; a lagging one does not."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from checkers.replicas import MAX_LISTED, compare_replicas, summarize

LEADER = {o: str(100 + o) for o in range(10)}


def test_a_lagging_replica_and_an_absent_one_are_not_divergence() -> None:
    out = compare_replicas({"n1": LEADER, "n2": {o: LEADER[o] for o in range(6)}, "n3": None})
    assert out["valid"] is True and out["diverged"] == 0
    assert out["replicas"] == {"n1": {"records": 10, "first": 0, "last": 9},
                               "n2": {"records": 6, "first": 0, "last": 5}}


def test_two_replicas_with_different_records_at_an_offset_diverge() -> None:
    other = {**LEADER, 7: "555", 8: "556"}
    out = compare_replicas({"n1": LEADER, "n2": other})
    assert out["valid"] is False and out["diverged"] == 2
    assert out["offsets"][0] == {"offset": 7, "values": {"n1": "107", "n2": "555"}}


def test_fewer_than_two_readable_replicas_is_unknown_and_says_why() -> None:
    out = compare_replicas({"n1": LEADER, "n2": None}, {"n3": "exited 1: no such file"})
    assert out["valid"] == "unknown" and "1 replica(s)" in out["reason"]
    assert out["unreadable"] == {"n3": "exited 1: no such file"}


def test_the_listed_offsets_are_capped_but_the_count_is_whole() -> None:
    n = MAX_LISTED + 5
    out = compare_replicas({"n1": {o: "a" for o in range(n)}, "n2": {o: "b" for o in range(n)}})
    assert out["diverged"] == n and len(out["offsets"]) == MAX_LISTED


def test_summary_is_false_if_any_diverged_and_unknown_if_any_was_not_compared() -> None:
    ok, bad, unk = {"valid": True}, {"valid": False}, {"valid": "unknown"}
    assert summarize({"a": ok, "b": bad, "c": unk})["valid"] is False
    assert summarize({"a": ok, "c": unk})["valid"] == "unknown"
    assert summarize({"a": ok, "b": ok})["valid"] is True
    assert summarize({})["valid"] == "unknown"


logs = st.dictionaries(st.integers(0, 50), st.text("0123456789", min_size=1, max_size=4),
                       min_size=1)


@given(log=logs, cuts=st.lists(st.integers(0, 60), min_size=1, max_size=4))
def test_prefixes_of_one_log_never_diverge(log: dict[int, str], cuts: list[int]) -> None:
    replicas = {"n0": log, **{f"n{i + 1}": {o: v for o, v in log.items() if o < c}
                              for i, c in enumerate(cuts)}}
    assert compare_replicas(replicas)["valid"] in (True, "unknown")


@given(log=logs, data=st.data())
def test_one_changed_record_held_twice_always_diverges(log: dict[int, str],
                                                       data: st.DataObject) -> None:
    offset = data.draw(st.sampled_from(sorted(log)))
    changed = {**log, offset: log[offset] + "x"}
    out = compare_replicas({"n1": log, "n2": changed})
    assert out["valid"] is False and out["diverged"] == 1
    assert out["offsets"][0]["offset"] == offset


def test_a_log_that_went_back_fails_the_comparison_even_where_the_values_agree() -> None:
    out = compare_replicas({"n1": LEADER, "n2": LEADER}, backwards={"n2": [(9, 4)], "n1": []})
    assert out["valid"] is False and out["diverged"] == 0
    assert out["backwards"] == {"n2": {"count": 1, "first": [[9, 4]]}}
    alone = compare_replicas({"n1": LEADER, "n2": None}, backwards={"n1": [(9, 4)]})
    assert alone["valid"] is False  # one readable replica is enough to show it
    assert summarize({"a": out})["offsets-backwards"] is True
    assert summarize({"a": compare_replicas({"n1": LEADER, "n2": LEADER})})[
        "offsets-backwards"] is False
