"""Many nemeses as one: dispatch each op by ``f``; set up and tear down all of them.

As Jepsen's ``compose``: the runner drives a single nemesis. Teardown runs every
member's teardown even if one fails, then reports all failures together.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nemesis.errors import TeardownIncomplete
from nemesis.nodes import completion
from nemesis.protocol import Nemesis

if TYPE_CHECKING:
    from cluster import Cluster

LOG = logging.getLogger("insync.nemesis")


class ComposedNemesis:
    """The union of ``members``; their ``fs`` must not overlap."""

    def __init__(self, members: Sequence[Nemesis]) -> None:
        self.members = list(members)
        self._by_f: dict[str, Nemesis] = {}
        for m in self.members:
            for f in m.fs():
                if f in self._by_f:
                    raise ValueError(f"two nemeses handle {f!r}")
                self._by_f[f] = m

    def fs(self) -> frozenset[str]:
        return frozenset(self._by_f)

    def setup(self, cluster: Cluster) -> None:
        for m in self.members:
            m.setup(cluster)

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        member = self._by_f.get(op["f"])
        if member is None:
            return completion(op.get("value"), f"no nemesis handles {op['f']!r} in this run")
        try:
            return member.invoke(cluster, op)
        except Exception as err:  # a fault that blew up is recorded, never fatal
            LOG.exception("nemesis op %s failed", op["f"])
            return completion(op.get("value"), f"{type(err).__name__}: {err}")

    def teardown(self, cluster: Cluster) -> None:
        failures: dict[str, str] = {}
        for m in self.members:
            try:
                m.teardown(cluster)
            except TeardownIncomplete as err:
                failures.update(err.failures)
            except Exception as err:  # keep healing: every step must run
                LOG.exception("teardown of %s failed", type(m).__name__)
                failures[type(m).__name__] = f"{type(err).__name__}: {err}"
        if failures:
            raise TeardownIncomplete(failures)
