"""The report and the ``insync serve`` index in a real headless browser (Debian's chromium).

Checks what a person sees: no JavaScript errors, the run's operations drawn on
the timeline, hovering an op shows its value, and clicking an anomaly's op
jumps the timeline to it. Screenshots go to ``artifacts/report-browser/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checkers import check_file
from results.browser.serve import make_server
from results.report.history_table import read_table
from results.report.write import write_report

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "report-browser"
OK_RGB = (47, 158, 91)
FAIL_RGB = (214, 69, 69)


def ensure_chromium() -> Path:
    """Debian's chromium, installed with apt when missing (needs root, as on CI)."""
    if CHROMIUM.exists():
        return CHROMIUM
    if os.geteuid() != 0:
        pytest.skip("chromium is not installed and installing it needs root "
                    "(apt-get install -y chromium)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
    assert CHROMIUM.exists(), "apt-get installed chromium but /usr/bin/chromium is missing"
    return CHROMIUM


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(executable), args=ARGS)
        yield b
        b.close()


class Page:
    """A page that records JavaScript errors and console errors."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}")
                     if m.type == "error" else None)

    def open(self, url: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_selector("html[data-rendered=true]", timeout=60_000)
        return self.page


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    p = Page(browser)
    yield p
    p.page.close()


@pytest.fixture(scope="module")
def reported_run(tmp_path_factory: pytest.TempPathFactory, invalid_run_template: Path) -> Path:
    target = tmp_path_factory.mktemp("browser") / "queue" / "20261121T031501.123Z"
    run = Path(shutil.copytree(invalid_run_template, target))
    write_report(run, pngs=False)
    return run


def color_pixels(page: Any, canvas: str, rgb: tuple[int, int, int]) -> int:
    """How many pixels of a canvas have exactly this colour."""
    return int(page.evaluate(
        """([sel, rgb]) => { const c = document.querySelector(sel);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
        for (let i = 0; i < d.length; i += 4)
          if (d[i] === rgb[0] && d[i + 1] === rgb[1] && d[i + 2] === rgb[2]) n++;
        return n; }""", [canvas, list(rgb)]))


def greenish_pixels(page: Any, canvas: str) -> int:
    """Pixels of a canvas clearly greener than grey (the ok colour, blended or not)."""
    return int(page.evaluate(
        """(sel) => { const c = document.querySelector(sel);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
        for (let i = 0; i < d.length; i += 4)
          if (d[i + 1] > d[i] + 40 && d[i + 1] > d[i + 2] + 20) n++;
        return n; }""", canvas))


def test_report_draws_the_runs_operations_without_errors(page: Page, reported_run: Path) -> None:
    p = page.open((reported_run / "report.html").as_uri())
    p.screenshot(path=str(ARTIFACTS / "report-full.png"), full_page=True)
    assert page.errors == []
    table = read_table(reported_run / "history.jsonl")
    drawn = p.evaluate("Array.from(window.insync.cols.index).sort((a, b) => a - b)")
    assert drawn == table.index.tolist()
    assert color_pixels(p, "#tl", OK_RGB) > 50_000
    assert color_pixels(p, "#tl", FAIL_RGB) > 100
    assert greenish_pixels(p, "#lat") > 2_000  # ok dots (translucent) on the latency plot
    verdict = check_file(reported_run)
    summary = p.inner_text("#summary")
    for kind, count in verdict["anomaly-counts"].items():
        assert f"{kind}\t{count}" in summary
    assert p.inner_text("#badge") == "INVALID"
    command = p.inner_text("#command")
    assert command.startswith("insync run ") and " --workload queue " in command, command


def test_fault_bands_have_short_labels_and_their_value_one_click_away(
        page: Page, reported_run: Path) -> None:
    p = page.open((reported_run / "report.html").as_uri())
    bands = p.evaluate("window.insync.data.bands")
    assert bands, "the run has faults"
    listed = [re.sub(r" [0-9.]+ s \.\. ([0-9.]+ s|end)$", "", t.strip())
              for t in p.locator("#faults summary").all_inner_texts()]
    assert [b["label"] for b in bands] == listed
    assert all("{" not in b["label"] and len(b["label"]) < 48 for b in bands), bands
    assert p.inner_text("#range").startswith("0.000 s .. ")  # the axis starts at 0, in s
    first = bands[0]
    p.locator("#tl").scroll_into_view_if_needed()  # panels above it may push it below the fold
    box, view = p.locator("#tl").bounding_box(), p.evaluate("window.insync.view")
    mid = (first["start"] + first["stop"]) / 2
    x = 64 + (mid - view[0]) / (view[1] - view[0]) * (box["width"] - 64 - 12)
    p.mouse.click(box["x"] + x, box["y"] + 17)  # the band's strip, above the rows
    detail = p.inner_text("#detail")
    assert detail.startswith("fault " + first["label"])
    for key in json.loads(first["detail"]):
        assert f'"{key}"' in detail
    p.locator("#faults summary").first.click()
    assert json.loads(p.locator("#faults details pre").first.inner_text()) == \
        json.loads(first["detail"])
    p.locator("#timeline").screenshot(path=str(ARTIFACTS / "report-fault-labels.png"))
    assert page.errors == []


def test_hovering_an_op_shows_its_value_and_error(page: Page, reported_run: Path) -> None:
    p = page.open((reported_run / "report.html").as_uri())
    table = read_table(reported_run / "history.jsonl")
    row = int(next(r for r in range(len(table)) if table.error[r] >= 0 and table.f[r] ==
                   table.f_names.index("send")))
    index = int(table.index[row])
    p.evaluate(f"window.insync.jumpTo({index})")
    box = p.evaluate(f"window.insync.opBox({index})")
    p.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tip = p.locator("#tip")
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert text.startswith(f"op {index}  process {int(table.process[row])}  send")
    assert f"error: {table.errors[int(table.error[row])]}" in text
    assert "invoked: [[\"send\"," in text
    p.screenshot(path=str(ARTIFACTS / "report-hover.png"))
    assert page.errors == []


def test_clicking_an_anomaly_jumps_to_its_op(page: Page, reported_run: Path) -> None:
    p = page.open((reported_run / "report.html").as_uri())
    lost = check_file(reported_run)["anomalies"]["lost-write"][0]
    p.locator("#anomaly-lost-write").scroll_into_view_if_needed()
    p.screenshot(path=str(ARTIFACTS / "report-anomaly-panel.png"))
    before = p.evaluate("window.insync.view")
    p.click(f"#anomaly-lost-write a.op[data-op='{lost['writer']}'] >> nth=0")
    assert p.evaluate("window.insync.highlighted") == lost["writer"]
    view = p.evaluate("window.insync.view")
    start = p.evaluate(f"window.insync.cols.start[Array.from(window.insync.cols.index)"
                       f".indexOf({lost['writer']})]")
    assert view[0] < start < view[1]
    assert view[1] - view[0] < (before[1] - before[0]) / 10  # zoomed in on it
    assert p.inner_text("#detail").startswith(f"op {lost['writer']}  process ")
    timeline = p.locator("#timeline").bounding_box()
    assert timeline is not None and -5 < timeline["y"] < 100  # scrolled to the timeline
    p.screenshot(path=str(ARTIFACTS / "report-jump.png"))
    assert page.errors == []


def test_serve_index_filters_and_opens_a_report(page: Page, reported_run: Path,
                                                tmp_path: Path, valid_run: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    checked = Path(shutil.copytree(reported_run, root / "queue" / reported_run.name))
    (checked / "results.json").write_text(json.dumps(check_file(checked)))
    shutil.copytree(valid_run, root / "queue" / "20261121T051501.123Z")
    srv = make_server(root, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        p = page.open(srv.url)
        assert p.locator("#runs tbody tr").count() == 2
        p.screenshot(path=str(ARTIFACTS / "serve-index.png"), full_page=True)
        p.fill("#q", "kill unchecked")
        assert p.locator("#runs tbody tr").count() == 1
        assert p.inner_text("#count") == "1 of 2 runs"
        p.fill("#q", "")
        verdicts = "rs => rs.map(r => r.querySelector('.v').textContent)"
        p.click("th[data-k=verdict]")
        assert p.eval_on_selector_all("#runs tbody tr", verdicts) == ["invalid", "unchecked"]
        p.click("th[data-k=verdict]")
        assert p.eval_on_selector_all("#runs tbody tr", verdicts) == ["unchecked", "invalid"]
        p.click("a.report")
        p.wait_for_selector("html[data-rendered=true]")
        assert p.url.endswith(f"/runs/queue/{reported_run.name}/report.html")
        # as in a big report: values not embedded are fetched from the server on demand
        index = p.evaluate("window.insync.cols.index[100]")
        p.evaluate(f"delete window.insync.data.details[{index}]")
        p.evaluate(f"window.insync.jumpTo({index})")
        p.wait_for_function("document.getElementById('detail').textContent.includes('invoked: ')"
                            " && !document.getElementById('detail').textContent"
                            ".includes('loading')")
        invoked = json.loads(p.inner_text("#detail").split("invoked: ")[1].splitlines()[0])
        history = (checked / "history.jsonl").read_text().splitlines()
        done = json.loads(history[index])
        assert invoked == next(json.loads(line)["value"] for line in reversed(history[:index])
                               if json.loads(line)["process"] == done["process"])
        assert page.errors == []
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)
