"""``insync scenario list|show`` (``harness/commands/scenario.py``) over the shipped catalogue
and a user's own file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenario import load_catalogue


def test_list_has_a_row_per_scenario_with_affected_and_fixed_versions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["scenario", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "bug", "affected", "fixed"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == set(load_catalogue())
    assert rows["hw-truncation"].endswith("0.10.2       0.11.0..1.1")
    assert rows["unclean-divergence"].endswith("0.10.2..1.1  2.8..4.4")


def test_show_prints_story_sources_settings_steps_and_expectations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["scenario", "show", "isr-shrink-unclean"]) == 0
    out = capsys.readouterr().out
    for needle in ["Jepsen 2013", "https://aphyr.com/posts/293-call-me-maybe-kafka",
                   "--unclean-leader-election true", "replica.lag.time.max.ms = 3000",
                   '"wait": "isr-is-leader"',
                   "0.10.2..         invalid: one of lost-write | inconsistent-offsets | unseen",
                   "variant unclean-off", "4.1 (kraft)", "0.10.2 (zookeeper)"]:
        assert needle in out, needle


def test_a_users_file_is_listed_and_shown(write: Callable[..., Path],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = write()
    assert main(["scenario", "show", "tiny", "--scenario-file", str(path)]) == 0
    out = capsys.readouterr().out
    assert "tiny: a tiny bug" in out and f"file: {path}" in out
    assert main(["scenario", "list", "--scenario-dir", str(path.parent)]) == 0
    assert "tiny" in capsys.readouterr().out


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    from scenario_text import MINIMAL

    def _write() -> Path:
        path = tmp_path / "tiny.toml"
        path.write_text(MINIMAL)
        return path

    return _write
