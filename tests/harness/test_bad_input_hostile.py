"""Hostile input stays harmless: FIFOs, devices, odd values and doubled keys (docs/BAD_INPUT.md).

Every file a command reads on a user's word goes through one opener
(``harness.base.userfile``): a FIFO must not hang the command, ``/dev/zero``
must not be read until memory runs out, and either is one line, exit 64 (3 for
a history), before any engine call or run directory (the fake engine of
``tests/support/fake_engine.py`` logs any call). A FIFO left unrefused would
hang the test itself, so each case runs under an alarm that fails it instead.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_engine import Engine

from harness.base.errors import UsageError
from harness.cli import main
from harness.run.options import read_config
from nemesis.schedule import parse_schedule

HANG_S = 20


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    def hung(signum: int, frame: object) -> None:
        raise AssertionError(f"the command blocked for {HANG_S} s on a file it was given")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def one_line(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 64) -> str:
    got = main(argv)
    _, err = capsys.readouterr()
    assert got == code, err
    assert err.startswith("insync: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


def nothing_made(engine: Engine) -> None:
    assert engine.calls() == []
    assert not engine.results.exists()


@pytest.fixture(params=["fifo", "dev-zero"])
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / f"hostile-{request.param}.toml"
    if request.param == "fifo":
        os.mkfifo(path)
        return path, "is a FIFO (named pipe), not a regular file"
    path.symlink_to("/dev/zero")
    return path, "is a device, not a regular file"


@pytest.mark.parametrize("flag", ["--config", "--nemesis-schedule", "--replay", "--hosts"])
def test_run_refuses_a_fifo_or_a_device_for_every_file_option(
    engine: Engine, hostile: tuple[Path, str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, why = hostile
    line = one_line(["run", flag, str(path), "--results-dir", str(engine.results)], capsys)
    assert f"{flag} {path} {why}" in line
    nothing_made(engine)


def test_scenario_files_and_dirs_refuse_a_fifo_or_a_device(
    engine: Engine, hostile: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, why = hostile
    assert why in one_line(["scenario", "list", "--scenario-file", str(path)], capsys)
    assert why in one_line(["scenario", "list", "--scenario-dir", str(path.parent)], capsys)


def test_check_and_report_refuse_a_history_that_is_a_fifo_or_a_device(
    engine: Engine, hostile: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, why = hostile
    assert why in one_line(["check", str(path)], capsys, code=3)
    run = path.parent / "run"
    run.mkdir()
    (run / "history.jsonl").symlink_to(path)
    assert why in one_line(["check", str(run)], capsys, code=3)
    line = one_line(["report", str(run)], capsys, code=3)
    assert why in line and "has no history" not in line


def test_a_utf8_byte_order_mark_is_not_called_not_utf8(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_bytes(b"\xef\xbb\xbftime-limit = 5\n")
    assert read_config(config) == {"time_limit": 5.0}


@pytest.mark.parametrize(("text", "needle"), [
    ('time-limit = 5\ntime_limit = 9\n', "'time_limit' is given twice"),
    ('acks = "7"\n[run]\ntime-limit = 5\n', "'acks' is outside the [run] table"),
])
def test_run_config_keys_are_never_dropped_silently(
    engine: Engine, tmp_path: Path, text: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.toml"
    config.write_text(text)
    line = one_line(["run", "--config", str(config), "--results-dir", str(engine.results)],
                    capsys)
    assert needle in line
    nothing_made(engine)


def test_a_run_name_too_long_for_the_file_system_is_refused_in_bytes(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line(["run", "--name", "é" * 200, "--results-dir", str(engine.results)], capsys)
    assert "at most 200 bytes" in line
    nothing_made(engine)


@pytest.mark.parametrize("command", [["scenario", "run", "acks1-leader-failover",
                                      "--kafka-version", "4.1"], ["catalogue"]])
def test_a_missing_hosts_file_leaves_no_scenario_schedules_behind(
    engine: Engine, tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line([*command, "--hosts", str(tmp_path / "none.toml"),
                     "--results-dir", str(engine.results)], capsys)
    assert "no such file" in line
    nothing_made(engine)


# -- fault script steps (the parser every schedule and scenario goes through) ----------------


@pytest.mark.parametrize(("line", "needle"), [
    ('{"at": 1, "wait": ["isr-is-leader"], "key": "t0-0", "timeout": 5}', "'wait' must be"),
    ('{"at": 1, "wait": {"x": 1}, "key": "t0-0", "timeout": 5}', "'wait' must be"),
    ('{"at": NaN, "f": "kill", "value": "n1"}', "'at' must be a number"),
    ('{"at": 1e400, "f": "kill", "value": "n1"}', "'at' must be a number"),
    ('{"at": Infinity, "f": "kill", "value": "n1"}', "'at' must be a number"),
    ('{"after": 1, "wait": "recovered", "timeout": NaN}', "'timeout' must be"),
    ('{"at": 1, "f": "bump-clock", "value": {"n1": NaN}}', "not a finite number"),
])
def test_schedule_steps_refuse_unhashable_waits_and_non_finite_numbers(
    line: str, needle: str
) -> None:
    with pytest.raises(UsageError) as err:
        parse_schedule(line + "\n", toml=False, source="s.jsonl")
    assert needle in err.value.message


def test_a_toml_date_in_a_step_is_refused() -> None:
    with pytest.raises(UsageError) as err:
        parse_schedule("[[step]]\nat = 1\nf = \"kill\"\nvalue = 1979-05-27\n", toml=True)
    assert "no value a fault takes" in err.value.message


def test_a_line_separator_inside_a_json_string_does_not_split_the_line() -> None:
    (step,) = parse_schedule('{"at": 1, "f": "kill", "value": "n1\u2028"}\n', toml=False)
    assert step.value == "n1\u2028"


# -- a full disk ------------------------------------------------------------------------------


def no_space(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_results_disk_is_one_line_and_leaves_no_empty_run_directory(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.base import rundir

    monkeypatch.setattr(rundir, "write_json", no_space)
    line = one_line(["run", "--results-dir", str(engine.results)], capsys, code=69)
    assert "No space left on device" in line and "free some space" in line
    assert engine.calls() == []
    assert not [p for p in engine.results.rglob("*") if p.is_file() or p.name == "nodes"]


def test_a_full_disk_under_the_lock_directory_still_locks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cluster import lock

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(lock.os, "pwrite", no_space)
    with lock.cluster_lock("full-disk"):
        assert lock.holder(lock._path("full-disk")) == "another insync command"
