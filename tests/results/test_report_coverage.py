"""The report's coverage panel, read back from report.html: stored block or computed, and
the one line a VALID run with poor coverage must carry."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from stalled_run import write_stalled_run

from harness.base.history import read_history
from harness.cli import main
from results.coverage import coverage
from results.report.write import write_report
from results.run_coverage import spans_of


class Page(HTMLParser):
    """The text of every element with an id, and the rows of the coverage table."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.text: dict[str, str] = {}
        self.rows: list[list[str]] = []
        self._open: list[str] = []
        self._in_table = False
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        ident = dict(attrs).get("id")
        if ident:
            self._open.append(ident)
            self.text.setdefault(ident, "")
        if ident == "coverage-table":
            self._in_table = True
        if self._in_table and tag == "tr":
            self.rows.append([])
        if self._in_table and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._in_table and tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None
        if tag == "table":
            self._in_table = False
        if tag in ("p", "div", "table") and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open:
            self.text[ident] += data
        if self._cell is not None:
            self._cell.append(data)

    def row(self, label: str) -> list[str]:
        [found] = [r for r in self.rows if r and r[0].startswith(label)]
        return found


def page_of(run: Path) -> Page:
    return Page(write_report(run, pngs=False).read_text())


def set_run_block(run_dir: Path, **changes: Any) -> dict[str, Any]:
    verdict = json.loads((run_dir / "results.json").read_text())
    verdict.update(changes)
    (run_dir / "results.json").write_text(json.dumps(verdict))
    return verdict


@pytest.fixture(scope="module")
def stalled_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_stalled_run(tmp_path_factory.mktemp("runs") / "stalled" / "20261121T031501Z")


@pytest.fixture
def stalled(stalled_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(stalled_template, tmp_path / "stalled"))


def test_a_valid_run_that_wrote_nothing_during_its_fault_says_so(stalled: Path) -> None:
    page = page_of(stalled)
    assert page.text["coverage-window"].startswith("Window: the main phase (70.0 s)")
    assert page.row("main phase") == ["main phase", "70.0 s", "160 (2.3/s)", "20 of 70 (29%)"]
    assert page.row("kill") == ["kill (1x)", "44.9 s", "0", "0 of 45 (0%)"]
    assert page.row("any fault") == ["any fault", "44.9 s", "0", "0 of 45 (0%)"]
    assert page.row("no fault") == ["no fault in force", "", "", "20 of 25 (80%)"]
    poor = page.text["coverage-poor"]
    assert poor.startswith("coverage is poor: only 29% of the main phase's seconds")
    assert "no send was acknowledged while kill was in force" in poor
    warning = " ".join(page.text["coverage-warning"].split())
    assert warning.startswith("VALID, but coverage is poor: only 29%")
    assert "heal" in page.text["coverage-recovery"] and "start (at 55.3 s): 4.8 s" in \
        page.text["coverage-recovery"]


def test_the_stored_block_is_what_the_panel_shows(stalled: Path) -> None:
    verdict = json.loads((stalled / "results.json").read_text())
    block = verdict["run"]["coverage"]
    block.update(acked_sends_main=12345, acked_per_s=176.4)
    set_run_block(stalled, run=verdict["run"])
    assert page_of(stalled).row("main phase")[2] == "12345 (176.4/s)"


def test_without_a_block_coverage_is_computed_over_the_whole_history(stalled: Path) -> None:
    verdict = json.loads((stalled / "results.json").read_text())
    del verdict["run"]["coverage"]
    set_run_block(stalled, run=verdict["run"])
    page = page_of(stalled)
    window = page.text["coverage-window"]
    assert window.startswith("Window: the whole history") and "no coverage block" in window
    test = json.loads((stalled / "test.json").read_text())
    want = coverage(read_history(stalled / "history.jsonl"), spans_of(test))
    assert want["main_s"] > 70  # first to last client op: the drain's polls too
    assert page.row("whole history") == [
        "whole history", f"{want['main_s']:.1f} s",
        f"{want['acked_sends_main']} ({want['acked_per_s']:.1f}/s)",
        f"{want['live_seconds']} of {want['seconds']} ({want['live_share']:.0%})"]
    assert page.row("kill")[2] == "0"
    assert "coverage-warning" in page.text  # still VALID and still poor


def test_an_old_block_without_the_union_is_recomputed(stalled: Path) -> None:
    verdict = json.loads((stalled / "results.json").read_text())
    del verdict["run"]["coverage"]["in_faults"]  # written before in_faults existed
    set_run_block(stalled, run=verdict["run"])
    assert page_of(stalled).text["coverage-window"].startswith("Window: the whole history")


def test_an_invalid_run_shows_the_poor_line_but_no_summary_warning(stalled: Path) -> None:
    set_run_block(stalled, valid=False)
    page = page_of(stalled)
    assert page.text["coverage-poor"].startswith("coverage is poor")
    assert "coverage-warning" not in page.text


def test_a_run_that_kept_writing_has_no_poor_line(valid_run: Path) -> None:
    html = write_report(valid_run, pngs=False).read_text()  # a bare synthetic run
    page = Page(html)
    assert page.text["coverage-window"].startswith("Window: the whole history")
    assert page.row("whole history")[3].endswith("(100%)")
    data = json.loads(html.split('type="application/json">', 1)[1].split("</script>", 1)[0])
    # a row per fault kind the timeline draws a band for (the report's other reader)
    kinds = {r[0].split(" ")[0] for r in page.rows[2:-2]}
    assert len(kinds) >= 3 and kinds == {b["kind"] for b in data["bands"]}
    assert "coverage-poor" not in page.text and "coverage-warning" not in page.text


def test_labels_from_a_hand_edited_block_are_escaped(stalled: Path) -> None:
    verdict = json.loads((stalled / "results.json").read_text())
    faults = verdict["run"]["coverage"]["faults"]
    faults["<img src=x onerror=alert(1)>"] = faults.pop("kill")
    set_run_block(stalled, run=verdict["run"])
    html = write_report(stalled, pngs=False).read_text()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt; (1x)" in html


@pytest.mark.parametrize(("coverage_block", "what"), [
    ([], "run.coverage must be an object"),
    ({"live_share": "most"}, "run.coverage.live_share must be a number"),
    ({"faults": {"kill": {"acked_sends": "none"}}},
     "run.coverage.faults.kill.acked_sends must be a number"),
    ({"in_faults": {"seconds": [45]}}, "run.coverage.in_faults.seconds must be a number"),
    ({"recoveries": [3]}, "run.coverage.recoveries[0] must be an object"),
], ids=["list", "share-string", "fault-sends-string", "union-list", "recovery-int"])
def test_a_malformed_block_is_one_line_naming_the_field(
    stalled: Path, capsys: pytest.CaptureFixture[str], coverage_block: Any, what: str
) -> None:
    set_run_block(stalled, run={"coverage": coverage_block})
    assert main(["report", str(stalled)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(stalled / "results.json") in err and what in err, err


def test_a_history_whose_sends_cannot_be_counted_is_one_line(
    stalled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No block, so coverage is counted from the history: an ok send whose value is a number."""
    set_run_block(stalled, run={})
    lines = (stalled / "history.jsonl").read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if '"type":"ok","f":"send"' in line)
    op = json.loads(lines[i])
    op["value"] = 5
    lines[i] = json.dumps(op)
    (stalled / "history.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["report", str(stalled)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(stalled / "history.jsonl") in err, err
    assert "cannot count acknowledged sends" in err and "insync check" in err
