"""``workloads.WORKLOADS``: each workload's options are declared once and reach every source."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
from mem_kafka import fake_workload

from harness.base.errors import UsageError
from harness.run.options import BY_NAME, OPTIONS, RunOptions, parse
from harness.run.verdict import CHECKERS
from workloads import WORKLOADS, WorkloadSettings, workload_name, workload_of, workload_rows

NAMES = list(WORKLOADS)  # in registry order, as the help lists them


def test_every_option_is_declared_once() -> None:
    names = [spec.name for spec in OPTIONS]
    assert len(names) == len(set(names))
    assert set(workload_rows()) <= set(OPTIONS)


@pytest.mark.parametrize("name", NAMES)
def test_a_workloads_rows_are_its_settings_fields(name: str) -> None:
    workload = WORKLOADS[name]
    assert workload.name == name
    assert [s.name for s in workload.options] == [f.name for f in fields(workload.settings)]
    assert issubclass(WorkloadSettings, workload.settings)  # the run's options hold them
    assert issubclass(RunOptions, workload.settings)
    defaults = RunOptions()
    for f in fields(workload.settings):
        assert getattr(defaults, f.name) == getattr(workload.settings(), f.name)


@pytest.mark.parametrize("name", NAMES)
def test_a_workloads_checker_is_one_the_runner_has(name: str) -> None:
    assert WORKLOADS[name].checker.name in CHECKERS


@pytest.mark.parametrize("name", NAMES)
def test_a_workloads_options_come_from_flags_and_round_trip_through_argv(name: str) -> None:
    opts = parse(["--workload", name]).resolved()
    assert opts.workload == name
    assert parse(opts.argv()[2:]) == opts
    assert json.loads(json.dumps(WORKLOADS[name].block(opts)))  # test.json can hold it


def test_workload_choices_come_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ", ".join(NAMES) in BY_NAME["workload"].help
    with pytest.raises(ValueError):
        workload_name("fake")
    with pytest.raises(UsageError):
        workload_of("fake")
    workload, _ = fake_workload()
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    assert workload_name(" Fake ") == "fake" and workload_of("fake") is workload
    assert parse(["--workload", "fake"]).resolved().name == "fake"


def test_another_workloads_option_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    workload, _ = fake_workload()
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    parse(["--workload", "fake", "--acks", "all"])  # its default: nothing was asked
    with pytest.raises(UsageError) as err:
        parse(["--workload", "fake", "--txn"])
    assert "--txn is an option of the queue workload, not of --workload fake" in (
        err.value.one_line())
