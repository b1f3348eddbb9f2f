"""The runner's cleanup touches only the cluster this run owns (fakes, no Docker).

A run owns its cluster once ``lifecycle.up`` returned it, or once ``up`` began
creating its containers (the ``on_create`` hook). Before that, a failure (no
engine, Maven unreachable) must not read logs from, nor ``down``, a cluster of
the same name that some earlier command left running.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cluster import lifecycle
from harness.errors import ClusterError, EnvironmentProblem, InsyncError
from harness.run import parse, run
from harness.run.runner import Run

pytestmark = pytest.mark.usefixtures("engine")  # belt and braces: lifecycle is faked too


@dataclass
class FakeLifecycle:
    """Stands in for ``cluster.lifecycle``: records every call; ``up`` does what it's told."""

    up_does: Callable[[Callable[[], None] | None], Any]
    calls: list[tuple[str, str | None]] = field(default_factory=list)

    def up(self, spec: Any, *, on_create: Callable[[], None] | None = None, **_: Any) -> Any:
        self.calls.append(("up", spec.name))
        return self.up_does(on_create)

    def down(self, name: str | None) -> str:
        self.calls.append(("down", name))
        return "0 container(s)"

    def attach(self, name: str = "insync") -> Any:
        self.calls.append(("attach", name))
        return FakeCluster()

    def touched(self) -> list[str]:
        return [what for what, _ in self.calls if what != "up"]


@dataclass
class FakeVersion:
    version: str = "4.1.2"


@dataclass
class FakeCluster:
    nodes: dict[str, Any] = field(default_factory=dict)
    version: FakeVersion = field(default_factory=FakeVersion)
    bootstrap: str = "127.0.0.1:9"


def no_engine(on_create: Callable[[], None] | None) -> Any:
    raise EnvironmentProblem("no Docker engine answers", hint="start one")


def half_built(on_create: Callable[[], None] | None) -> Any:
    assert on_create is not None
    on_create()  # containers are being created now: they are this run's
    raise ClusterError("node n2 never became ready", hint="see its log")


def comes_up(on_create: Callable[[], None] | None) -> Any:
    return FakeCluster()


def built(on_create: Callable[[], None] | None) -> Any:
    assert on_create is not None
    on_create()
    return FakeCluster()


def install(monkeypatch: pytest.MonkeyPatch, fake: FakeLifecycle) -> None:
    for name in ("up", "down", "attach"):
        monkeypatch.setattr(lifecycle, name, getattr(fake, name))


def go(tmp_path: Path, *flags: str) -> tuple[list[str], list[str], InsyncError | None]:
    said: list[str] = []
    owned: list[str] = []
    opts = parse(["--results-dir", str(tmp_path / "results"), "--cluster-name", "mine", *flags])
    try:
        run(opts, say=said.append, live=False, on_cluster=owned.append)
    except InsyncError as err:
        return said, owned, err
    return said, owned, None


@pytest.mark.parametrize("teardown", [True, False], ids=["teardown", "keep"])
def test_up_that_never_got_going_leaves_the_named_cluster_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, teardown: bool
) -> None:
    fake = FakeLifecycle(no_engine)
    install(monkeypatch, fake)
    said, owned, err = go(tmp_path, *(["--teardown"] if teardown else []))
    assert isinstance(err, EnvironmentProblem)  # the CLI prints it, once
    assert fake.touched() == []  # no down, not even an attach to read logs
    assert owned == []
    assert not any(line.startswith("run stopped") for line in said)
    assert not any("cleanup" in line for line in said)


def test_a_cluster_this_run_began_creating_is_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeLifecycle(half_built)
    install(monkeypatch, fake)
    said, owned, err = go(tmp_path, "--teardown")
    assert isinstance(err, ClusterError)
    assert fake.calls == [("up", "mine"), ("attach", "mine"), ("down", "mine")]  # logs, then rm
    assert owned == ["mine"]
    assert "removed cluster 'mine' (0 container(s))" in said


def test_without_teardown_a_half_built_cluster_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeLifecycle(half_built)
    install(monkeypatch, fake)
    _, _, err = go(tmp_path)
    assert isinstance(err, ClusterError)
    assert fake.touched() == ["attach"]  # its logs are collected, the cluster stays


@pytest.mark.parametrize("up_does", [comes_up, built], ids=["reused", "built"])
@pytest.mark.parametrize("teardown", [True, False], ids=["teardown", "keep"])
def test_a_cluster_up_returned_is_removed_only_with_teardown(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    teardown: bool,
    up_does: Callable[[Callable[[], None] | None], Any],
) -> None:
    fake = FakeLifecycle(up_does)
    install(monkeypatch, fake)

    def no_topics(self: Run, cluster: Any) -> Any:
        raise ClusterError("cannot create the workload topics", hint="see the broker logs")

    monkeypatch.setattr(Run, "_topics", no_topics)
    said, owned, err = go(tmp_path, *(["--teardown"] if teardown else []))
    assert isinstance(err, ClusterError) and owned == ["mine"]
    assert fake.touched() == (["down"] if teardown else [])  # logs came from the returned cluster
    assert not any(line.startswith("run stopped") for line in said)
