"""The history-contract registry: consistent entries, every list of the contract derived from it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import harness.base
from harness.base import contract
from harness.base.contract import (
    ANOMALY_TYPES,
    CLIENT_OPS,
    NEMESIS_F,
    anomaly_names,
    by_severity,
    checked_by,
    client_fs,
    f_codes,
    informational_types,
    needing_drain,
    pack_meta,
    unpack_meta,
)

ROOT = Path(__file__).resolve().parents[2]
INSYNC = ("harness", "cluster", "nemesis", "workloads", "checkers", "results")


def test_entries_are_unique_and_codes_fit_the_layout() -> None:
    assert len(set(client_fs())) == len(CLIENT_OPS)
    assert len(set(f_codes().values())) == len(CLIENT_OPS)
    assert NEMESIS_F not in f_codes().values()
    assert len(set(anomaly_names())) == len(ANOMALY_TYPES)
    assert len({t.severity for t in ANOMALY_TYPES}) == len(ANOMALY_TYPES), "ties in severity"


@given(st.integers(-1, 2**40), st.integers(0, NEMESIS_F), st.integers(0, 3))
def test_the_packed_layout_round_trips(process: int, f_code: int, kind: int) -> None:
    assert unpack_meta(pack_meta(process, f_code, kind)) == (process, f_code, kind)


def test_the_nemesis_line_packs_to_process_minus_one() -> None:
    assert unpack_meta(contract.NEMESIS_META) == (-1, NEMESIS_F, 0)


def test_the_checker_scans_with_the_registry_tables() -> None:
    from checkers._check import _op_details  # noqa: F401 - unpacks with contract.unpack_meta
    from checkers._collect import Collector
    from checkers._history import Scanner

    scanner = Scanner(Collector())
    assert scanner.f_codes == f_codes()
    assert scanner.mop_fs == {"send", "poll", "txn"} == contract.mop_fs()
    assert scanner.key_list_fs == {"assign", "subscribe"} == contract.reset_fs()
    assert contract.rebalance_fs() == {"subscribe"}


def test_the_malformed_message_lists_the_registry_ops() -> None:
    from checkers._malformed import f_error

    assert ", ".join(client_fs()) in str(f_error("fsync", 3).hint)


def test_the_workload_draws_the_registry_ops() -> None:
    from harness.base.contract import group_fs
    from workloads.queue.shape import OPS

    assert tuple(f for f in client_fs() if f not in group_fs()) == OPS
    assert group_fs() == {"commit", "committed"}, "the workload never performs these"


def test_the_verdict_order_and_names_are_the_registry() -> None:
    import checkers
    from checkers._explain import _EXPLAIN
    from harness.scenario import load  # noqa: F401 - checks scenario names with anomaly_names

    assert anomaly_names() == checkers.ANOMALY_TYPES
    assert tuple(_EXPLAIN) == anomaly_names(), "every type has its sentence, in order"


def test_the_informational_rule_is_the_registry() -> None:
    from checkers._verdict import informational

    assert informational(ww_deps=False, saw_rebalance=False, wr_only_cycle=False) == {
        "int-send-skip", "G0"}
    assert informational(ww_deps=True, saw_rebalance=False, wr_only_cycle=False) == {
        "int-send-skip", "G0", "G1c"}
    assert informational(ww_deps=True, saw_rebalance=False, wr_only_cycle=True) == {
        "int-send-skip", "G0"}
    assert informational(ww_deps=False, saw_rebalance=True, wr_only_cycle=False) == {
        "int-send-skip", "G0", "poll-skip", "nonmonotonic-poll"}
    assert informational_types(set()) == {"int-send-skip", "G0"}


def test_the_spark_engine_checks_the_types_the_registry_gives_it() -> None:
    from checkers.spark import CHECKED_TYPES

    assert CHECKED_TYPES == checked_by("spark") == (
        "lost-write", "unseen", "duplicate", "inconsistent-offsets")


def test_the_analysis_counts_every_invalidating_type_once() -> None:
    from results.analysis.ingest import RUN_SCHEMA
    from results.analysis.tables import METRIC_COLUMNS, SHORT, TERMINAL_METRICS

    groups = contract.analysis_groups()
    counted = [t for names in groups.values() for t in names]
    assert sorted(counted) == sorted(contract.invalidating_types())
    assert "int-send-skip" not in counted
    assert groups["ordering_violations"] == (
        "nonmonotonic-send", "int-nonmonotonic-send", "poll-skip", "nonmonotonic-poll",
        "int-poll-skip", "int-nonmonotonic-poll")
    for column in groups:
        assert f"{column} long" in RUN_SCHEMA
        assert SHORT.get(column, column) in METRIC_COLUMNS
    assert "anomalies" in TERMINAL_METRICS


def test_only_unseen_and_missing_output_need_the_drain() -> None:
    """Both are absences: an unseen value, and an output an info transaction may have
    committed, are proven only by the drain's reads."""
    assert needing_drain() == ("unseen", "missing-output")


def test_reports_rank_by_the_registry_severity() -> None:
    from results.report.summary import _rank

    assert sorted(anomaly_names(), key=_rank) == list(by_severity())
    assert by_severity()[:3] == ("lost-write", "inconsistent-offsets", "garbage-read")
    assert by_severity()[-1] == "int-send-skip"


def test_the_report_names_every_op_field_including_writers_and_witnesses() -> None:
    from results.report.anomaly_view import anomaly_ops

    assert anomaly_ops({"key": "x", "writers": [4, 6]}) == [4, 6]
    assert anomaly_ops({"key": "x", "witnesses": {"1": 3, "2": 9}}) == [3, 9]
    assert anomaly_ops({"writer": 1, "max-read": 5, "cycle": [1, 7]}) == [1, 5, 7]


def test_outcomes_are_one_numbering() -> None:
    from harness.base.history import COMPLETIONS, NEMESIS
    from results.report.history_table import TYPE_CODE
    from results.report.plot_data import OUTCOMES

    assert OUTCOMES == contract.OUTCOMES
    assert set(contract.OUTCOMES) == COMPLETIONS
    assert NEMESIS is contract.NEMESIS
    # the report's column is the position in OUTCOMES: code - OK
    assert {n: OUTCOMES[i] for n, i in TYPE_CODE.items()} == {n: n for n in OUTCOMES}
    assert all(TYPE_CODE[n] == contract.TYPE_CODES[n] - contract.OK for n in OUTCOMES)


def _literal_lists(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """Every tuple, list or set literal whose elements are all strings."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            out.append((node.lineno, [e.value for e in node.elts]))  # type: ignore[attr-defined]
    return out


def test_no_product_module_spells_a_list_of_the_contract_again() -> None:
    """A literal of three or more client ops, or anomaly types, and nothing else is the
    registry's to hold. Tables keyed by them (a workload's weight per op, a sentence per
    type) and lists of other things that share a name (the Kafka client's calls:
    ``produce``, ``send``, ``txn-begin``...) are not lists of the contract."""
    ops, types = set(client_fs()), set(anomaly_names())
    spelled = []
    for top in INSYNC:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == ROOT / "harness" / "base" / "contract.py" or "_synth" in path.parts:
                continue
            for line, names in _literal_lists(ast.parse(path.read_text())):
                for known in (ops, types):
                    if len(set(names) & known) >= 3 and set(names) <= known:
                        spelled.append(f"{path.relative_to(ROOT)}:{line}")
    assert spelled == []


def test_the_spelling_check_sees_a_list_spelled_again() -> None:
    tree = ast.parse('X = ("send", "poll", "txn")\nY = ("send", "poll", "produce", "txn-begin")')
    found = [names for _, names in _literal_lists(tree)
             if len(set(names) & set(client_fs())) >= 3 and set(names) <= set(client_fs())]
    assert found == [["send", "poll", "txn"]]


def test_it_stays_on_the_ground_floor() -> None:
    """The registry and its anomaly table import nothing of insync but each other."""
    from harness.base import anomaly_types

    for module in (contract, anomaly_types):
        tree = ast.parse(Path(module.__file__ or "").read_text())
        imported = {alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module or "" for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom)}
        imported -= {anomaly_types.__name__}
        tops = {name.split(".")[0] for name in imported}
        assert not tops & set(INSYNC), f"{module.__name__} imports nothing of insync"
        assert Path(module.__file__ or "").parent == Path(harness.base.__file__).parent
    assert Path(contract.__file__).parent == Path(harness.base.__file__).parent
    assert "harness.base.contract" in sys.modules


def test_the_group_extension_is_registry_rows() -> None:
    """docs/HISTORY-GROUPS.md's ops and types: the checker's tables follow the rows."""
    from checkers.groups import GROUP_TYPES
    from checkers.groups._shape import ALLOWED_IN, ONLY
    from checkers.spark.group_rules import GROUP_FS, HAS_GROUP_MOP

    assert contract.f_codes()["commit"] == 6 and contract.f_codes()["committed"] == 8
    assert contract.group_fs() == {"commit", "committed"} == set(GROUP_FS)
    assert "commit" in contract.judged_fs() and "committed" in contract.judged_fs()
    assert GROUP_TYPES == contract.group_types() == (
        "lost-commit", "commit-skip", "garbage-commit", "duplicate-output", "missing-output")
    assert all(contract.anomaly_type(t).engines == ("memory",) for t in GROUP_TYPES)
    assert set(GROUP_TYPES) & set(needing_drain()) == {"missing-output"}
    assert ALLOWED_IN == {"commit": ("poll", "txn", "commit"),
                          "committed": ("poll", "txn", "committed"),
                          "assigned": ("poll", "txn"), "revoked": ("poll", "txn")}
    assert ONLY == {"commit": "commit", "committed": "committed"}
    assert all(tag in HAS_GROUP_MOP for tag in ALLOWED_IN)
