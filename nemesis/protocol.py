"""What the runner needs from a fault injector, and how packages compose.

As in Jepsen: a ``Nemesis`` turns a nemesis op from the generator into a real
fault on the real nodes and says what it *really* did (the exact grudge, the
pids killed, the clock offsets); a ``NemesisPackage`` bundles a nemesis with
the generator that schedules its faults and the final generator that heals
them all before the drain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness.gen.core import GenLike

if TYPE_CHECKING:
    from cluster import Cluster


@runtime_checkable
class Nemesis(Protocol):
    """Applies faults to a cluster; the runner calls it from one thread, one op at a time."""

    def fs(self) -> frozenset[str]:
        """The op names (``f``) this nemesis handles, e.g. ``start-partition``."""
        ...

    def setup(self, cluster: Cluster) -> None:
        """Prepare the nodes (e.g. check iptables works); no fault is in force after it."""
        ...

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        """Apply ``op`` (``{"f": ..., "value": <symbolic target>}``).

        Returns the completion's fields: ``{"value": <what was really done>}``,
        plus ``"error"`` when the fault could not be (fully) applied. Never
        raises for a fault that failed to apply: that is recorded, not fatal.
        """
        ...

    def teardown(self, cluster: Cluster) -> None:
        """Heal every fault on every node (no rules, no stopped processes, clocks reset).

        Always runs, even after an interrupt; must be safe to call twice.
        """
        ...


@dataclass(frozen=True)
class NemesisPackage:
    """A nemesis with the generator of its faults and the one that heals them."""

    nemesis: Nemesis | None
    generator: GenLike = None
    final_generator: GenLike = None
    #: For reports: which ``f`` starts and which stops each kind of fault.
    fault_spans: Mapping[str, tuple[str, str]] = field(default_factory=dict)
