"""``NemesisOptions``: what faults a run asks for, checked before anything starts.

Kept apart from ``package`` (which builds the nemesis) because the fault
kinds' implementations (``nemesis.kinds``) read these options too, and
``package`` loads them: options below both, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cluster.kafka_release import KafkaVersion, feature_since
from harness.base.errors import UsageError
from harness.base.faults import FaultKind, all_fs, fault_names, in_registry_order, kind_of
from nemesis.grudge import SHAPES
from nemesis.recovery import AWAIT
from nemesis.schedule import ScheduleStep, load_schedule
from nemesis.shapes import is_shape, shape_problem
from nemesis.targets import TARGETS, is_target, leader_count, offsets_count

#: Fault ops a Kafka version runs only with one of its tools: the op, the
#: ``KafkaVersion`` field naming the tool's class (None: the version lacks it), the tool
#: and the first release that has it. 0.8.2 to 2.5 ship ZooKeeper-only tools instead
#: (kafka-preferred-replica-election, kafka-reassign-partitions --zookeeper), which
#: insync does not drive: those versions refuse the op before anything starts.
TOOL_OPS: tuple[tuple[str, str, str, str], ...] = (
    ("elect-leader", "leader_election_main", "kafka-leader-election", "2.4"),
    ("reassign", "reassign_main", "kafka-reassign-partitions --bootstrap-server", "2.6"),
)
#: Waits that read a partition's ISR from the brokers' metadata (``nemesis.waits``).
ISR_WAITS = frozenset({"isr-is-leader", "left-isr", "in-isr"})

#: What ``--nemesis-packet`` may name (delay/duplicate need netem in the kernel).
PACKET_BEHAVIOURS = ("loss", "rate", "delay", "duplicate")


@dataclass(frozen=True)
class NemesisOptions:
    """What faults a run injects, how often, where, and from which seed."""

    #: Fault kinds (``harness.base.faults`` names); empty: no nemesis (unless a schedule).
    faults: frozenset[str] = frozenset()
    #: Mean seconds between nemesis ops.
    interval: float = 10.0
    #: Seconds each random fault stays in force before its heal may come (the
    #: stagger adds to it). Healed after a random 0 to 2 intervals, a kill once lasted
    #: 0.3 s and saw no send; held twice ``replica.lag.time.max.ms``, the ISR shrinks
    #: and writes resume inside the fault, which is what the fault is there to test.
    min_in_force: float = 0.0
    #: Symbolic targets to draw from; partition shapes are the ones that are shapes
    #: (``majorities-ring`` etc. are shapes only). Empty: the defaults, which leave
    #: out ``all`` and ``majority`` (``nemesis.targets.DEFAULT_TARGETS``,
    #: ``nemesis.shapes.default_shapes``).
    targets: tuple[str, ...] = ()
    #: A timed script (see ``nemesis.schedule``) instead of random faults.
    schedule: Path | None = None
    #: Partitions also cut the clients (the host) off from minority-side nodes.
    partition_clients: bool = False
    seed: int = 0
    #: Topics whose leaders ``leaders`` targets mean (None: every non-internal topic).
    topics: tuple[str, ...] | None = None
    #: The run's topic-name prefix (``RunEnv.topic_prefix``): the cluster's topics are
    #: ``<prefix>t0``, the history's keys ``t0-1``. Targets (``leader:t0-1``), waits
    #: and recovery checks speak the history's keys, and see only this run's topics.
    topic_prefix: str = ""
    #: Packet behaviours the random generator draws from (delay/duplicate need netem).
    packet: tuple[str, ...] = ("loss", "rate")
    #: Seconds an ``await-recovery`` waits for the cluster before it gives up. Kept at
    #: 60: it now waits only for what can recover (``nemesis.recovery``), and a broker
    #: restart on a loaded host takes 20 s and more; a shorter wait would let the next
    #: fault land on a cluster still recovering, which is what the wait is for.
    recovery_timeout: float = 60.0
    #: Seconds of the main phase (the run's ``--time-limit``), when known: a wait for
    #: recovery issued in it ends when the phase does. None: waits are bounded by
    #: ``recovery_timeout`` only.
    time_limit: float | None = None
    #: Nodes in the cluster, when known: shapes that cannot mean anything on it are
    #: refused, and the default shapes fit it. None: decided when faults happen.
    nodes: int | None = None
    #: The build random ``upgrade`` ops go to: a release (``--upgrade-kafka-version``) or
    #: a person's build (``--upgrade-kafka-dist``), named as ``--kafka-version`` and
    #: ``--kafka-dist`` name the run's own. Neither: the newest release the catalogue
    #: pins (``cluster.versions.VERSIONS``).
    upgrade_version: str | None = None
    upgrade_dist: str | None = None

    def __post_init__(self) -> None:
        names = fault_names()
        bad = sorted(set(self.faults) - set(names))
        if bad:
            raise UsageError(f"unknown nemesis faults {bad}", hint=f"use {', '.join(names)}")
        if self.interval <= 0:
            raise UsageError(f"--nemesis-interval must be > 0, got {self.interval}")
        for target in self.targets:
            leader_count(target)  # a bad count (leaders:0) says so itself
            offsets_count(target)
        bad = sorted(t for t in self.targets if not is_target(t) and not is_shape(t))
        if bad:
            known = sorted(set(TARGETS) | set(SHAPES))
            raise UsageError(f"unknown nemesis targets {bad}",
                             hint=f"use {', '.join(known)}, leaders:N, primaries:N, "
                                  "coordinator:TXN_ID, group-coordinator:GROUP or "
                                  "offsets-leaders[:N]")
        if self.min_in_force < 0:
            raise UsageError(f"--nemesis-hold must be >= 0, got {self.min_in_force}")
        if self.recovery_timeout <= 0:
            raise UsageError(f"the recovery timeout must be > 0 s, got {self.recovery_timeout}")
        if self.time_limit is not None and self.time_limit <= 0:
            raise UsageError(f"the main phase must last > 0 s, got {self.time_limit}")
        for shape in (t for t in self.targets if not is_target(t)):
            problem = None if self.nodes is None else shape_problem(shape, self.nodes)
            if problem:
                raise UsageError(f"partition shape {shape!r} cannot mean anything here: {problem}",
                                 hint="use 3 nodes or more, or a schedule with explicit grudges")
        bad = sorted(set(self.packet) - set(PACKET_BEHAVIOURS))
        if bad:
            raise UsageError(f"unknown packet behaviours {bad}",
                             hint=f"use {', '.join(PACKET_BEHAVIOURS)}")
        if self.upgrade_version and self.upgrade_dist:
            raise UsageError("--upgrade-kafka-version and --upgrade-kafka-dist name one build",
                             hint="pass one of them")
        if "packet" in self.faults and not self.packet:
            raise UsageError("packet faults need at least one behaviour to draw from",
                             hint=f"give --nemesis-packet one of {', '.join(PACKET_BEHAVIOURS)}")

    def steps(self) -> list[ScheduleStep]:
        """The schedule's steps (none without a schedule); ``UsageError`` for a bad one."""
        known = all_fs() | {AWAIT}  # a script may wait for recovery too
        return [] if self.schedule is None else load_schedule(self.schedule, known, self.nodes)

    def check_version(self, version: KafkaVersion) -> None:
        """``UsageError`` (one line, before anything starts) for a fault op or a wait that
        ``version`` cannot run: an op whose tool it lacks (``TOOL_OPS``), asked for or in
        the schedule, or a wait on the ISR where its metadata does not show ISR changes
        (``CLIENT_FEATURES["isr_in_metadata"]``)."""
        steps = self.steps()
        kinds = {k.name for k in self.kinds(steps)}
        for f, field, tool, since in TOOL_OPS:
            if f in kinds and getattr(version, field) is None:
                raise UsageError(
                    f"{f} needs {tool} (Kafka {since}+), which Kafka {version.version} lacks",
                    hint=f"drop {f} from --nemesis and the schedule, or pass a newer "
                         "--kafka-version")
        isr = sorted({str(s.value.get("until")) for s in steps
                      if s.waits and isinstance(s.value, dict)} & ISR_WAITS)
        if isr and not version.can("isr_in_metadata"):
            raise UsageError(
                f"wait {isr[0]} reads the ISR from the metadata, which Kafka "
                f"{version.version} does not update when the ISR changes (Kafka "
                f"{feature_since('isr_in_metadata')}+)",
                hint="use a wait on the leader (leader-changed, leader-is) or recovered, "
                     "or pass a newer --kafka-version")

    def kinds(self, steps: Sequence[ScheduleStep] = ()) -> list[FaultKind]:
        """The kinds this run uses (asked for, or named by ``steps``), in registry order."""
        used = set(self.faults)
        for step in steps:
            kind = kind_of(step.f)
            if kind is not None:
                used.add(kind.name)
        return in_registry_order(used)

    @property
    def needs_faketime(self) -> bool:
        """Whether brokers must start under libfaketime (set ``ClusterSpec.faketime``)."""
        return any(k.needs_faketime for k in self.kinds(self.steps()))

    @property
    def needs_power_loss_fs(self) -> bool:
        """Whether brokers' data must be on the power-loss FS (``ClusterSpec.power_loss_fs``)."""
        return any(k.needs_power_loss_fs for k in self.kinds(self.steps()))
