"""The malformed-input rules of HISTORY-GROUPS.md: its micro-ops and fields.

The scanner (``checkers._history``) and the collector (``checkers._collect``)
call these only on their rare paths: a line with more fields than the six every
op has, a micro-op whose tag is not ``send`` or ``poll``, and the ``commit`` /
``committed`` ops. A history that uses none of the extension never gets here.
"""

from __future__ import annotations

from typing import Any

from checkers._malformed import I64_MAX, short
from harness.base import contract
from harness.base.errors import HistoryError

#: micro-op tag -> the client ``f`` values it may appear in (the contract's client ops)
ALLOWED_IN = contract.group_mops_allowed_in()
#: ops that hold only micro-ops of one tag (their value is group micro-ops only)
ONLY = {op.name: op.group_mops[0] for op in contract.CLIENT_OPS if op.value == "groups"}
HINT = (
    'group micro-ops are ["commit"], ["commit", {key: offset}], ["committed", [key, ...]], '
    '["committed", {key: offset or null}], ["assigned", [key, ...]] and '
    '["revoked", [key, ...]]: see docs/HISTORY-GROUPS.md'
)
FIELD_HINT = "see the fields of docs/HISTORY-GROUPS.md"
RESETS = ("earliest", "latest")
SEEKS = ("committed", "beginning")


def _error(what: str, line: int, hint: str = HINT) -> HistoryError:
    return HistoryError(what, line=line, hint=hint)


def _offset(x: Any) -> bool:
    return type(x) is int and 0 <= x <= I64_MAX


def _keys(x: Any) -> bool:
    return type(x) is list and all(type(k) is str for k in x)


def check_fields(op: dict[str, Any], line: int) -> bool:
    """The extension's fields, wherever a client line carries them. True when the line
    makes the group rules run: a ``committed`` lookup, a start by ``seek: committed``, or an
    exactly-once ``from``."""
    group = op.get("group")
    if group is not None and type(group) is not str:
        raise _error(f"group must be a string or null, got {short(group)}", line, FIELD_HINT)
    if "auto-commit" in op and type(op["auto-commit"]) is not bool:
        raise _error(
            f"auto-commit must be true or false, got {short(op['auto-commit'])}", line, FIELD_HINT
        )
    if "reset" in op and op["reset"] not in RESETS:
        raise _error(
            f'reset must be "earliest" or "latest", got {short(op["reset"])}', line, FIELD_HINT
        )
    if "seek" in op and op["seek"] not in SEEKS:
        raise _error(
            f'seek must be "committed" or "beginning", got {short(op["seek"])}', line, FIELD_HINT
        )
    saw = "from" in op
    if saw:
        _check_from(op, line)
    if "committed" in op:
        found = op["committed"]
        if type(found) is not dict or any(
            type(k) is not str or (c is not None and not _offset(c)) for k, c in found.items()
        ):
            raise _error(
                f"committed must map keys to offsets or null, got {short(found)}",
                line, FIELD_HINT,
            )
        return True
    return saw or op.get("seek") == "committed"


def _check_from(op: dict[str, Any], line: int) -> None:
    """The exactly-once ``from`` field: on a txn op, [[ko, w, ki, v], ...]."""
    if op.get("f") != "txn":
        raise _error(f"from belongs on a txn op, not on a {short(op.get('f'))} op", line,
                     FIELD_HINT)
    entries = op["from"]
    if type(entries) is not list or not all(
        type(e) is list and len(e) == 4 and type(e[0]) is str and _offset(e[1])
        and type(e[2]) is str and _offset(e[3])
        for e in entries
    ):
        raise _error(
            f"from must be a list of [key, value, key, value] entries, got {short(entries)}",
            line, FIELD_HINT,
        )


def check_mop(f: str, mop: Any, line: int, *, kind: str) -> str:
    """A group micro-op of an invoke (``kind`` "invoke") or a completion ("ok", "fail",
    "info"); returns its tag. ``mop`` is a non-empty list whose tag is not send/poll."""
    tag: str = mop[0]
    where = " in invoke" if kind == "invoke" else ""
    allowed = ALLOWED_IN.get(tag) if type(tag) is str else None
    if allowed is None:
        raise _error(f"malformed micro-op{where}: {short(mop)}", line)
    if f not in allowed:
        raise _error(f"a {tag} micro-op is not allowed in a {f} op: {short(mop)}", line)
    if tag in ("assigned", "revoked"):
        if kind == "invoke":
            raise _error(f"an {tag} micro-op is recorded in completions, not invokes", line)
        if len(mop) != 2 or not _keys(mop[1]):
            raise _error(f"malformed micro-op: {short(mop)}", line)
        return tag
    if len(mop) == 1:
        if tag == "committed":
            raise _error(f"malformed micro-op{where}: {short(mop)}", line)
        if kind == "ok":
            raise _error(f"an ok completion's commit must hold its offsets: {short(mop)}", line)
        return tag
    if len(mop) != 2:
        raise _error(f"malformed micro-op{where}: {short(mop)}", line)
    arg = mop[1]
    if tag == "committed" and type(arg) is list:
        if not _keys(arg):
            raise _error(f"malformed micro-op{where}: {short(mop)}", line)
        if kind == "ok":
            raise _error(f"an ok completion's committed micro-op must hold its result: "
                         f"{short(mop)}", line)
        return tag
    if tag == "committed" and kind == "invoke":
        raise _error(f"a committed micro-op in an invoke names keys, not offsets: "
                     f"{short(mop)}", line)
    if type(arg) is not dict:
        raise _error(f"malformed micro-op{where}: {short(mop)}", line)
    for k, c in arg.items():
        if type(k) is not str:
            raise _error(f"malformed micro-op{where}: {short(mop)}", line)
        if not _offset(c) and not (tag == "committed" and c is None):
            raise _error(
                f"offset {short(c)} is not an integer from 0 to 2**63-1 in micro-op{where}: "
                f"{short(mop)}", line,
            )
    return tag


def check_group_op(f: str, value: Any, line: int, *, kind: str) -> None:
    """The value of a ``commit`` or ``committed`` op: micro-ops of that one tag."""
    if type(value) is not list:
        raise _error(f"{f} value must be a list of micro-ops", line)
    for mop in value:
        if type(mop) is not list or not mop:
            raise _error(f"malformed micro-op: {short(mop)}", line)
        if mop[0] != ONLY[f]:
            raise _error(f"a {f} op holds only {ONLY[f]} micro-ops, got {short(mop)}", line)
        check_mop(f, mop, line, kind=kind)
