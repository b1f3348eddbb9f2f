"""The runner's cleanup touches only the cluster this run owns (a fake provisioner, no Docker).

A run owns its cluster once the provisioner's ``up`` returned it. Before that, a
failure (no engine, Maven unreachable, a node that never became ready) must not
read logs from, nor ``down``, a cluster of the same name that some earlier
command left running; the provisioner keeps a half-built one for
``insync cluster logs``. The fake is registered where every caller gets its
provisioner (``cluster.provisioner.PROVISIONERS``), so the runner finds it
exactly as it would find Docker.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_provisioner import comes_up, install
from mem_kafka import fake_workload

from harness.base.errors import ClusterError, EnvironmentProblem, InsyncError
from harness.run import parse, run
from workloads import WORKLOADS

pytestmark = pytest.mark.usefixtures("engine")  # belt and braces: a fake docker on PATH too


def no_engine() -> Any:
    raise EnvironmentProblem("no Docker engine answers", hint="start one")


def never_ready() -> Any:
    raise ClusterError("node n2 never became ready", hint="see `insync cluster logs`")


def go(tmp_path: Path, *flags: str) -> tuple[list[str], list[str], InsyncError | None]:
    said: list[str] = []
    owned: list[str] = []
    opts = parse(["--results-dir", str(tmp_path / "results"), "--cluster-name", "mine", *flags])
    try:
        run(opts, say=said.append, live=False, on_cluster=owned.append)
    except InsyncError as err:
        return said, owned, err
    return said, owned, None


@pytest.mark.parametrize("up_does", [no_engine, never_ready], ids=["no-engine", "never-ready"])
@pytest.mark.parametrize("teardown", [True, False], ids=["teardown", "keep"])
def test_a_cluster_up_never_returned_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, teardown: bool, up_does: Callable[[], Any]
) -> None:
    fake = install(monkeypatch, up_does)
    said, owned, err = go(tmp_path, *(["--teardown"] if teardown else []))
    assert isinstance(err, EnvironmentProblem | ClusterError)  # the CLI prints it, once
    assert fake.touched() == []  # no down, not even an attach to read logs
    assert owned == []
    assert not any(line.startswith("run stopped") for line in said)
    assert not any("cleanup" in line or "removed" in line for line in said)


@pytest.mark.parametrize("teardown", [True, False], ids=["teardown", "keep"])
def test_a_cluster_up_returned_is_removed_only_with_teardown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, teardown: bool
) -> None:
    fake = install(monkeypatch, comes_up)
    no_topics = ClusterError("cannot create the workload topics", hint="see the broker logs")
    workload, state = fake_workload(setup_error=no_topics)
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    flags = ["--workload", "fake", *(["--teardown"] if teardown else [])]
    said, owned, err = go(tmp_path, *flags)
    assert isinstance(err, ClusterError) and owned == ["mine"]
    assert fake.touched() == (["down"] if teardown else [])  # logs came from the returned cluster
    assert ("removed cluster 'mine' (0 node(s))" in said) is teardown
    assert not any(line.startswith("run stopped") for line in said)
    # what the workload made is undone only on a cluster that stays
    assert [run.calls for run in state.runs] == [["setup"] if teardown else ["setup", "teardown"]]


def test_a_cleanup_step_that_fails_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = install(monkeypatch, comes_up)

    def host_gone(name: str | None) -> str:
        raise ClusterError("teardown incomplete: n2: cannot connect to 10.0.0.2:22",
                           hint="run `insync cluster down --hosts hosts.toml` again")

    monkeypatch.setattr(fake, "down", host_gone)
    workload, _ = fake_workload(setup_error=ClusterError("no topics", hint="see the logs"))
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    said, _, _ = go(tmp_path, "--workload", "fake", "--teardown")
    assert ("cleanup: remove cluster failed: teardown incomplete: n2: cannot connect to "
            "10.0.0.2:22 (run `insync cluster down --hosts hosts.toml` again)") in said


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "reuse"])
def test_fresh_cluster_asks_the_provisioner_for_a_new_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: bool
) -> None:
    fake = install(monkeypatch, comes_up)
    workload, _ = fake_workload(setup_error=ClusterError("no topics", hint="see the logs"))
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    flags = ["--workload", "fake", *(["--fresh-cluster", "true"] if fresh else [])]
    go(tmp_path, *flags)
    assert fake.fresh == [fresh]


class _LoggedNode:
    """A node whose logs the run collects, in the one order of events the test reads."""

    def __init__(self, events: list[str]) -> None:
        self.name = "n1"
        self.events = events

    def collect_logs(self, into: Path) -> None:
        self.events.append("collect logs")


def _made_but_never_ready(events: list[str]) -> Callable[[], Any]:
    from types import SimpleNamespace

    from cluster.model import NotReady

    def up() -> Any:
        made = SimpleNamespace(spec=SimpleNamespace(name="mine"), nodes={"n1": _LoggedNode(events)})
        cause = ClusterError("node n2 never became ready", hint="see `insync cluster logs`")
        raise NotReady(made, cause, "insync cluster down --cluster-name mine")  # type: ignore[arg-type]

    return up


@pytest.mark.parametrize("teardown", [True, False], ids=["teardown", "keep"])
def test_a_cluster_up_made_that_never_became_ready_is_the_runs_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, teardown: bool
) -> None:
    """up() created it, then readiness failed: its logs are collected; --teardown removes
    it through the normal teardown (logs first); without, it stays and the line says how
    to remove it."""
    events: list[str] = []
    fake = install(monkeypatch, _made_but_never_ready(events))
    real_down = fake.down

    def down(name: str | None) -> str:
        events.append(f"down {name}")
        return real_down(name)

    monkeypatch.setattr(fake, "down", down)
    said, owned, err = go(tmp_path, *(["--teardown"] if teardown else []))
    assert isinstance(err, ClusterError) and err.exit_code == 70
    assert owned == ["mine"]
    assert events == (["collect logs", "down mine"] if teardown else ["collect logs"])
    assert fake.touched() == (["down"] if teardown else [])
    line = err.one_line()
    assert line.startswith("cluster 'mine' never became ready: node n2 never became ready")
    assert "\n" not in line and "logs are in " in line
    if teardown:
        assert line.endswith("it is removed (teardown))")
        assert "removed cluster 'mine' (0 node(s))" in said
    else:
        assert line.endswith("remove it with `insync cluster down --cluster-name mine`)")
    assert not any(line.startswith("run stopped") for line in said)
