"""``cluster.lock``: real ``flock``s on a tmp dir, held and killed by real processes.

``tests/conftest.py`` points ``XDG_STATE_HOME`` at a tmp dir for the session;
each test here points it at its own, so what one leaves cannot decide another.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SUPPORT = str(Path(__file__).resolve().parents[1] / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

from lock_holder import hold, kill  # noqa: E402

from cluster.lock import (  # noqa: E402
    EVERY,
    cluster_lock,
    cluster_locks,
    every_cluster_lock,
    holder,
    lock_dir,
)
from harness.base.errors import EnvironmentProblem, UsageError  # noqa: E402

ARGV = ["/venv/bin/insync", "run", "--nodes", "3", "--cluster-name", "c1"]


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    yield tmp_path / "state" / "insync" / "locks"


def test_the_lock_dir_is_made_and_names_the_holder(state: Path) -> None:
    assert not state.exists()
    with cluster_lock("c1", ARGV):
        record = json.loads((state / "c1.lock").read_text())
        assert record["pid"] == os.getpid() and record["argv"] == ARGV
        assert holder(state / "c1.lock").startswith(f"pid {os.getpid()} (insync run --nodes 3")
    assert (state / "c1.lock").read_text() == ""  # released: no holder named any more
    assert lock_dir() == state


@pytest.mark.parametrize("value", ["", "relative/dir"], ids=["unset-empty", "relative"])
def test_xdg_state_home_that_xdg_says_to_ignore(
    value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert lock_dir() == tmp_path / "home" / ".local" / "state" / "insync" / "locks"


def test_another_process_holding_the_name_refuses_it_until_killed() -> None:
    proc = hold("c1", ARGV)
    try:
        with pytest.raises(EnvironmentProblem) as caught, cluster_lock("c1"):
            pytest.fail("the lock was taken twice")
        line = caught.value.one_line()
        assert caught.value.exit_code == 69
        assert f"cluster 'c1' is in use by pid {proc.pid} (insync run --nodes 3" in line
        assert "wait for it to end, or pass --cluster-name NAME" in line
        with cluster_lock("c2"):  # another name is free
            pass
    finally:
        kill(proc)
    with cluster_lock("c1"):  # SIGKILL released it: the kernel drops a dead holder's flock
        pass


def test_reentrant_within_one_process_and_released_by_the_outermost(state: Path) -> None:
    with cluster_lock("c1", ARGV), cluster_locks(["c1", "c2", "c1"], ARGV), cluster_lock("c1"):
        assert json.loads((state / "c2.lock").read_text())["argv"] == ARGV
    proc = hold("c1", ["insync", "cluster", "up"])  # every level released: another takes it
    kill(proc)


def test_a_refused_lock_leaves_nothing_held() -> None:
    proc = hold("c2", ARGV)
    try:
        with pytest.raises(EnvironmentProblem), cluster_locks(["c1", "c2"]):
            pytest.fail("c2 is held elsewhere")
    finally:
        kill(proc)
    other = hold("c1", ARGV)  # c1, taken first, was let go when c2 was refused
    kill(other)


def test_down_all_waits_for_no_one_and_no_one_starts_under_it() -> None:
    proc = hold("c1", ["insync", "matrix", "--acks", "1,all"])
    try:
        with pytest.raises(EnvironmentProblem) as caught, every_cluster_lock():
            pytest.fail("down --all ran under a held cluster")
        assert f"'c1' by pid {proc.pid} (insync matrix --acks 1,all)" in caught.value.one_line()
    finally:
        kill(proc)
    down_all = hold(None, ["insync", "cluster", "down", "--all"])
    try:
        with pytest.raises(EnvironmentProblem) as caught, cluster_lock("c9"):
            pytest.fail("a cluster was taken while every cluster was being removed")
        assert "every cluster is being removed by pid" in caught.value.one_line()
        assert "(insync cluster down --all)" in caught.value.one_line()
    finally:
        kill(down_all)
    with every_cluster_lock(), cluster_lock("c1"):  # one process may hold both
        pass


@pytest.mark.parametrize("name", ["", "a/../b", "a b", "x_y", EVERY], ids=repr)
def test_names_no_cluster_may_have_are_usage_errors(name: str, state: Path) -> None:
    with pytest.raises(UsageError, match="may hold only a-z, 0-9"), cluster_lock(name):
        pytest.fail("locked")
    assert not state.exists()


def test_a_lock_dir_that_cannot_be_made(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    with pytest.raises(EnvironmentProblem, match="cannot make the cluster lock") as caught, \
            cluster_lock("c1"):
        pytest.fail("locked")
    assert "XDG_STATE_HOME" in caught.value.one_line()


def test_a_holder_that_has_not_written_itself_yet(state: Path) -> None:
    state.mkdir(parents=True)
    (state / "c1.lock").write_text("")
    assert holder(state / "c1.lock") == "another insync command"
    (state / "c1.lock").write_text("{not json")
    assert holder(state / "c1.lock") == "another insync command"
