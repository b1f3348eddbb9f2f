"""The measures a check takes beside its verdict, fed together in one pass over a history.

``read-committed-stalls`` (``checkers._stalls``), ``abort-rewinds``
(``checkers._rewinds``) and ``group-unread-keys`` (``checkers._unread``) go in the
verdict's ``stats`` and never change ``valid`` (docs/HISTORY.md, "Read stalls" and
"After an abort"; docs/HISTORY-GROUPS.md, "Unread keys"). Each walks the history's
lines in file order, as the check does, so none reads the history on its own:

- the check's own pass feeds them (``Tap``): each line, once the scanner has
  accepted it, goes to every measure started, and no further read happens. A
  measure starts at the first op its history needs (``TRIGGERS``: a ``txn`` op for
  the first two, a ``subscribe`` for the third), fed the lines kept until then;
- when that pass cannot (the check read the file in parallel chunks, or a
  measure's op did not come in the first ``HEAD_LINES`` lines), one more read feeds
  the measures it lacks (``Measures.read``).

Which a verdict shows is decided after the check, from its packed per-line ``meta``
and its collector: the stalls of a history with a ``txn`` op, the rewinds of one
whose ``txn`` op failed, the unread keys of one with a ``subscribe`` op (a measure
may still find nothing to measure: its result is then None, and it has no block).
The measures are fed before that is known, and a result not wanted is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from checkers._rewinds import Rewinds
from checkers._stalls import Stalls
from checkers._unread import Unread

STALLS = "read-committed-stalls"
REWINDS = "abort-rewinds"
UNREAD = "group-unread-keys"
#: the lines kept, unmeasured, until every measure's first op (``TRIGGERS``) came: a
#: transactional run writes a ``txn`` op among its first few dozen lines, a group's
#: members subscribe first, and a history without them pays only for keeping these
#: (the garbage collector walks what is kept: in callgrind, 0.3% of a 100k-op check's
#: instructions at 1,000 lines, 2% at 10,000)
HEAD_LINES = 1000


class Measure(Protocol):
    """What the pass feeds: every line in file order, then one call for the result."""

    def feed(self, op: dict[str, Any]) -> None:
        """The next line of the history."""

    def result(self) -> dict[str, Any] | None:
        """Its ``stats`` block (None: nothing to measure, no block); taken once, after the
        last line."""


def fed(measure: Measure, lines: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The result of ``measure`` fed every line of ``lines``, alone (errors raise)."""
    for op in lines:
        measure.feed(op)
    return measure.result()


#: stats field -> (the measure that fills it, what an error in it says it was doing)
KINDS: dict[str, tuple[Callable[[], Measure], str]] = {
    STALLS: (Stalls, "measuring read stalls"),
    REWINDS: (Rewinds, "classifying abort rewinds"),
    UNREAD: (Unread, "measuring unread keys"),
}
#: stats field -> the ``f`` of the first op a history it measures holds
TRIGGERS: dict[str, str] = {STALLS: "txn", REWINDS: "txn", UNREAD: "subscribe"}


class Measures:
    """Several measures fed the same lines. One that raises is fed no more and keeps its
    error; the others go on (a measure never stops the check, nor another measure)."""

    def __init__(self, fields: Iterable[str] = KINDS) -> None:
        self.live: dict[str, Measure] = {}
        self.errors: dict[str, Exception] = {}
        #: True once every line of a history was fed (``read``, ``through``)
        self.whole = False
        self._feeds: list[tuple[str, Callable[[dict[str, Any]], None]]] = []
        self.start(fields, ())

    def start(self, fields: Iterable[str], lines: Iterable[dict[str, Any]]) -> None:
        """New measures of ``fields``, fed ``lines`` (the history so far) at once."""
        new = [(name, KINDS[name][0]()) for name in fields]
        self.live.update(new)
        feeds = [(name, m.feed) for name, m in new]
        for op in lines:
            for name, feed in feeds:
                if name in self.live:
                    try:
                        feed(op)
                    except Exception as err:
                        self._fail(name, err)
        self._feeds += [(name, feed) for name, feed in feeds if name in self.live]

    def has(self, name: str) -> bool:
        """Whether ``name`` was measured (its result, or its error, is here)."""
        return name in self.live or name in self.errors

    def feed(self, op: dict[str, Any]) -> None:
        """One line to every measure still live."""
        for name, feed in self._feeds:
            try:
                feed(op)
            except Exception as err:
                self._fail(name, err)

    def _fail(self, name: str, err: Exception) -> None:
        self.errors[name] = err
        del self.live[name]
        self._feeds = [(n, feed) for n, feed in self._feeds if n != name]

    def read(self, lines: Callable[[], Iterable[dict[str, Any]]]) -> Measures:
        """Every line of ``lines()`` (one more read of a history) to every measure; an error
        in reading them is every live measure's."""
        try:
            for op in lines():
                self.feed(op)
        except Exception as err:
            for name in list(self.live):
                self._fail(name, err)
        self.whole = True
        return self

    def through(self, lines: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """``lines``, each fed to every measure as it passes, for a pass over a history
        that another reader makes (the group rules'); ``whole`` once the last has passed."""
        for op in lines:
            self.feed(op)
            yield op
        self.whole = True

    def results(self, fields: Iterable[str], error: Callable[[Exception, str], str]
                ) -> dict[str, dict[str, Any]]:
        """The ``stats`` block of each of ``fields`` that has one; a measure that raised
        (while fed, or here) gives ``{"error": error(err, what it was doing)}``."""
        out: dict[str, dict[str, Any]] = {}
        for name in fields:
            err = self.errors.get(name)
            if err is None:
                try:
                    block = self.live[name].result()
                except Exception as raised:
                    err = raised
                else:
                    if block is not None:
                        out[name] = block
                    continue
            out[name] = {"error": error(err, KINDS[name][1])}
        return out


class Tap:
    """Hands the check's lines on to its scanner and feeds each line the scanner accepted
    to the measures, so that they take no read of their own.

    ``head`` passes the lines up to the first op of every measure (``TRIGGERS``), or
    ``HEAD_LINES`` of them, keeping them; at each measure's first op, the measure is
    started (in ``measures``) and fed the kept lines. ``rest`` passes the others,
    feeding each to the measures started. A measure whose op does not come in the
    first ``HEAD_LINES`` lines is not started: if it comes later, one more read
    measures it. A line is fed when the scanner asks for the next one, that is once it
    accepted it.
    """

    def __init__(self) -> None:
        self.head_lines = HEAD_LINES
        self.measures: Measures | None = None
        #: True once ``rest`` passed the last line: the measures saw the whole history
        self.whole = False

    def head(self, ops: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The lines of ``ops`` up to every measure's first op (or ``head_lines`` of them)."""
        kept: list[dict[str, Any]] = []
        waiting = dict(TRIGGERS)
        for op in ops:
            yield op
            kept.append(op)
            if self.measures is not None:
                self.measures.feed(op)
            due = [name for name, f in waiting.items() if f == op.get("f")]
            if due:
                for name in due:
                    del waiting[name]
                if self.measures is None:
                    self.measures = Measures(())
                self.measures.start(due, kept)
            if not waiting or len(kept) == self.head_lines:
                return

    def rest(self, ops: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The lines after ``head``'s: each fed to the measures, or ``ops`` itself if
        there are none (no step between the file and the scanner)."""
        return ops if self.measures is None else self._fed(ops, self.measures.feed)

    def _fed(self, ops: Iterator[dict[str, Any]], feed: Callable[[dict[str, Any]], None]
             ) -> Iterator[dict[str, Any]]:
        for op in ops:
            yield op
            feed(op)
        self.whole = True
