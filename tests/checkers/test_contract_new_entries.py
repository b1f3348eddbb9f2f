"""A new client op is one registry row plus its rules; a new anomaly type one row plus its detector.

A made-up op ``flush`` (its value is anything, as ``crash``'s) and a made-up
anomaly type ``stale-read`` are appended to ``harness.base.contract``'s
registries, as ``tests/nemesis/test_nemesis_new_kind.py`` does for a fault kind.
The checker accepts the op, its malformed-input message and the Spark engine's
rules name it, and its code unpacks from the per-line layout; the type's
detector (the one piece of code a new type needs, here a wrapper around the
per-key analyses) reports it, and the verdict's order, validity, informational
rule and op details, the summary's severity order, the report's op fields, the
JUnit output and the scenario files all follow the row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from history_builder import Hist

import checkers._check
from checkers import check_history
from checkers._analyses import analyse_key
from checkers._key_state import KeyState
from checkers._verdict import Anomalies
from checkers._versions import VersionOrder
from harness.base import contract
from harness.base.contract import ANOMALY_TYPES, CLIENT_OPS, AnomalyType, ClientOp
from harness.base.errors import HistoryError
from results.report.anomaly_view import anomaly_ops
from results.report.junit import junit_xml
from results.report.summary import render_summary

FLUSH = ClientOp("flush", 7, "any")
STALE = AnomalyType("stale-read", "a read returned a value older than one already read",
                    ("key", "value", "op"), 25, "isolation", op_fields=("op",))


def _detector(key: str, ks: KeyState, vo: VersionOrder, proven: set[int],
              out: Anomalies) -> None:
    """The made-up type's detector: every key read by an ``ok`` op gives one, at its reader."""
    analyse_key(key, ks, vo, proven, out)
    for value, reader in sorted(ks.ok_reads.items())[:1]:
        if out.counted("stale-read"):
            out.keep("stale-read", {"key": key, "value": value, "op": reader})


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(contract, "CLIENT_OPS", (*CLIENT_OPS, FLUSH))
    monkeypatch.setattr(contract, "ANOMALY_TYPES", (*ANOMALY_TYPES, STALE))
    monkeypatch.setattr(checkers._check, "analyse_key", _detector)
    yield


def _history() -> list[dict[str, Any]]:
    h = Hist()
    h.send(0, "x", 1, 0)
    h.invoke(1, "flush", ["x"])
    h.done(1, "ok", "flush", ["x"])
    h.poll(2, {"x": [[0, 1]]})
    return h.ops


def test_the_checker_accepts_the_new_op_and_names_it() -> None:
    verdict = check_history(_history())
    assert verdict["stats"]["client-ops"] == 3
    assert contract.f_names()[FLUSH.code] == "flush"
    packed = contract.pack_meta(5, FLUSH.code, contract.OK)
    assert contract.unpack_meta(packed) == (5, FLUSH.code, contract.OK)


def test_an_unknown_op_is_still_malformed_and_the_message_lists_the_new_one() -> None:
    h = Hist()
    h.invoke(0, "fsync", ["x"])
    with pytest.raises(HistoryError) as err:
        check_history(h.ops)
    assert "flush" in str(err.value.hint)


def test_the_spark_rules_know_the_new_op() -> None:
    assert "flush" in contract.client_fs()
    assert "flush" not in contract.mop_fs() | contract.key_list_fs()


def test_the_new_type_is_reported_in_registry_order_and_makes_the_run_invalid() -> None:
    verdict = check_history(_history())
    assert verdict["valid"] is False
    assert verdict["anomaly-types"][-1] == "stale-read"
    assert "stale-read" in verdict["bad-anomaly-types"]
    (example,) = verdict["anomalies"]["stale-read"]
    # its op field is found from the row: the verdict's op details name the reader
    assert verdict["ops"][str(example["op"])]["f"] == "poll"
    assert anomaly_ops(example) == [example["op"]]


def test_its_informational_rule_comes_from_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = AnomalyType(STALE.name, STALE.meaning, STALE.fields, STALE.severity, STALE.group,
                        informational="always", op_fields=("op",))
    monkeypatch.setattr(contract, "ANOMALY_TYPES", (*ANOMALY_TYPES, quiet))
    verdict = check_history(_history())
    assert "stale-read" in verdict["anomaly-types"]
    assert "stale-read" not in verdict["bad-anomaly-types"]


def test_reports_rank_and_list_it() -> None:
    verdict = check_history(_history())
    summary = render_summary(verdict, None)
    rows = [line.split()[0] for line in summary.splitlines()[2:] if line.startswith("  ")
            and not line.startswith("   ")]
    # severity 25: after garbage-read (20), before G1a (30)
    assert contract.by_severity().index("stale-read") == 3
    assert rows.index("stale-read") < rows.index("unseen")
    assert 'name="stale-read"' in junit_xml(verdict, "t")
