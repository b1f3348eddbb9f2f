"""Turning a verdict into sentences a person can check against the history.

Every sentence names the op indices (and processes, from the verdict's optional
``ops`` field) that prove the anomaly, so a reader can ``grep`` the history for
them. Output is bounded: a few examples per type, with the true count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from checkers._rewinds import describe_rewinds
from checkers._stalls import describe_stall
from checkers._unread import MIN_S as MIN_UNREAD_S
from checkers._unread_spans import unread_intervals

Anomaly = dict[str, Any]

#: Examples shown per anomaly type in the human rendering.
SHOWN_PER_TYPE = 10


def render_verdict(verdict: dict[str, Any], *, per_type: int = SHOWN_PER_TYPE) -> str:
    """A verdict for a person: the outcome, then each anomaly type with explained examples."""
    ops: dict[str, dict[str, Any]] = verdict.get("ops", {})
    stats = verdict.get("stats", {})
    lines = [_headline(verdict), _stats_line(stats), *_stall_lines(stats), *_unread_lines(stats),
             *_rewind_lines(stats)]
    if verdict.get("error"):
        lines.append(f"Could not decide everything: {verdict['error']}.")
    for kind, n in (verdict.get("not-judged-counts") or {}).items():
        lines.append(f"{kind}: {n} found, not judged: the drain never read everything back, "
                     "so these may simply be unread.")
    bad = set(verdict.get("bad-anomaly-types", []))
    counts = verdict.get("anomaly-counts", {})
    anomalies = verdict.get("anomalies", {})
    for kind in verdict.get("anomaly-types", []):
        examples = anomalies.get(kind, [])
        total = counts.get(kind, len(examples))
        label = "makes the run invalid" if kind in bad else "informational"
        lines.append("")
        lines.append(f"{kind}: {total} found ({label}).")
        explain = _EXPLAIN.get(kind, _generic)
        for a in examples[:per_type]:
            lines.append("  - " + explain(a, _Ops(ops)))
        hidden = total - min(len(examples), per_type)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more (--json lists up to {len(examples)}).")
    return "\n".join(lines)


def _headline(verdict: dict[str, Any]) -> str:
    valid = verdict.get("valid")
    bad = verdict.get("bad-anomaly-types", [])
    if valid is True:
        found = verdict.get("anomaly-types", [])
        extra = f" (informational only: {', '.join(found)})" if found else ""
        return f"VALID: no anomaly that makes the run invalid{extra}."
    if valid is False:
        return f"INVALID: {', '.join(bad)}."
    return "UNKNOWN: the checker could not decide."


def _stats_line(stats: dict[str, Any]) -> str:
    if not stats:
        return ""
    text = (
        f"{stats.get('ops', 0)} ops: {stats.get('ok', 0)} ok, {stats.get('fail', 0)} fail, "
        f"{stats.get('info', 0)} info client completions"
    )
    if stats.get("never-completed"):
        text += f" ({stats['never-completed']} never completed, counted as info)"
    return text + f"; {stats.get('nemesis-ops', 0)} nemesis ops; {stats.get('keys', 0)} keys."


def _rewind_lines(stats: dict[str, Any]) -> list[str]:
    """Where consumers read after aborted transactions (a measure: never the verdict)."""
    block = stats.get("abort-rewinds")
    text = describe_rewinds(block) if isinstance(block, dict) else ""
    return [f"Reads after aborted transactions (informational): {text}."] if text else []


def _stall_lines(stats: dict[str, Any]) -> list[str]:
    """The longest read_committed stall (a liveness measure: it never changes the verdict)."""
    block = stats.get("read-committed-stalls")
    if not isinstance(block, dict) or not block.get("stalls"):
        return []
    stalls = block["stalls"]
    return [f"Longest read_committed stall (liveness, not an anomaly; {len(stalls)} "
            f"key{'s' if len(stalls) != 1 else ''} stalled): {describe_stall(stalls[0])}."]


def _unread_lines(stats: dict[str, Any]) -> list[str]:
    """The longest time a group left a key unread (a liveness measure: never the verdict)."""
    block = stats.get("group-unread-keys")
    if not isinstance(block, dict) or not (found := unread_intervals(block)):
        return []
    n = len(found)
    return [f"Longest unread key of a consumer group (liveness, not an anomaly; {n} "
            f"interval{'s' if n != 1 else ''} of {MIN_UNREAD_S:g} s or more): "
            f"{_longest_unread(*found[0])}."]


def _longest_unread(group: Any, part: str, i: Mapping[str, Any]) -> str:
    """One interval of a ``group-unread-keys`` block (the longest, ``unread_intervals``'
    first) in words: ``g1 t0-6: 57.5 s unread, from 55.4 s to 112.9 s: process 19 held
    it (op 9247) and returned nothing in 486 empty polls (ops 9263..23859) while offset
    464 (value 464, op 5696) was readable; until the end of the run``."""
    head = (f"{group} {i.get('key')}: {i.get('seconds')} s "
            f"{'unowned' if part == 'unowned' else 'unread'}, from {i.get('start-s')} s to "
            f"{i.get('end-s')} s: ")
    if part == "unowned":
        body = (f"no member held it after op {i.get('released-by')} ({i.get('released')}), "
                f"while members polled {i.get('member-polls')} times")
    else:
        held = i.get("held-back") or {}
        body = (f"process {i.get('process')} held it (op {i.get('assigned-by')}) and returned "
                f"nothing in {i.get('empty-polls')} empty polls (ops {i.get('first-poll')}.."
                f"{i.get('last-poll')}) while offset {held.get('offset')} (value "
                f"{held.get('value')}, op {held.get('op')}) was readable")
    end = ("until the end of the run" if i.get("until-end")
           else f"ended by op {i.get('ended-by')} ({i.get('ended')}) at {i.get('ended-s')} s")
    return f"{head}{body}; {end}"


class _Ops:
    """Names ops as 'op 12 (process 3)'."""

    def __init__(self, ops: dict[str, dict[str, Any]]) -> None:
        self.ops = ops

    def __call__(self, index: Any) -> str:
        if index is None:
            return "an op"
        info = self.ops.get(str(index))
        if not info:
            return f"op {index}"
        detail = f"process {info['process']}"
        if info.get("never-completed"):
            detail += ", never completed"
        elif info.get("type") != "ok":
            detail += f", {info.get('type')}"
        return f"op {index} ({detail})"

    def outcome(self, index: Any) -> str | None:
        info = self.ops.get(str(index))
        return None if not info else str(info.get("type"))


def _values(values: list[Any], limit: int = 8) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (", ..." if len(values) > limit else "")


def _lost_write(a: Anomaly, op: _Ops) -> str:
    how = "acknowledged" if op.outcome(a["writer"]) in (None, "ok") else "proven committed"
    return (
        f"value {a['value']} of {a['key']} was {how} at offset {a.get('offset', '?')} by "
        f"{op(a['writer'])} but no read saw it, although {op(a['max-read'])} read offset "
        f"{a.get('max-read-offset', '?')} (version-order position {a['max-read-index']}, "
        f"at or past this value's position {a['index']})."
    )


def _unseen(a: Anomaly, op: _Ops) -> str:
    writers = a.get("writers") or []
    sent = ", ".join(
        f"{v} by {op(w)}" for v, w in zip(a["values"][:4], writers[:4], strict=False)
    )
    return (
        f"{a['count']} value(s) of {a['key']} acknowledged by ok sends were never read by any "
        f"ok poll by the end of the run: {_values(a['values'])}"
        + (f" (sent: {sent}{', ...' if len(writers) > 4 else ''})." if sent else ".")
    )


def _duplicate(a: Anomaly, op: _Ops) -> str:
    who = ""
    if a.get("writer") is not None:
        who += f"; it was sent once, by {op(a['writer'])}"
    if a.get("reader") is not None:
        who += f", and read by {op(a['reader'])}"
    return (
        f"value {a['value']} of {a['key']} appears at {a['count']} offsets "
        f"({_values(a['offsets'])}){who}."
    )


def _inconsistent(a: Anomaly, op: _Ops) -> str:
    witnesses = a.get("witnesses") or {}
    seen = "; ".join(
        f"{v} seen by {op(witnesses[str(v)])}"
        for v in a["values"][:4]
        if witnesses.get(str(v)) is not None
    )
    return (
        f"offset {a['offset']} of {a['key']} (position {a['index']}) holds "
        f"{len(a['values'])} different values ({_values(a['values'])}): replicas diverged"
        + (f" ({seen})." if seen else ".")
    )


def _nonmonotonic_send(a: Anomaly, op: _Ops) -> str:
    first, second = a["ops"]
    v1, v2 = a["values"]
    return (
        f"{op(second)} sent {v2} to {a['key']}, landing {-a['delta']} position(s) at or before "
        f"{v1}, which the same process sent earlier in {op(first)}."
    )


def _int_nonmonotonic_send(a: Anomaly, op: _Ops) -> str:
    v1, v2 = a["values"]
    return (
        f"inside {op(a['op'])}, the send of {v2} to {a['key']} landed at or before the "
        f"earlier send of {v1} (delta {a['delta']})."
    )


def _int_send_skip(a: Anomaly, op: _Ops) -> str:
    v1, v2 = a["values"]
    return (
        f"inside {op(a['op'])}, consecutive sends of {v1} and {v2} to {a['key']} are "
        f"{a['delta']} positions apart: {_values(a['skipped'])} landed between them."
    )


def _poll_skip(a: Anomaly, op: _Ops) -> str:
    first, second = a["ops"]
    return (
        f"{op(second)} resumed reading {a['key']} {a['delta']} positions past where the same "
        f"process's previous ok read {op(first)} stopped, skipping {_values(a['skipped'])}."
    )


def _nonmonotonic_poll(a: Anomaly, op: _Ops) -> str:
    first, second = a["ops"]
    v1, v2 = a["values"]
    return (
        f"{op(second)} resumed reading {a['key']} at {v2}, at or before {v1} which the same "
        f"process's previous ok read {op(first)} had already returned (delta {a['delta']})."
    )


def _int_poll_skip(a: Anomaly, op: _Ops) -> str:
    v1, v2 = a["values"]
    return (
        f"inside {op(a['op'])}, reads of {a['key']} jumped from {v1} to {v2}, skipping "
        f"{_values(a['skipped'])}."
    )


def _int_nonmonotonic_poll(a: Anomaly, op: _Ops) -> str:
    v1, v2 = a["values"]
    return (
        f"inside {op(a['op'])}, reads of {a['key']} went backwards or repeated: {v2} came "
        f"right after {v1} (delta {a['delta']})."
    )


def _g1a(a: Anomaly, op: _Ops) -> str:
    return (
        f"{op(a['reader'])} read value {a['value']} of {a['key']}, sent by {op(a['writer'])} "
        f"whose send failed: an aborted write became visible."
    )


def _precommitted(a: Anomaly, op: _Ops) -> str:
    return (
        f"{op(a['op'])} read value {a['value']} of {a['key']} that it sent itself, before "
        f"its commit."
    )


def _garbage(a: Anomaly, op: _Ops) -> str:
    return (
        f"{op(a['op'])} read value {a['value']} of {a['key']}, which no operation in the "
        f"history sent."
    )


def _cycle(a: Anomaly, op: _Ops) -> str:
    cycle = a["cycle"][:-1] if len(a["cycle"]) > 1 else a["cycle"]
    names = {index: f"T{i + 1}" for i, index in enumerate(cycle)}
    who = ", ".join(f"{names[i]} = {op(i)}" for i in cycle)
    reasons = []
    for step in a["steps"]:
        t1, t2 = names[step["from"]], names[step["to"]]
        if step["type"] == "wr":
            why = f"{t2} read {t1}'s write of {step['value']} to {step['key']}"
        else:
            v1, v2 = step["values"]
            why = (
                f"{t2}'s {v2} follows {t1}'s {v1} in {step['key']}'s version order"
            )
        reasons.append(f"{t1} < {t2} because {why}")
    return (
        f"a cycle of {len(cycle)} transactions ({who}): " + "; ".join(reasons)
        + f"; so {names[cycle[0]]} would have to precede itself."
    )


def _group(a: Anomaly) -> str:
    return "the default group" if a.get("group") is None else f"group {a['group']}"


def _lost_commit(a: Anomaly, op: _Ops) -> str:
    how = (
        f"{op(a['op'])} read its committed offset as {a['read']}"
        if a.get("via") == "committed"
        else f"a member that started on it first read offset {a['read']}, in {op(a['op'])}"
    )
    values = a.get("values") or []
    again = f"; it will receive again {_values(values)}" if values else ""
    return (
        f"{_group(a)} had committed offset {a['offset']} of {a['key']} (established by "
        f"{op(a['writer'])}), then {how}, and no commit explains the step back{again}."
    )


def _commit_skip(a: Anomaly, op: _Ops) -> str:
    how = {
        "commit": f"{op(a['op'])} committed offset {a['offset']}",
        "committed": f"{op(a['op'])} read committed offset {a['offset']}",
    }.get(str(a.get("via")), f"a member started at offset {a['offset']} (first read in "
                             f"{op(a['op'])}) above the last commit")
    return (
        f"{how} of {a['key']} for {_group(a)}, passing over {a['count']} record(s) no member "
        f"of the group had received: {_values(a['skipped'])}."
    )


def _garbage_commit(a: Anomaly, op: _Ops) -> str:
    writer = (
        f"; only {op(a['writer'])}, which was aborted, committed it"
        if a.get("writer") is not None else ""
    )
    return (
        f"{op(a['op'])} read committed offset {a['offset']} of {a['key']} for {_group(a)}, "
        f"which no commit of the group could have written{writer}."
    )


def _duplicate_output(a: Anomaly, op: _Ops) -> str:
    pairs = zip(a["outputs"], a["writers"], strict=False)
    outputs = ", ".join(f"{ko}:{w} (by {op(i)})" for (ko, w), i in pairs)
    return (
        f"input {a['value']} of {a['key']} in {_group(a)} has {a['count']} committed outputs: "
        f"{outputs}; exactly-once allows one."
    )


def _missing_output(a: Anomaly, op: _Ops) -> str:
    return (
        f"{_group(a)}'s final committed offset of {a['key']} is {a['offset']} (read by "
        f"{op(a['op'])}), yet {a['count']} input record(s) below it have no committed output: "
        f"{_values(a['missing'])}."
    )


def _generic(a: Anomaly, op: _Ops) -> str:
    return ", ".join(f"{k}={v}" for k, v in a.items())


_EXPLAIN: dict[str, Callable[[Anomaly, _Ops], str]] = {
    "lost-write": _lost_write,
    "unseen": _unseen,
    "duplicate": _duplicate,
    "inconsistent-offsets": _inconsistent,
    "nonmonotonic-send": _nonmonotonic_send,
    "int-nonmonotonic-send": _int_nonmonotonic_send,
    "int-send-skip": _int_send_skip,
    "poll-skip": _poll_skip,
    "nonmonotonic-poll": _nonmonotonic_poll,
    "int-poll-skip": _int_poll_skip,
    "int-nonmonotonic-poll": _int_nonmonotonic_poll,
    "G1a": _g1a,
    "precommitted-read": _precommitted,
    "garbage-read": _garbage,
    "G0": _cycle,
    "G1c": _cycle,
    "lost-commit": _lost_commit,
    "commit-skip": _commit_skip,
    "garbage-commit": _garbage_commit,
    "duplicate-output": _duplicate_output,
    "missing-output": _missing_output,
}
