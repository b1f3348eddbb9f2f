"""One fact, one place: only ``harness/base/rundir.py`` spells the run directory's file names.

Everything else asks a ``RunDir`` (``history_path``, ``test_path``, ...) or uses
its constants, so renaming a file of results/LAYOUT.md is one edit. The
source is read with ``ast``: a name in a docstring, a comment or a sentence
of help text is prose, but a string that *is* a file name (``"test.json"``), a
path ending in one (``f"{run}/history.jsonl"``, ``"*/*/test.json"``) or the
``nodes`` folder joined onto a path (``run / "nodes"``) is a spelling. Tests
are not searched: they pin the layout's names on purpose.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.base import rundir

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "cluster", "nemesis", "workloads", "checkers", "results")
THE_PLACE = "harness/base/rundir.py"
FILES = (rundir.HISTORY, rundir.TEST, rundir.RESULTS, rundir.LOG, rundir.REPORT)
#: A literal that is a file name, or a path (or glob) with one as a component.
_ANY = "|".join(map(re.escape, FILES))
SPELLED = re.compile(rf"^(?:{_ANY})$|[/*](?:{_ANY})(?![\w.-])")
#: The nodes folder as a path: "nodes/...", ".../nodes", ".../nodes/...".
NODES_PATH = re.compile(rf"(?:^|/){rundir.NODES}/|/{rundir.NODES}$")

#: Same spelling, another file: not a run's file, so not RunDir's to name.
HOMONYMS = {
    ("results/analysis/analyze.py", rundir.REPORT):
        "the analysis's own page, in its --out directory",
    ("results/report/template.py", rundir.REPORT): "the page template in results/report/templates/",
}
#: Files another branch is changing at the same time; they switch to RunDir after that merge.
#: An entry whose file no longer spells a name fails the test: remove it then.
PENDING = {
    "results/analysis/ingest.py":
        "the Spark ingestion, being changed on the coverage/analyze branch",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def spellings(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for each place ``source`` spells a run file's name."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            found = SPELLED.search(node.value)
            if found:
                yield node.lineno, found.group().lstrip("/*")
            elif NODES_PATH.search(node.value):
                yield node.lineno, rundir.NODES
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
              and isinstance(node.right, ast.Constant) and node.right.value == rundir.NODES):
            yield node.lineno, rundir.NODES
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "joinpath"
              and any(isinstance(a, ast.Constant) and a.value in (*FILES, rundir.NODES)
                      for a in node.args)):
            yield node.lineno, "joinpath"


def _sources() -> Iterator[tuple[str, str]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_only_rundir_spells_the_run_files_names() -> None:
    found = [f"{rel}:{line}: {what}" for rel, source in _sources()
             if rel != THE_PLACE and rel not in PENDING
             for line, what in spellings(source) if (rel, what) not in HOMONYMS]
    assert not found, "use RunDir's paths or harness.base.rundir's names instead:\n" + "\n".join(
        found)


@pytest.mark.parametrize("rel", sorted(PENDING))
def test_pending_exemptions_are_still_needed(rel: str) -> None:
    assert list(spellings((ROOT / rel).read_text())), f"{rel} spells no run file: drop it"


def test_rundir_spells_each_name_once() -> None:
    source = (ROOT / THE_PLACE).read_text()
    assert sorted(what for _, what in spellings(source)) == sorted(FILES)


@pytest.mark.parametrize(("source", "expected"), [
    ('p = run / "history.jsonl"', ["history.jsonl"]),
    ('p = f"{run}/test.json"', ["test.json"]),
    ('runs = root.glob("*/*/results.json")', ["results.json"]),
    ('NAME = "insync.log"', ["insync.log"]),
    ('link = f"<a href=\'/runs/{p}/report.html\'>report</a>"', ["report.html"]),
    ('logs = run / "nodes"', ["nodes"]),
    ('listed = ["nodes/"]', ["nodes"]),
    ('ok = p.parent.joinpath("test.json").is_file()', ["test.json", "joinpath"]),
    ('"""Reads history.jsonl and test.json."""', []),
    ('help = "write a run\'s report.html and PNG plots"', []),
    ('HELP = "report.html generation time and size"', []),
    ('bench = workdir / "memory-history.jsonl"', []),
    ('block = {"nodes": 3}', []),
], ids=["joined", "f-string", "glob", "constant", "in-a-link", "nodes-joined", "nodes-listed",
        "joinpath", "docstring", "prose", "prose-first", "another-file", "nodes-key"])
def test_what_counts_as_a_spelling(source: str, expected: list[str]) -> None:
    assert sorted(what for _, what in spellings(source)) == sorted(expected)
