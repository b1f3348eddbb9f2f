"""A run cut short before its drain: the types needing the drain are not judged.

``without_drain`` turns a verdict into the one a run whose drain never finished
gets (``harness.base.drain``): ``unseen`` alone cannot make it invalid, a type
that needs no drain still does, and a clean history is unknown, never valid.
"""

from __future__ import annotations

from typing import Any

from checkers import exit_code, without_drain
from checkers._verdict import ANOMALY_TYPES
from harness.base.drain import NEEDS_DRAIN


def verdict(*types: str) -> dict[str, Any]:
    return {
        "valid": not types,
        "anomaly-types": list(types),
        "bad-anomaly-types": list(types),
        "anomalies": {t: [{"key": "x", "count": 3}] for t in types},
        "anomaly-counts": dict.fromkeys(types, 3),
        "stats": {"ops": 10},
    }


def test_unseen_alone_becomes_unknown_and_is_listed_as_not_judged() -> None:
    v = without_drain(verdict("unseen"))
    assert (v["valid"], exit_code(v)) == ("unknown", 2)
    assert v["anomaly-types"] == [] and v["bad-anomaly-types"] == [] and v["anomalies"] == {}
    assert v["not-judged"] == ["unseen"] and v["not-judged-counts"] == {"unseen": 3}
    assert v["error"] == "not judged: the run was cut short (unseen)"


def test_an_anomaly_needing_no_drain_still_proves_the_run_invalid() -> None:
    for kind in ("lost-write", "duplicate", "inconsistent-offsets", "G1a"):
        v = without_drain(verdict(kind, "unseen"))
        assert (v["valid"], exit_code(v)) == (False, 1), kind
        assert v["bad-anomaly-types"] == [kind] and "unseen" not in v["anomalies"]


def test_a_clean_history_cut_short_is_unknown_not_valid() -> None:
    v = without_drain(verdict(), "the run was cut short by SIGTERM")
    assert (v["valid"], v["not-judged"]) == ("unknown", ["unseen"])
    assert "not-judged-counts" not in v
    assert v["error"] == "not judged: the run was cut short by SIGTERM (unseen)"


def test_an_earlier_reason_for_unknown_is_kept_first() -> None:
    v = without_drain({**verdict(), "valid": "unknown", "error": "cycle search ran out of time"})
    assert v["error"].startswith("cycle search ran out of time; not judged")


def test_every_type_needing_the_drain_is_a_known_anomaly_type() -> None:
    assert set(ANOMALY_TYPES) >= NEEDS_DRAIN
