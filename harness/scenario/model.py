"""A scenario as plain data: what it needs, what it does, and what it expects per version.

A :class:`Scenario` is what one file of ``harness/scenario/catalogue/`` (or a
user's own file) says, checked (``harness.scenario.load``). Nothing here parses
or runs: the values answer the questions the commands ask of them: which
versions the scenario covers (:meth:`Scenario.versions`), what it expects on
one (:meth:`Scenario.expected`), and the ``insync run`` a run of it is
(:meth:`Scenario.run_options`, :meth:`Scenario.run_argv`). A negative control
is a :class:`Variant`: the same script with some settings changed and its own
expectations.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cluster.versions import KafkaVersion, resolve_version
from harness.base.errors import UsageError
from harness.scenario.ranges import VersionRange

if TYPE_CHECKING:
    from harness.run.options import RunOptions
    from nemesis.schedule import ScheduleStep

#: The modes a scenario runs in when its file names none, in order of preference.
DEFAULT_MODES = ("kraft", "zookeeper")


#: What a run of a scenario tests, named by the acknowledged ops that gave its faults
#: something to lose (``harness.scenario.runs.untested``): ``sends`` (records) unless a
#: setting below says otherwise. Members that commit after every poll, recorded
#: (``commit = "sync"``), test the group's committed offsets: a run in which no commit
#: was acknowledged from the first fault's start to the last fault's end tested
#: nothing, however many sends were acknowledged.
TESTS_BY_SETTING: Mapping[tuple[str, Any], str] = {("commit", "sync"): "commits"}
DEFAULT_TESTS = "sends"

#: What a scenario may expect of the replica comparison (``Expectation.replicas``).
REPLICA_OUTCOMES = ("diverged", "consistent", "offsets-backwards")


def _replicas_match(expected: str, found: bool | str | None) -> bool:
    """Whether a replica comparison's outcome (see ``Expectation.matches``) is ``expected``."""
    if expected == "consistent":
        return found is True
    if expected == "offsets-backwards":
        return found == "offsets-backwards"
    return found is False or found == "offsets-backwards"  # diverged: any failed comparison


@dataclass(frozen=True)
class Expectation:
    """What a run on ``versions`` must end with (anomaly names as the checker reports
    them, ``harness.base.contract.ANOMALY_TYPES``):

    * ``valid`` True: the checker finds nothing;
    * ``valid`` False: each of ``anomalies`` appears (others may too), and at least one
      of ``any`` if it names some. A lost acknowledged write shows in a history in one
      of three ways, and which depends on timing, not on the bug: ``lost-write`` (never
      read, later offsets were), ``inconsistent-offsets`` (read before it was lost, and
      its offset later held another value) or ``unseen`` (the lost tail, nothing written
      after it). A loss scenario says ``any = [those three]``;
    * ``valid`` None (the file leaves it out): none of ``absent`` appears, whatever
      else does (a fixed bug on a setting that still loses writes another way);
    * ``replicas`` ``"diverged"`` / ``"consistent"`` / ``"offsets-backwards"``: what
      comparing the replicas' own logs after the run (``--check-replicas``,
      ``checkers.replicas``) must find, with any of the above or alone: diverged is any
      failed comparison (different records at one offset, or a log going back),
      offsets-backwards only a replica's log going back to offsets it had passed
      (KAFKA-3919); a run whose replicas were not compared never matches it;
    * ``read_stall_s`` N: the run's longest read_committed stall (the checker's
      ``stats``' ``read-committed-stalls``, docs/HISTORY.md "Read stalls") lasted at
      least N seconds, with any of the above or alone: a liveness finding (a stuck last
      stable offset), which no anomaly type names; a run whose verdict has no such
      measure (not transactional, or judged before the checker took it) never matches it;
    * ``abort_observed`` N: the checker classified at least N reads that followed an
      aborted transaction whose reads the client kept (``stats``' ``abort-rewinds``,
      docs/HISTORY.md "After an abort"), with any of the above: an informational
      scenario's proof that it measured what it is about;
    * ``logged`` ids: the brokers' logs hold each of these bugs' exact lines
      (``results.log_signatures``, the run's ``log_signatures``), with any of the above:
      a race whose effect a history shows only when a read falls in the moment it is
      wrong, proven from the broker's side; a run whose logs were not scanned never
      matches it.

    ``absent`` may also narrow ``valid = false``.
    """

    versions: VersionRange
    valid: bool | None
    anomalies: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    note: str = ""
    any: tuple[str, ...] = ()
    replicas: str | None = None
    read_stall_s: float | None = None
    abort_observed: int | None = None
    logged: tuple[str, ...] = ()

    @property
    def bug_shows(self) -> bool:
        """Whether the scenario's bug (or measured behaviour) is expected to show here."""
        return (self.valid is False or self.replicas in ("diverged", "offsets-backwards")
                or self.read_stall_s is not None or self.abort_observed is not None
                or bool(self.logged))

    def matches(self, valid: bool | str, anomalies: Collection[str],
                replicas: bool | str | None = None, stall_s: float | None = None,
                kept_observed: int | None = None, *,
                logged: Collection[str] | None = None) -> bool:
        """Whether a verdict (its ``valid`` and the anomaly types found; ``replicas``: the
        replica comparison's ``valid``, ``"offsets-backwards"`` for a failed one in which a
        log went back, None if none ran; ``stall_s``: its longest read_committed stall,
        None if not measured; ``kept_observed``: the reads it classified after aborts whose
        reads were kept; ``logged``: the ids of the bugs whose lines the brokers' logs hold,
        None if not scanned) is this outcome; an ``unknown`` verdict never is."""
        if not isinstance(valid, bool):
            return False
        if self.logged and (logged is None or not set(self.logged) <= set(logged)):
            return False
        if self.abort_observed is not None and (kept_observed or 0) < self.abort_observed:
            return False
        if self.replicas is not None and not _replicas_match(self.replicas, replicas):
            return False
        if self.read_stall_s is not None and (stall_s is None or stall_s < self.read_stall_s):
            return False
        if self.valid is True:
            return valid
        if self.valid is False and (valid or not set(self.anomalies) <= set(anomalies)):
            return False
        if self.valid is False and self.any and not set(self.any) & set(anomalies):
            return False
        return not set(self.absent) & set(anomalies)

    def describe(self) -> str:
        if self.valid is True:
            text = "valid"
        elif self.valid is False:
            parts = list(self.anomalies)
            if self.any:
                parts.append("one of " + " | ".join(self.any))
            text = "invalid: " + ", ".join(parts)
        else:
            text = "any verdict"
        if self.absent:
            text += "; never " + ", ".join(self.absent)
        if self.replicas is not None:
            text += f"; replicas {self.replicas}"
        if self.read_stall_s is not None:
            text += f"; a read_committed stall of at least {self.read_stall_s:g} s"
        if self.abort_observed is not None:
            text += (f"; at least {self.abort_observed} reads after aborts whose reads were "
                     "kept, classified")
        if self.logged:
            text += "; the brokers log " + ", ".join(self.logged)
        return text + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class Variant:
    """The scenario's script with settings changed: a negative control, usually.

    ``settings`` are option values by field name (``min_insync``), already
    converted by the run's ``OPTIONS`` table; ``broker`` adds server.properties.
    """

    name: str
    story: str
    settings: Mapping[str, Any]
    broker: Mapping[str, str]
    versions: VersionRange
    expect: tuple[Expectation, ...]


@dataclass(frozen=True)
class Scenario:
    """One scenario file, checked. ``steps`` are its ``[[step]]`` tables as written
    (the fault script, in the ``--nemesis-schedule`` vocabulary); ``parsed`` is what
    ``nemesis.schedule`` made of them (``harness.scenario.steps``)."""

    name: str
    bug: str
    story: str
    sources: tuple[str, ...]
    versions: VersionRange
    modes: tuple[str, ...]
    settings: Mapping[str, Any]
    broker: Mapping[str, str]
    steps: tuple[Mapping[str, Any], ...]
    expect: tuple[Expectation, ...]
    variants: tuple[Variant, ...] = ()
    path: Path | None = None
    parsed: tuple[ScheduleStep, ...] = field(default=(), compare=False)

    # -- questions the commands ask ------------------------------------------------------------

    def covered(self, variant: str | None = None) -> list[KafkaVersion]:
        """The table's versions a run of the scenario (or of ``variant``) may use, oldest
        first: those in its range that run in one of its modes."""
        versions = self.variant(variant).versions if variant else self.versions
        return [v for v in versions.versions() if self.covers(v, variant)]

    def covers(self, version: KafkaVersion, variant: str | None = None) -> bool:
        """Whether a run of the scenario (or of ``variant``) may use ``version``, any
        release or build, the table's or not: it is in the range and runs in one of the
        scenario's modes."""
        versions = self.variant(variant).versions if variant else self.versions
        return version in versions and any(version.supports(m) for m in self.modes)

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        names = ", ".join(v.name for v in self.variants) or "none"
        raise UsageError(f"scenario {self.name} has no variant {name!r}",
                         hint=f"its variants: {names}")

    def expected(self, version: str | KafkaVersion, variant: str | None = None) -> Expectation:
        """What a run on ``version`` must end with; ``UsageError`` outside the range."""
        kafka = resolve_version(version) if isinstance(version, str) else version
        expect = self.variant(variant).expect if variant else self.expect
        if self.covers(kafka, variant):
            for e in expect:
                if kafka in e.versions:
                    return e
        which = f"scenario {self.name}" + (f" variant {variant}" if variant else "")
        raise UsageError(
            f"{which} does not cover Kafka {kafka.version}",
            hint=f"use one of {', '.join(v.line for v in self.covered(variant))}",
        )

    def tests(self, variant: str | None = None) -> str:
        """What a run of the scenario (or of ``variant``) tests (``TESTS_BY_SETTING``)."""
        settings = {**self.settings, **(self.variant(variant).settings if variant else {})}
        found = (TESTS_BY_SETTING.get((k, v)) for k, v in settings.items()
                 if isinstance(v, str | int | bool))
        return next((t for t in found if t is not None), DEFAULT_TESTS)

    def mode_for(self, version: KafkaVersion) -> str:
        """The scenario's first mode that ``version`` runs in."""
        for mode in self.modes:
            if version.supports(mode):
                return mode
        raise UsageError(f"scenario {self.name} runs in {', '.join(self.modes)} mode, which "
                         f"Kafka {version.version} does not",
                         hint=f"use one of {', '.join(v.line for v in self.covered())}")

    def options(self, version: str | KafkaVersion, variant: str | None = None,
                build: str | None = None) -> RunOptions:
        """The ``insync run`` options of this scenario on ``version``, before a schedule
        file is named and before they are checked (:meth:`run_options` does both).
        ``build``: the path of a user's build (``--kafka-dist``) whose version ``version``
        is; the run deploys it instead of a release.

        The test's name is ``scenario-<name>[-<variant>]``; anything else a caller
        wants (``--results-dir``, ``--seed``) it sets on the copy (``dataclasses.replace``).
        """
        from harness.run.options import RunOptions

        kafka = resolve_version(version) if isinstance(version, str) else version
        self.expected(kafka, variant)  # refuses a version out of range
        chosen = self.variant(variant) if variant else None
        settings = {**self.settings, **(chosen.settings if chosen else {})}
        broker = {**self.broker, **(chosen.broker if chosen else {})}
        settings.setdefault("mode", self.mode_for(kafka))
        if settings["mode"] != "kraft":  # KRaft voters: nothing to a ZooKeeper-mode run, whose
            settings.pop("controllers", None)  # settings stay those it has without them
        if _takes_option(settings.get("workload"), "pin_keys"):  # keys the workload retires
            settings.setdefault("pin_keys", self.script_keys())
        where: dict[str, Any] = (
            {"kafka_version": kafka.line + ".x"} if build is None else {"kafka_dist": build})
        return RunOptions(
            **settings,
            **where,
            name="-".join(["scenario", self.name, *([variant] if variant else [])]),
            broker_config=dict(broker),
        )

    def script_keys(self) -> list[str]:
        """The partitions the fault script names (``leader:t0-0``, a wait's ``key``; not
        ``*``, any partition), in order: the run pins them (``--pin-keys``), so the
        workload keeps writing to them through the faults instead of moving on to fresh
        keys."""
        from nemesis.targets import named_partition

        found: list[str] = []
        for step in self.steps:
            value = step.get("value")
            targets = [value, *(value.values() if isinstance(value, Mapping) else ())]
            named = [step.get("key"), *map(named_partition, targets)]
            found += [k for k in named if isinstance(k, str) and k != "*" and k not in found]
        return found

    def run_options(
        self, version: str | KafkaVersion, schedule: str | Path, variant: str | None = None,
        build: str | None = None,
    ) -> RunOptions:
        """:meth:`options` with ``--nemesis-schedule`` the file :meth:`write_schedule`
        wrote, checked as ``insync run`` checks its options."""
        return replace(self.options(version, variant, build),
                       nemesis_schedule=str(schedule)).validate()

    def run_argv(
        self, version: str | KafkaVersion, schedule: str | Path, variant: str | None = None
    ) -> list[str]:
        """The flags of ``insync run`` that run this scenario on ``version`` (after
        ``insync run``; every option spelled out, as a stored test.json records it)."""
        return self.run_options(version, schedule, variant).argv()[2:]

    def schedule_text(self) -> str:
        """The fault script as a ``--nemesis-schedule`` file (JSON Lines, one step a line,
        in file order), which :meth:`write_schedule` stores."""
        return "".join(json.dumps(dict(step), sort_keys=True) + "\n" for step in self.steps)

    def write_schedule(self, directory: str | Path) -> Path:
        """Write the fault script into ``directory`` (made if missing); its path.

        The file is named after the script's contents (``scenario-NAME-<sha256,
        12 hex>.schedule.jsonl``): a run records the path in its settings, and a
        rerun resumes only runs whose settings are equal, so runs of an older
        script, whose file stays as they ran it, are never counted as runs of
        this one.
        """
        text = self.schedule_text()
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        path = Path(directory) / f"scenario-{self.name}-{digest}.schedule.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def affected(self) -> list[KafkaVersion]:
        """Covered versions where the scenario itself expects anomalies (the bug is there)."""
        return [v for v in self.covered() if self.expected(v).bug_shows]

    def fixed(self) -> list[KafkaVersion]:
        """Covered versions where the scenario itself expects its bug not to show."""
        return [v for v in self.covered() if not self.expected(v).bug_shows]


def _takes_option(workload: Any, option: str) -> bool:
    """Whether the scenario's workload (the default one when unnamed) has ``option``."""
    from workloads import DEFAULT_WORKLOAD, WORKLOADS

    chosen = WORKLOADS.get(workload if isinstance(workload, str) else DEFAULT_WORKLOAD)
    return chosen is not None and any(spec.name == option for spec in chosen.options)

