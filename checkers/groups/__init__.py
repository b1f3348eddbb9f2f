"""Consumer groups and committed offsets: the rules of docs/HISTORY-GROUPS.md.

``judge_groups(ops, out)`` gathers the group facts of a well-formed history
(``checkers.groups._model``) and reports ``lost-commit``, ``commit-skip`` and
``garbage-commit`` into ``out``, and for exactly-once transactions (``from``)
``duplicate-output`` and ``missing-output`` (``checkers.groups._eos``); it returns
the ``stats`` fields the extension adds (absent when zero). The scanner decides
whether a history uses the extension at all (``Collector.saw_groups``): one that
does not never comes here, which is what keeps every other history's verdict exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checkers._verdict import Anomalies
from checkers.groups._eos import duplicate_outputs, missing_outputs
from checkers.groups._model import gather
from checkers.groups._rules import commit_skips, garbage_commits, lost_commits
from harness.base import contract

#: The anomaly types of the extension, in the contract's order.
GROUP_TYPES = contract.group_types()


def judge_groups(ops: Iterable[dict[str, Any]], out: Anomalies) -> dict[str, int]:
    """Judge the group rules of a well-formed history; returns its extra ``stats``."""
    facts = gather(ops)
    required = facts.required()
    lost_commits(facts, required, out)
    commit_skips(facts, required, out)
    garbage_commits(facts, out)
    duplicate_outputs(facts, out)
    missing_outputs(facts, required, out)
    stats = {"commits": facts.commit_count, "committed-reads": facts.read_count,
             "transforms": len(facts.derivations)}
    return {name: n for name, n in stats.items() if n}


__all__ = ["GROUP_TYPES", "judge_groups"]
