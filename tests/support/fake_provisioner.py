"""A fake ``Provisioner`` that records every call, registered where the runner finds its own.

The fake is registered in ``cluster.provisioner.PROVISIONERS`` under the
default name, so the runner finds it exactly as it would find Docker; its
``up`` does what the test says (return a ``FakeCluster``, or raise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from cluster.provisioner import DEFAULT_PROVISIONER, PROVISIONERS


@dataclass
class FakeVersion:
    version: str = "4.1.2"


@dataclass
class FakeCluster:
    nodes: dict[str, Any] = field(default_factory=dict)
    version: FakeVersion = field(default_factory=FakeVersion)
    bootstrap: str = "127.0.0.1:9"


@dataclass
class RecordingProvisioner:
    """A ``Provisioner`` that records every call; ``up`` does what the test says."""

    up_does: Callable[[], Any]
    calls: list[tuple[str, str | None]] = field(default_factory=list)
    #: ``fresh`` of each ``up`` call: whether the caller asked for a new cluster
    fresh: list[bool] = field(default_factory=list)

    def up(self, spec: Any, *, fresh: bool = False, **_: Any) -> Any:
        self.calls.append(("up", spec.name))
        self.fresh.append(fresh)
        return self.up_does()

    def attach(self, name: str = "insync") -> Any:
        self.calls.append(("attach", name))
        return FakeCluster()

    def down(self, name: str | None) -> str:
        self.calls.append(("down", name))
        return "0 node(s)"

    def prepare(self, *, rebuild: bool = False) -> str:
        self.calls.append(("prepare", None))
        return "nothing"

    def touched(self) -> list[str]:
        return [what for what, _ in self.calls if what != "up"]


def comes_up() -> Any:
    return FakeCluster()


def install(monkeypatch: pytest.MonkeyPatch, up_does: Callable[[], Any]) -> RecordingProvisioner:
    fake = RecordingProvisioner(up_does)
    monkeypatch.setitem(PROVISIONERS, DEFAULT_PROVISIONER, lambda _placement: fake)
    return fake
