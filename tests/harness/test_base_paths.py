"""``resolve_within``: every way a path can leave the results directory, or fail to resolve."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.base.paths import Refused, resolve_within


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A results directory with a run, links in and out, and loops."""
    root = tmp_path / "results"
    run = root / "t" / "20261121T031501.123Z"
    run.mkdir(parents=True)
    (run / "history.jsonl").write_text("{}\n")
    (tmp_path / "secret.txt").write_text("do not serve")
    (run / "out").symlink_to(tmp_path / "secret.txt")
    (run / "out-rel").symlink_to("../../../secret.txt")
    (root / "latest").symlink_to("t/20261121T031501.123Z")
    (root / "loop").symlink_to("loop")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    return root


@pytest.mark.parametrize(("rel", "inside"), [
    ("t/20261121T031501.123Z/history.jsonl", "t/20261121T031501.123Z/history.jsonl"),
    ("latest/history.jsonl", "t/20261121T031501.123Z/history.jsonl"),
    ("/t", "t"),
    ("", ""),
    ("t/not-there/x", "t/not-there/x"),
], ids=["file", "link-inside", "absolute-means-relative", "root", "missing"])
def test_paths_inside_resolve(root: Path, rel: str, inside: str) -> None:
    assert resolve_within(root, rel) == (root / inside).resolve()


@pytest.mark.parametrize(("rel", "reason"), [
    ("../secret.txt", "outside"),
    ("t/../../secret.txt", "outside"),
    ("t/20261121T031501.123Z/out", "outside"),
    ("t/20261121T031501.123Z/out-rel", "outside"),
    ("latest/out", "outside"),
    ("loop", "loop"),
    ("loop/history.jsonl", "loop"),
    ("a", "loop"),
    ("x" * 256, "too-long"),
    ("a/" * 2100, "too-long"),
    ("t/\0", "invalid"),
], ids=["dotdot", "nested-dotdot", "symlink-out", "relative-symlink-out", "via-latest",
        "self-loop", "under-a-loop", "two-link-loop", "long-component", "long-path", "nul"])
def test_paths_refused(root: Path, rel: str, reason: str) -> None:
    with pytest.raises(Refused) as err:
        resolve_within(root, rel)
    assert err.value.reason == reason
