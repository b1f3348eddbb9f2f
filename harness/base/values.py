"""How one raw option value (flag text, a TOML value, a replayed argv item) becomes typed.

On the ground floor because every layer declares options with it: the runner
(``harness.run.options``), each workload (its own rows of the run's table,
``workloads.<name>.options``), ``insync cluster`` and the matrix.

The converters are strict about *types* because a TOML file can hold any of
them: ``nodes = true`` or ``nodes = 3.7`` must not quietly become 1 or 3, and
``name = [1, 2]`` must not become the text ``"[1, 2]"``. Flag text is always a
string, so every converter also takes the string spelling. They raise
``ValueError``/``TypeError`` with what was expected; :meth:`Spec.parse` (one
option's converter, range and help, a row of the run's ``OPTIONS``) turns that into
one ``UsageError`` line naming the flag and where the value came from.

:class:`Range` is the set of values a number option accepts. It refuses
``nan``, ``inf`` and ``1e400`` (which is ``inf`` once parsed) by construction:
a non-finite number is in no range.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.base.errors import UsageError

#: What to do next after a bad option value: the options are documented there
#: (``insync matrix`` takes the same options).
HELP_HINT = "see `insync run --help`"


def shown(raw: Any, limit: int = 40) -> str:
    """``raw`` as it goes into a one-line message: quoted, never longer than ``limit``."""
    text = repr(raw)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


@dataclass(frozen=True)
class Range:
    """The finite numbers from ``lo`` to ``hi``; ``zero`` also admits 0 (``--rate 0``)."""

    lo: float
    hi: float
    open_lo: bool = False  # lo itself is refused
    open_hi: bool = False  # hi itself is refused
    zero: bool = False

    def __contains__(self, x: object) -> bool:
        if isinstance(x, bool) or not isinstance(x, int | float):
            return False
        if isinstance(x, float) and not math.isfinite(x):  # (an int is; 10**400 too)
            return False
        if self.zero and x == 0:
            return True
        above = self.lo < x if self.open_lo else self.lo <= x
        below = x < self.hi if self.open_hi else x <= self.hi
        return above and below

    def describe(self, whole: bool) -> str:
        """``a whole number from 1 to 9``; ``a finite number in (0, 604800]`` if an end is open."""
        kind = "a whole number" if whole else "a finite number"
        if self.open_lo or self.open_hi:
            left, right = "(" if self.open_lo else "[", ")" if self.open_hi else "]"
            text = f"{kind} in {left}{_fmt(self.lo)}, {_fmt(self.hi)}{right}"
        else:
            text = f"{kind} from {_fmt(self.lo)} to {_fmt(self.hi)}"
        return f"0 or {text}" if self.zero else text


# -- converters ------------------------------------------------------------------------------


def text(x: Any) -> str:
    if not isinstance(x, str):
        raise TypeError(f"expected text, got {shown(x)}")
    if not x.strip():
        raise ValueError("must not be empty")
    return x


def run_name(x: Any) -> str:
    """A test name is one directory under the results folder (results/LAYOUT.md)."""
    from harness.base.rundir import LATEST

    name = text(x)
    # bytes, not characters: a file name holds 255 bytes, and 200 "é" are 400 of them
    if (name in (".", "..", LATEST) or "/" in name or "\0" in name
            or len(os.fsencode(name)) > 200):
        raise ValueError(
            f"cannot name a results directory: {shown(name)} "
            f"(one path part of at most 200 bytes, not '.', '..' or '{LATEST}')"
        )
    return name


def whole(x: Any) -> int:
    """An integer, from an int or its decimal spelling (not a bool, not 3.7 nor 3.0)."""
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    if isinstance(x, str):
        try:
            return int(x.strip())
        except ValueError:
            pass
    raise ValueError(f"expected a whole number, got {shown(x)}")


def opt_whole(x: Any) -> int | None:
    """A whole number, or none/default for "leave it to the client library"."""
    return None if unset(x) else whole(x)


def unset(x: Any) -> bool:
    """``None``, or a spelling of "no value" (empty, ``none``, ``default``): one list for
    every optional setting."""
    return x is None or (isinstance(x, str) and x.strip().lower() in ("", "none", "default"))


def number(x: Any) -> float:
    """A float from an int, a float or its spelling; ranges refuse the non-finite ones."""
    if isinstance(x, int | float) and not isinstance(x, bool):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x.strip())
        except ValueError:
            pass
    raise ValueError(f"expected a number, got {shown(x)}")


def opt_number(x: Any) -> float | None:
    """A number, or none/default for "derive it from the other settings"."""
    return None if unset(x) else number(x)


def boolean(x: Any) -> bool:
    if isinstance(x, bool):
        return x
    if isinstance(x, str):
        word = x.strip().lower()
        if word in ("true", "yes", "1", "on"):
            return True
        if word in ("false", "no", "0", "off"):
            return False
    raise ValueError(f"expected true or false, got {shown(x)}")


def items(x: Any) -> list[str]:
    """``a,b`` or a list of texts."""
    if isinstance(x, str):
        parts = x.split(",")
    elif isinstance(x, list) and all(isinstance(i, str) for i in x):
        parts = x
    else:
        raise TypeError(f"expected a comma-separated text or a list of texts, got {shown(x)}")
    return [p.strip() for p in parts if p.strip()]


def _kv_text(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()  # Kafka spells booleans true/false
    if isinstance(v, str | int) or (isinstance(v, float) and math.isfinite(v)):
        return str(v)
    raise TypeError(f"expected a text or number value, got {shown(v)}")


def key_values(x: Any) -> dict[str, str]:
    """``key=value`` (one, or a list of them) or a TOML table of keys and values."""
    if isinstance(x, Mapping):
        return {str(k): _kv_text(v) for k, v in x.items()}
    if isinstance(x, str):
        x = [x]
    if not isinstance(x, list) or not all(isinstance(i, str) for i in x):
        raise TypeError(f"expected key=value texts or a table, got {shown(x)}")
    out: dict[str, str] = {}
    for item in x:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected key=value, got {shown(item)}")
        out[key.strip()] = value.strip()
    return out


def choice(*allowed: str) -> Callable[[Any], str]:
    def conv(x: Any) -> str:
        if isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool)):
            word = str(x).strip().lower()
            if word in allowed:
                return word
        raise ValueError(f"must be one of {', '.join(allowed)}, got {shown(x)}")

    return conv



@dataclass(frozen=True)
class Spec:
    """One option of ``insync run``: field, converter, help, and the range of a number.

    (Its default is ``RunOptions``'.) ``parse`` is the one way a raw value
    becomes an option value, whether it came from a flag, a TOML file, a
    replayed argv or a matrix axis.
    """

    name: str
    conv: Callable[[Any], Any]
    help: str
    metavar: str | None = None
    repeat: bool = False  # --broker-config may be given several times
    range: Range | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def out_of_range(self, raw: Any) -> str:
        """``must be a whole number from 1 to 9, got '0'`` (without the flag)."""
        assert self.range is not None
        kind = self.range.describe(whole=self.conv in (whole, opt_whole))
        return f"must be {kind}, got {shown(raw)}"

    def parse(self, raw: Any, where: str = "", hint: str = HELP_HINT) -> Any:
        """Convert one raw value and check its range; one ``UsageError`` line if bad.

        ``where`` prefixes the message with the value's origin (``--config run.toml: ``).
        """
        try:
            value = self.conv(raw)
        except UsageError as err:
            raise UsageError(f"{where}{self.flag}: {err.message}", hint=err.hint) from None
        except (ValueError, TypeError) as err:
            detail = self.out_of_range(raw) if self.range is not None else str(err)
            raise UsageError(f"{where}{self.flag} {detail}", hint=hint) from None
        if self.range is not None and value is not None and value not in self.range:
            raise UsageError(f"{where}{self.flag} {self.out_of_range(raw)}", hint=hint)
        return value

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """This option as a flag; unset, it stays absent (so config and replay show through)."""
        kwargs: dict[str, Any] = {"dest": self.name, "help": self.help,
                                  "default": argparse.SUPPRESS}
        if self.metavar:
            kwargs["metavar"] = self.metavar
        if self.repeat:
            kwargs["action"] = "append"
        if self.conv is boolean:
            kwargs["nargs"] = "?"
            kwargs["const"] = "true"  # --txn alone means --txn true
        parser.add_argument(self.flag, **kwargs)

    def arg_type(self) -> Callable[[str], Any]:
        """An argparse ``type=`` with this option's conversion and range (``insync cluster``)."""

        def conv(raw: str) -> Any:
            try:
                return self.parse(raw)
            except UsageError as err:
                detail = err.message.removeprefix(self.flag).lstrip(": ")
                raise argparse.ArgumentTypeError(detail) from None

        conv.__name__ = self.name  # argparse names the type in some messages
        return conv


def convert(
    values: Mapping[str, Any], table: Mapping[str, Spec], origin: str = "", hint: str = HELP_HINT
) -> dict[str, Any]:
    """Convert raw values (flag strings or TOML values) of ``table``'s options; unknown keys fail.

    Keys may be spelled with dashes or underscores. ``origin`` names where the
    values came from (``--config run.toml``); empty for flags. ``hint`` is the
    command whose help documents them.
    """
    where = f"{origin}: " if origin else ""
    out: dict[str, Any] = {}
    for raw_key, raw in values.items():
        key = raw_key.replace("-", "_")
        spec = table.get(key)
        if spec is None:
            raise UsageError(f"{where}unknown option {raw_key!r}", hint=hint)
        if key in out:  # time-limit and time_limit: which one was meant is anybody's guess
            raise UsageError(f"{where}option {raw_key!r} is given twice (once with '-', once "
                             "with '_')", hint="keep one of them")
        out[key] = spec.parse(raw, where, hint)
    return out


# -- files the user names ---------------------------------------------------------------------


def read_text(path: str | Path, flag: str) -> str:
    """The UTF-8 text of a file the user named, or one ``UsageError`` line saying why not
    (``harness.base.userfile``: never blocks, regular files only, bounded)."""
    from harness.base.userfile import read_user_text

    return read_user_text(path, f"{flag} {path}")


def usable_dir(path: str | Path, flag: str) -> None:
    """Raise ``UsageError`` unless ``path`` is, or can be made, a writable directory.

    Checked before anything is created, so a bad ``--results-dir`` costs nothing.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(
            f"{flag} {p} exists and is not a directory",
            hint="pass a directory; it is made if missing",
        )
    here = p.absolute()
    while not here.exists():
        here = here.parent
    if not here.is_dir():
        raise UsageError(f"{flag} {p}: {here} is not a directory", hint="pass another directory")
    if not os.access(here, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {p}: cannot write to {here}", hint="pass a writable directory")

