"""The ``upgrade`` kind: a rolling restart of every broker onto another build, then the
protocol or metadata bump (``nemesis.upgrade``).

``upgrade`` takes a build as the command line names one (``"4.1.2"``, or a
table ``{kafka-version | kafka-dist, bump?, stop-timeout-s?, isr-timeout-s?}``);
random runs go to ``--upgrade-kafka-version`` or ``--upgrade-kafka-dist`` (neither:
the newest release the catalogue pins, ``cluster.versions.VERSIONS``),
without the bump when the run also draws ``downgrade`` (a bumped cluster
cannot be downgraded). ``end-upgrade`` starts what a roll left down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cluster.kafka_dist import inspect_dist
from cluster.version_order import parse_version
from cluster.versions import VERSIONS, names_a_line
from harness.base.errors import UsageError
from harness.base.values import Range
from nemesis.kinds import fields_of
from nemesis.upgrade import DOWNGRADE, KEYS, UPGRADE, UpgradeNemesis

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

#: The timeouts a table may set, in seconds (as ``restart``'s).
TIMEOUTS = {"stop-timeout-s": Range(1, 3600), "isr-timeout-s": Range(0, 3600)}


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """The run's upgrade build, bumped unless the run also draws downgrades."""
    value: dict[str, Any] = (
        {"kafka-dist": opts.upgrade_dist} if opts.upgrade_dist
        else {"kafka-version": opts.upgrade_version or VERSIONS[0].version})
    value["bump"] = DOWNGRADE not in opts.faults
    return {"f": UPGRADE, "value": value}


def value_problem(f: str, value: Any, *, needs_build: bool) -> str | None:
    """What is wrong with an ``upgrade``/``downgrade`` value (None: nothing)."""
    if isinstance(value, str):
        value = {"kafka-version": value}
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        return f"{f} takes a Kafka version or a table {{{', '.join(KEYS)}}}, got {value!r}"
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        return f"{f} takes {', '.join(KEYS)}; got {', '.join(map(repr, unknown))}"
    version, dist = value.get("kafka-version"), value.get("kafka-dist")
    if version is not None and dist is not None:
        return f"{f} takes kafka-version or kafka-dist, not both"
    if needs_build and version is None and dist is None:
        return f"{f} needs the build to go to: kafka-version = \"4.1.2\" or kafka-dist = PATH"
    if version is not None and not (isinstance(version, str) and (
            names_a_line(version) or parse_version(version) is not None)):
        return f"kafka-version must be a release, a line or latest (e.g. 4.1.2), got {version!r}"
    if dist is not None:
        try:
            inspect_dist(str(dist))
        except UsageError as err:
            return f"kafka-dist {err}"
    if "bump" in value and not isinstance(value["bump"], bool):
        return f"bump must be true or false, got {value['bump']!r}"
    return fields_of(value, TIMEOUTS)


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A build to go to (a release or a ``--kafka-dist`` build), timeouts in range."""
    return None if f != UPGRADE else value_problem(f, value, needs_build=True)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return UpgradeNemesis(UPGRADE, resolver)


def residue(node: KafkaNode) -> list[str]:
    """Nothing of its own: a broker left down is reported by ``nemesis.residue``, and the
    build a node runs after an upgrade is the upgrade itself."""
    return []
