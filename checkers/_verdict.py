"""Anomaly bookkeeping and the verdict dict of docs/HISTORY.md.

Anomalies are counted exactly but only the first ``max_anomalies`` of each type
are materialised, so a badly broken 10M-op run still yields a small verdict.
True counts go in the optional ``anomaly-counts`` field (the contract may only
grow by optional fields).
"""

from __future__ import annotations

from typing import Any

from harness.base import contract
from harness.base.drain import CUT_SHORT, NEEDS_DRAIN

#: Every anomaly type's name in HISTORY.md's order, as of import (the public name;
#: code that must follow a swapped registry calls ``contract.anomaly_names()``).
ANOMALY_TYPES = contract.anomaly_names()

Anomaly = dict[str, Any]
Validity = bool | str
UNKNOWN = "unknown"


class Anomalies:
    """Collects anomalies: exact counts, bounded examples."""

    def __init__(self, max_anomalies: int) -> None:
        self.cap = max(0, max_anomalies)
        self.examples: dict[str, list[Anomaly]] = {}
        self.counts: dict[str, int] = {}

    def counted(self, kind: str) -> bool:
        """Count one anomaly; True when its example should be built and kept."""
        n = self.counts.get(kind, 0)
        self.counts[kind] = n + 1
        return n < self.cap

    def keep(self, kind: str, anomaly: Anomaly) -> None:
        """Keep an example (after ``counted`` said so)."""
        self.examples.setdefault(kind, []).append(anomaly)

    def referenced_ops(self) -> set[int]:
        """Indices of every op an example points at."""
        refs: set[int] = set()
        for examples in self.examples.values():
            for a in examples:
                refs.update(anomaly_ops(a))
        return refs


def anomaly_ops(a: Anomaly) -> list[int]:
    """Op indices an example points at, in the registry's field order, without repeats.

    The fields are the contract's (``harness.base.contract.op_fields`` and its list
    and map twins), so a new type's op fields are found without an edit here.
    """
    out: list[int] = []
    for name in contract.op_fields():
        if type(a.get(name)) is int:
            out.append(a[name])
    for name in contract.op_list_fields():
        items = a.get(name)
        if type(items) is list:
            out.extend(x for x in items if type(x) is int)
    for name in contract.op_map_fields():
        items = a.get(name)
        if type(items) is dict:
            out.extend(x for x in items.values() if type(x) is int)
    return list(dict.fromkeys(out))


def informational(*, ww_deps: bool, saw_rebalance: bool, wr_only_cycle: bool) -> set[str]:
    """Types that never make a run invalid, under this history and these options.

    The checker decides which of the contract's conditions hold
    (``harness.base.contract.InfoWhen``); the registry says which types each one excuses.
    """
    held: set[str] = set()
    if ww_deps and not wr_only_cycle:
        held.add("ww-deps")
    if saw_rebalance:
        held.add("rebalance")
    return contract.informational_types(held)


def nothing_to_judge() -> str:
    """Why a history with no op to judge is ``unknown`` (both engines say it so)."""
    return f"nothing to judge: the history has no {_either(contract.judged_fs())} operation"


def _either(names: tuple[str, ...]) -> str:
    """``send, poll or txn``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def merge(*validities: Validity) -> Validity:
    """false beats unknown beats true."""
    if any(v is False for v in validities):
        return False
    if any(v == UNKNOWN for v in validities):
        return UNKNOWN
    return True


def assemble(
    anomalies: Anomalies,
    *,
    informational_types: set[str],
    stats: dict[str, Any],
    unknown_reasons: list[str],
    ops: dict[str, dict[str, Any]],
    waits_not_held: list[str] | None = None,
    engine: str = "memory",
) -> dict[str, Any]:
    """The verdict of either engine: contract fields first, optional extras after.

    An engine other than ``memory`` looks for only some types: the verdict says
    which (``engine``, ``checked-types``, from the registry's ``engines``).

    ``waits_not_held``: the fault script's waits that did not hold and premise steps
    that did not apply (``harness.base.waits.not_as_written``). The run then did
    not test what its script meant to test, so it is ``unknown`` whatever was found
    (the anomalies are still listed); they lead the ``error``.
    """
    order = contract.anomaly_order()
    found = sorted(anomalies.counts, key=lambda t: (order.get(t, len(order)), t))
    bad = [t for t in found if t not in informational_types]
    validity = merge(not bad, UNKNOWN if unknown_reasons else True)
    if waits_not_held:
        validity = UNKNOWN
        unknown_reasons = [*waits_not_held, *unknown_reasons]
    verdict: dict[str, Any] = {
        "valid": validity,
        "anomaly-types": found,
        "bad-anomaly-types": bad,
        "anomalies": {t: anomalies.examples.get(t, []) for t in found},
        "stats": stats,
        "anomaly-counts": {t: anomalies.counts[t] for t in found},
    }
    if engine != "memory":
        verdict["engine"] = engine
        verdict["checked-types"] = list(contract.checked_by(engine))
    if waits_not_held:
        verdict["waits-not-held"] = list(waits_not_held)
    if unknown_reasons:
        verdict["error"] = "; ".join(unknown_reasons)
    if ops:
        verdict["ops"] = ops
    return verdict


def without_drain(verdict: dict[str, Any], why: str = CUT_SHORT) -> dict[str, Any]:
    """The verdict of a run whose drain did not run to its end (``harness.base.drain``).

    The types that need the drain are taken out of the judgement and listed in
    ``not-judged`` (any found stay countable in ``not-judged-counts``); with them
    unjudged the run cannot be valid, so it is ``unknown`` unless a type that needs
    no drain proves it invalid. A malformed or already unknown verdict keeps its
    own ``error`` first.
    """
    out = dict(verdict)
    drained = _drained_types(out)
    found = list(out.get("anomaly-types") or ())
    bad = list(out.get("bad-anomaly-types") or ())
    anomalies = dict(out.get("anomalies") or {})
    counts = dict(out.get("anomaly-counts") or {})
    unjudged = {t: counts.get(t, len(anomalies.get(t) or ())) for t in found if t in drained}
    out["anomaly-types"] = [t for t in found if t not in drained]
    out["bad-anomaly-types"] = [t for t in bad if t not in drained]
    out["anomalies"] = {t: a for t, a in anomalies.items() if t not in drained}
    if "anomaly-counts" in out:
        out["anomaly-counts"] = {t: n for t, n in counts.items() if t not in drained}
    out["not-judged"] = sorted(drained)
    if unjudged:
        out["not-judged-counts"] = unjudged
    note = f"not judged: {why} ({', '.join(sorted(drained))})"
    out["valid"] = False if out["bad-anomaly-types"] else UNKNOWN
    out["error"] = "; ".join(e for e in (out.get("error"), note) if e)
    return out


def _drained_types(verdict: dict[str, Any]) -> list[str]:
    """The types needing the drain that this verdict judges: a group type (exactly-once's
    ``missing-output``) only when the history transforms (``stats``' transforms),
    so every other history's cut-short verdict names ``unseen`` alone, as it always has."""
    derives = bool((verdict.get("stats") or {}).get("transforms"))
    return [t for t in NEEDS_DRAIN if derives or not contract.anomaly_type(t).groups]


#: Exit statuses of a verdict (docs/HISTORY.md): 3, malformed input, is HistoryError's.
EXIT_VALID, EXIT_INVALID, EXIT_UNKNOWN = 0, 1, 2


def exit_code(verdict: dict[str, Any]) -> int:
    """0 valid, 1 invalid, 2 unknown: what ``insync check`` and ``insync run`` exit with."""
    valid = verdict.get("valid")
    if valid is True:
        return EXIT_VALID
    if valid is False:
        return EXIT_INVALID
    return EXIT_UNKNOWN
