"""The nemesis's own errors.

Hierarchy::

    ClusterError (harness.base.errors)
    └── NemesisError            a fault could not be prepared (setup)
        └── TeardownIncomplete  a heal step failed on some node; every other step still ran

A fault that fails to *apply* is not an exception: ``invoke`` records it in the
completion's ``error`` so the history shows it.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.base.errors import ClusterError


class NemesisError(ClusterError):
    """The nemesis could not prepare the nodes for its faults."""


class TeardownIncomplete(NemesisError):
    """Healing failed somewhere; ``failures`` says where (step → message)."""

    def __init__(self, failures: Mapping[str, str]) -> None:
        detail = "; ".join(f"{k}: {v}" for k, v in failures.items())
        super().__init__(
            f"nemesis teardown incomplete: {detail}",
            hint="faults may still be in force; check with nemesis.residue or remove the cluster",
        )
        self.failures = dict(failures)
