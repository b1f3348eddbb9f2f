"""The measures a check takes beside its verdict, fed together in one pass over a history.

``read-committed-stalls`` (``checkers._stalls``) and ``abort-rewinds``
(``checkers._rewinds``) go in the verdict's ``stats`` and never change ``valid``
(docs/HISTORY.md, "Read stalls" and "After an abort"). Each walks the history's
lines in file order, as the check does, so neither reads the history on its own:

- the check's own pass feeds them (``Tap``): each line, once the scanner has
  accepted it, goes to both, and no further read happens;
- when that pass cannot (the check read the file in parallel chunks, or no ``txn``
  op came in the first ``HEAD_LINES`` lines), one more read feeds both
  (``Measures.read``).

Which of the two a verdict shows is decided after the check, from its packed
per-line ``meta``: the stalls of a history with a ``txn`` op, the rewinds of one
whose ``txn`` op failed. The measures are fed before that is known, and a result
not wanted is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from checkers._rewinds import Rewinds
from checkers._stalls import Stalls

STALLS = "read-committed-stalls"
REWINDS = "abort-rewinds"
#: the lines kept, unmeasured, until the first ``txn`` op: a transactional run writes one
#: among its first few dozen lines, and a history without any pays only for keeping these
#: (the garbage collector walks what is kept: in callgrind, 0.3% of a 100k-op check's
#: instructions at 1,000 lines, 2% at 10,000)
HEAD_LINES = 1000


class Measure(Protocol):
    """What the pass feeds: every line in file order, then one call for the result."""

    def feed(self, op: dict[str, Any]) -> None:
        """The next line of the history."""

    def result(self) -> dict[str, Any]:
        """Its ``stats`` block; taken once, after the last line."""


def fed(measure: Measure, lines: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The result of ``measure`` fed every line of ``lines``, alone (errors raise)."""
    for op in lines:
        measure.feed(op)
    return measure.result()


#: stats field -> (the measure that fills it, what an error in it says it was doing)
KINDS: dict[str, tuple[Callable[[], Measure], str]] = {
    STALLS: (Stalls, "measuring read stalls"),
    REWINDS: (Rewinds, "classifying abort rewinds"),
}


class Measures:
    """Several measures fed the same lines. One that raises is fed no more and keeps its
    error; the others go on (a measure never stops the check, nor another measure)."""

    def __init__(self, fields: Iterable[str] = KINDS) -> None:
        self.live: dict[str, Measure] = {name: KINDS[name][0]() for name in fields}
        self.errors: dict[str, Exception] = {}
        self._feeds = [(name, m.feed) for name, m in self.live.items()]

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
        return self

    def results(self, fields: Iterable[str], error: Callable[[Exception, str], str]
                ) -> dict[str, dict[str, Any]]:
        """The ``stats`` block of each of ``fields``; a measure that raised (while fed, or
        here) gives ``{"error": error(err, what it was doing)}``."""
        out: dict[str, dict[str, Any]] = {}
        for name in fields:
            err = self.errors.get(name)
            if err is None:
                try:
                    out[name] = self.live[name].result()
                    continue
                except Exception as raised:
                    err = raised
            out[name] = {"error": error(err, KINDS[name][1])}
        return out


class Tap:
    """Hands the check's lines on to its scanner and feeds each line the scanner accepted
    to the measures, so that they take no read of their own.

    ``head`` passes the lines up to the first ``txn`` op, keeping them; at that op the
    kept lines go to a new ``Measures``. ``rest`` passes the others, feeding each. A
    history with no ``txn`` op in its first ``HEAD_LINES`` lines is passed on as it is
    (``measures`` stays None): if a ``txn`` op comes later, one more read measures it.
    A line is fed when the scanner asks for the next one, that is once it accepted it.
    """

    def __init__(self) -> None:
        self.head_lines = HEAD_LINES
        self.measures: Measures | None = None
        #: True once ``rest`` passed the last line: the measures saw the whole history
        self.whole = False

    def head(self, ops: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The lines of ``ops`` up to its first ``txn`` op (or ``head_lines`` of them)."""
        kept: list[dict[str, Any]] = []
        for op in ops:
            yield op
            kept.append(op)
            if op.get("f") == "txn":
                self.measures = Measures()
                for line in kept:
                    self.measures.feed(line)
                return
            if len(kept) == self.head_lines:
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
