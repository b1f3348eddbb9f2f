"""One command per cluster name, through the real command lines (``cluster.lock``).

Another process (``tests/support/lock_holder.py``) holds the name ``insync``;
every command that would create, change, fault or remove that cluster is then
refused in one line, exit 69, naming the holder and what to do, with the fake
engine's log EMPTY and no run directory made. Bad input is still a usage error
(the checks come before the lock), read-only commands take no lock, and another
``--cluster-name`` is free.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from fake_engine import Engine
from lock_holder import hold, kill

from harness.cli import main

HOLDER = ["/venv/bin/insync", "run", "--time-limit", "600"]


@pytest.fixture
def held(engine: Engine) -> Iterator[subprocess.Popen[str]]:
    proc = hold("insync", HOLDER)
    yield proc
    kill(proc)


def results(engine: Engine) -> list[str]:
    return ["--results-dir", str(engine.results)]


R = ["--results-dir", "RESULTS"]
REFUSED = {
    "run": ["run", "--time-limit", "1", "--teardown", *R],
    "run-with-faults": ["run", "--nemesis", "kill", "--time-limit", "5", *R],
    "matrix": ["matrix", "--acks", "1,all", "--time-limit", "1", *R],
    "scenario-run": ["scenario", "run", "controller-failover", "--kafka-version", "4.1", *R],
    "catalogue": ["catalogue", "--scenarios", "controller-failover", "--versions", "4.1", *R],
    "cluster-up": ["cluster", "up"],
    "cluster-smoke": ["cluster", "smoke"],
    "cluster-down": ["cluster", "down"],
    "bench-nemesis": ["bench", "nemesis", "--cluster-name", "insync"],
    "bench-run": ["bench", "run", "--cluster-name", "insync", *R],
}


@pytest.mark.parametrize("argv", list(REFUSED.values()), ids=list(REFUSED))
def test_a_held_cluster_refuses_every_command_that_would_touch_it(
    engine: Engine, held: subprocess.Popen[str], argv: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [str(engine.results) if a == "RESULTS" else a for a in argv]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 69, err
    assert out == ""  # not even the plan line of a matrix: the lock comes first
    assert err == (f"insync: cluster 'insync' is in use by pid {held.pid} "
                   f"(insync run --time-limit 600) since {err.split(' since ')[1]}")
    assert err.rstrip().endswith("(wait for it to end, or pass --cluster-name NAME other "
                                 "than 'insync')")
    assert engine.calls() == []  # nothing asked of Docker, mvn, apt
    assert not list(engine.results.glob("*/*/test.json"))  # no run directory


def test_down_all_is_refused_while_any_cluster_is_held(
    engine: Engine, held: subprocess.Popen[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cluster", "down", "--all"]) == 69
    err = capsys.readouterr().err
    assert f"clusters are in use: 'insync' by pid {held.pid}" in err and err.count("\n") == 1
    assert engine.calls() == []


def test_bad_input_is_still_a_usage_error_first(
    engine: Engine, held: subprocess.Popen[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--nodes", "0", *results(engine)]) == 64
    assert main(["cluster", "up", "--kafka-version", "9.9.x"]) == 64
    assert "in use" not in capsys.readouterr().err
    assert engine.calls() == []


@pytest.mark.parametrize("argv", [["cluster", "status"], ["cluster", "logs"]],
                         ids=["status", "logs"])
def test_read_only_commands_take_no_lock(
    engine: Engine, held: subprocess.Popen[str], argv: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(argv) == 70  # they reached the (fake, failing) engine
    assert "in use" not in capsys.readouterr().err
    assert engine.calls() and engine.calls()[0].startswith("docker ")  # it asked the engine


def test_another_cluster_name_is_free(
    engine: Engine, held: subprocess.Popen[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The run gets as far as the Kafka download (the fake mvn fails), as without a lock."""
    code = main(["run", "--cluster-name", "other", "--time-limit", "1", *results(engine)])
    err = capsys.readouterr().err
    assert code == 69 and "mvn" in err and "in use" not in err
    assert engine.calls() and all(c.startswith("mvn ") for c in engine.calls())


def test_bench_cluster_holds_the_cluster_it_makes(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    proc = hold("bench-up", HOLDER)
    try:
        assert main(["bench", "cluster"]) == 69
    finally:
        kill(proc)
    assert "cluster 'bench-up' is in use by pid" in capsys.readouterr().err
    assert engine.calls() == []
