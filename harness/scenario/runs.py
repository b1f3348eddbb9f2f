"""Running scenarios: each (scenario, variant, version) is one matrix combination.

Why a combination: ``insync scenario run`` and ``insync catalogue`` need what
``insync matrix`` already has (N runs each, runs stored and complete skipped on
a rerun, the cluster reused while its spec stays the same and removed at the
end), so a scenario on one version becomes a :class:`~harness.matrix.Combination`
and :func:`harness.matrix.run_combinations` drives it. What is the scenario's
own: the test name (``scenario-NAME[-VARIANT]-V.x``, one folder per case under
the results dir), the fault script written under the results dir at a path
named after its contents (so a rerun of the same script has settings equal to
the stored ones and resumes, and a changed script's runs are not counted as
the new one's: the rerun says so in one line), the ``scenario`` block added to
each run's test.json (name, variant, bug, sources, expectation; the report's
scenario panel and ``insync analyze`` read it) and the judgement of each
verdict against :meth:`Expectation.matches`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from checkers import describe_rewinds
from cluster.kafka_dist import KafkaDist
from cluster.versions import KafkaVersion
from harness.base.errors import InsyncError, UsageError
from harness.base.rundir import RunDir, read_json, write_json
from harness.matrix import Combination, Outcome, RunFn, order, run_combinations, with_run
from harness.run.setup import preflight
from harness.scenario.load import find
from harness.scenario.model import DEFAULT_TESTS, Expectation, Scenario
from results.log_signatures import describe as describe_logged

#: Where the fault scripts are written, under the results dir (one file per script's
#: contents: resume compares their paths).
SCHEDULES = "scenario-schedules"
#: The run options a scenario leaves to the caller: where the nodes are, not what the bug needs.
PLACEMENT = ("cluster_name", "heap_mb", "base_image", "hosts", "accept_new_host_keys")


@dataclass(frozen=True)
class Case:
    """One scenario (or variant) on one Kafka version, ready to run."""

    scenario: Scenario
    variant: str | None
    version: KafkaVersion
    combo: Combination
    build: KafkaDist | None = None  # a user's build (``--kafka-dist``), whose version is

    @property
    def expected(self) -> Expectation:
        return self.scenario.expected(self.version, self.variant)

    @property
    def tests(self) -> str:
        """What its runs test (``Scenario.tests``): which acknowledged ops count."""
        return self.scenario.tests(self.variant)

    @property
    def column(self) -> str:
        """The catalogue's column: the version's line, or the build's version."""
        return self.version.line if self.build is None else f"{self.build.version} build"

    @property
    def target(self) -> str:
        """What the case runs, in words: ``Kafka 4.1.2``, or the build by file name,
        version, commit id and digest (``build kafka_2.13-4.5.0-SNAPSHOT.tgz (Kafka
        4.5.0-SNAPSHOT, commit 1a2b3c4d, sha256 0123456789ab)``)."""
        if self.build is None:
            return f"Kafka {self.version.version}"
        b = self.build
        commit = f"commit {b.commit_id}, " if b.commit_id else ""
        return (f"build {Path(b.path).name} (Kafka {b.version}, {commit}"
                f"sha256 {b.sha256[:12]})")

    @property
    def label(self) -> str:
        """``isr-shrink-unclean`` or ``isr-shrink-unclean/unclean-off``."""
        return self.scenario.name + (f"/{self.variant}" if self.variant else "")


def case_name(s: Scenario, version: KafkaVersion, variant: str | None,
              build: KafkaDist | None = None) -> str:
    """The test name: ``scenario-acks1-leader-failover-acks-all-4.1.x``; on a build, its
    version (``scenario-acks1-leader-failover-4.5.0-SNAPSHOT``), as ``insync matrix``
    names a build's runs."""
    where = f"{version.line}.x" if build is None else build.version
    return "-".join(["scenario", s.name, *([variant] if variant else []), where])


def make_case(
    s: Scenario,
    version: KafkaVersion,
    variant: str | None,
    *,
    results_dir: str,
    placement: Mapping[str, Any] | None = None,
    build: KafkaDist | None = None,
) -> Case:
    """The case, checked as ``insync run`` checks before it creates anything; on
    ``build`` (a user's build, whose version ``version`` must be) if given.

    A version outside the scenario's (or variant's) range and an unknown variant
    are ``UsageError`` before any file is written.
    """
    s.expected(version, variant)
    path = None if build is None else build.path
    # where the nodes come from (--hosts read and checked) before the script is written:
    # a refused placement leaves no scenario-schedules/ behind
    replace(s.options(version, variant, path), **dict(placement or {})).check_placement()
    where = Path(results_dir) / SCHEDULES
    try:
        schedule = s.write_schedule(where)
    except OSError as err:
        raise UsageError(f"cannot write the fault script under {where}: {err.strerror or err}",
                         hint="give --results-dir a writable directory") from None
    name = case_name(s, version, variant, build)
    opts = replace(s.run_options(version, schedule, variant, path), name=name,
                   results_dir=results_dir, teardown=False, **dict(placement or {}))
    preflight(opts)
    values = {"scenario": s.name, "variant": variant,
              "kafka_version": version.line if build is None else build.version}
    return Case(s, variant, version, Combination(name, values, opts), build)


# -- what a run found ----------------------------------------------------------------------


def found(verdict: Mapping[str, Any]) -> list[str]:
    """The anomaly types a verdict reports, sorted."""
    counts = verdict.get("anomaly-counts") or {}
    kinds = {t for t, n in counts.items() if n} | set(verdict.get("anomalies") or {})
    return sorted(kinds)


def untested(verdict: Mapping[str, Any], tests: str = DEFAULT_TESTS) -> bool:
    """Whether the run's faults had nothing to lose (``run.coverage``), by what the run
    tests (``Scenario.tests``). ``sends``: faults were in force, yet no send was
    acknowledged while they were, nor after any heal. ``commits``: faults were in force,
    yet no commit was acknowledged from the first fault's start to the last fault's end
    (``coverage.commits.at_risk``). A run without a coverage block, without faults, or
    (``commits``) whose block predates the commit figures is not judged here."""
    coverage = (verdict.get("run") or {}).get("coverage")
    if not isinstance(coverage, Mapping):
        return False
    in_faults = coverage.get("in_faults") or {}
    if not in_faults.get("in_force_s"):
        return False
    if tests == "commits":
        commits = coverage.get("commits")
        return isinstance(commits, Mapping) and not commits.get("at_risk")
    healed_then_acked = any(r.get("first_ack_after_s") is not None
                            for r in coverage.get("recoveries") or ())
    return not in_faults.get("acked_sends") and not healed_then_acked


def failed_steps(verdict: Mapping[str, Any]) -> list[str]:
    """The scripted fault starts and heals that did not apply (``run.coverage``'s
    ``failed_starts`` and ``failed_heals``): ``remove-controller at 31.5 s
    (remove-controller exited 1)``. A scenario's script asked for each, so a run with one
    did not test what its script meant to test (a controller not added back faced no
    partition as a voter again)."""
    coverage = (verdict.get("run") or {}).get("coverage")
    if not isinstance(coverage, Mapping):
        return []
    failed = [*(coverage.get("failed_starts") or ()), *(coverage.get("failed_heals") or ())]
    return [f"{s.get('f')} at {s.get('at_s')} s ({s.get('error')})"
            for s in failed if isinstance(s, Mapping)]


#: A run line's ending when the run tested nothing, by what it tests.
NOTHING_TESTED = {
    "sends": "no send acknowledged from the first fault on: it tested nothing",
    "commits": "no commit acknowledged from the first fault to the last: it tested nothing",
}


def matches(case: Case, verdict: Mapping[str, Any]) -> bool:
    """Whether one run ended as the case expects (an ``unknown`` verdict never does).

    A valid run only matches a ``valid`` expectation if it tested something: a negative
    control whose cluster acknowledged nothing from its first fault on lost nothing
    because it was given nothing to lose (``untested``), and one whose script asked for
    a fault that did not apply (``failed_steps``) did not run the test it names."""
    valid = verdict.get("valid")
    if case.expected.valid is True and valid is True and (
            untested(verdict, case.tests) or failed_steps(verdict)):
        return False
    return case.expected.matches(valid if isinstance(valid, bool) else "unknown", found(verdict),
                                 replicas_of(verdict), stall_of(verdict),
                                 kept_observed(verdict), logged=logged_of(verdict))


def logged_of(verdict: Mapping[str, Any]) -> list[str] | None:
    """The ids of the bugs whose lines the run's broker logs hold (``run.log_signatures``),
    None when its logs were not scanned."""
    block = (verdict.get("run") or {}).get("log_signatures")
    return list(block) if isinstance(block, Mapping) else None


def stall_of(verdict: Mapping[str, Any]) -> float | None:
    """The longest read_committed stall the checker measured (``stats``'
    ``read-committed-stalls``, docs/HISTORY.md), None when it measured none."""
    block = (verdict.get("stats") or {}).get("read-committed-stalls")
    longest = block.get("longest-s") if isinstance(block, Mapping) else None
    return float(longest) if isinstance(longest, int | float) else None


def rewinds_of(verdict: Mapping[str, Any]) -> dict[str, Any]:
    """The checker's ``abort-rewinds`` block (docs/HISTORY.md "After an abort"), or {}."""
    block = (verdict.get("stats") or {}).get("abort-rewinds")
    return block if isinstance(block, dict) else {}


def kept_observed(verdict: Mapping[str, Any]) -> int:
    """How many reads after aborts whose reads were kept the checker classified."""
    kept = rewinds_of(verdict).get("kept") or {}
    return int(kept.get("observations", 0)) - int(kept.get("unobserved", 0))


def replicas_of(verdict: Mapping[str, Any]) -> bool | str | None:
    """The replica comparison's ``valid`` in a run's results (``run.replicas``), if any ran;
    ``"offsets-backwards"`` for a failed one in which a replica's log went back."""
    block = (verdict.get("run") or {}).get("replicas")
    if not isinstance(block, Mapping):
        return None
    valid = block.get("valid")
    return "offsets-backwards" if valid is False and block.get("offsets-backwards") else valid


def run_line(k: int, verdict: Mapping[str, Any], tests: str = DEFAULT_TESTS) -> str:
    """``run 2: INVALID; lost-write (3), duplicate (1)``."""
    valid = verdict.get("valid")
    word = ("valid" if valid else "INVALID") if isinstance(valid, bool) else "unknown"
    counts = verdict.get("anomaly-counts") or {}
    kinds = ", ".join(f"{t} ({counts[t]})" if t in counts else t for t in found(verdict))
    why = verdict.get("error") or verdict.get("reason")
    tail = f"; {kinds}" if kinds else (f"; {why}" if word == "unknown" and why else "")
    if valid is True and untested(verdict, tests):
        tail += f"; {NOTHING_TESTED[tests]}"
    failed = failed_steps(verdict)
    if failed:
        tail += f"; a scripted fault did not apply: {'; '.join(failed)}"
    replicas = replicas_of(verdict)
    if replicas is not None:
        tail += ("; replicas consistent" if replicas is True else
                 "; replicas DIVERGED" if replicas is False else
                 "; a replica's offsets went BACKWARDS" if replicas == "offsets-backwards" else
                 "; replicas not compared")
    stall = stall_of(verdict)
    if stall:
        tail += f"; longest read_committed stall {stall:g} s"
    rewinds = describe_rewinds(rewinds_of(verdict))
    if rewinds:
        tail += f"; {rewinds}"
    logged = describe_logged((verdict.get("run") or {}).get("log_signatures"))
    if logged:  # informational, unless the expectation names it (``log-signatures``)
        tail += f"; broker logs: {logged}"
    return f"run {k}: {word}{tail}"


def observed(verdicts: Sequence[Mapping[str, Any]], tests: str = DEFAULT_TESTS) -> str:
    """``lost-write 4/5, valid 1/5``: how often each outcome showed."""
    n = len(verdicts)
    if not n:
        return "not run"
    parts: list[str] = []
    valid = sum(1 for v in verdicts if v.get("valid") is True)
    unknown = sum(1 for v in verdicts if not isinstance(v.get("valid"), bool))
    kinds: dict[str, int] = {}
    for v in verdicts:
        for t in found(v):
            kinds[t] = kinds.get(t, 0) + 1
    parts += [f"{t} {c}/{n}" for t, c in sorted(kinds.items())]
    idle = sum(1 for v in verdicts if v.get("valid") is True and untested(v, tests))
    broken = sum(1 for v in verdicts if failed_steps(v))
    notes = [f"{idle} untested"] * bool(idle) + [f"{broken} with a step that failed"] * bool(broken)
    parts += [f"valid {valid}/{n}" + (f" ({', '.join(notes)})" if notes else "")] if valid else []
    parts += [f"unknown {unknown}/{n}"] if unknown else []
    return ", ".join(parts)


@dataclass(frozen=True)
class CaseResult:
    """A case's runs, judged."""

    case: Case
    verdicts: tuple[Mapping[str, Any], ...]

    @property
    def matched(self) -> int:
        return sum(1 for v in self.verdicts if matches(self.case, v))

    @property
    def ok(self) -> bool:
        return bool(self.verdicts) and self.matched == len(self.verdicts)


# -- driving -------------------------------------------------------------------------------


def scenario_block(case: Case) -> dict[str, Any]:
    """What test.json records of the scenario a run belongs to."""
    e = case.expected
    s = case.scenario
    return {
        "name": s.name, "variant": case.variant, "version": case.version.line,
        "build": None if case.build is None else case.build.record(), "bug": s.bug,
        "story": s.story, "sources": list(s.sources), "file": str(s.path) if s.path else None,
        "expected": {"versions": str(e.versions), "valid": e.valid,
                     "anomalies": list(e.anomalies), "any": list(e.any),
                     "replicas": e.replicas, "read-stall-s": e.read_stall_s,
                     "abort-observed": e.abort_observed,
                     "log-signatures": list(e.logged), "absent": list(e.absent),
                     "note": e.note, "text": e.describe()},
    }  # fmt: skip


def record(case: Case, result: Any, say: Callable[[str], None]) -> None:
    """Add the scenario block (and whether this run ended as expected, which
    ``insync analyze`` ingests) to the run's test.json, then redraw its report page so its
    scenario panel shows (the runner drew the page before the block existed)."""
    run = RunDir(Path(result.run_dir.path))
    try:
        data = read_json(run.test_path)
    except (OSError, ValueError):
        return  # no test.json: the run counts as not done, and has no report either
    data["scenario"] = {**scenario_block(case),
                        "as_expected": matches(case, with_run(result))}
    write_json(run.test_path, data)
    if getattr(result, "report", None) is None:
        return
    from results.report import write_report

    try:
        write_report(run.path, pngs=False)
    except InsyncError as err:
        say(f"the report's scenario panel was not added: {err.one_line()}")


def run_cases(
    cases: Sequence[Case],
    runs: int,
    *,
    run_fn: RunFn,
    say: Callable[[str], None],
    down: Callable[[str], object] | None,
    keep_cluster: bool,
    label: str,
) -> tuple[list[CaseResult], Outcome]:
    """Every case ``runs`` times (resuming), ordered so the cluster is rebuilt rarely."""
    by_name = {c.combo.name: c for c in cases}

    def after(result: Any, combo: Combination, k: int) -> None:
        case = by_name[combo.name]
        record(case, result, say)
        say(f"  {case.label} on {case.column} {run_line(k, with_run(result), case.tests)}")

    outcome = run_combinations(order([c.combo for c in cases]), runs, keep_cluster=keep_cluster,
                               run_fn=run_fn, say=say, down=down, after=after, label=label)
    results = [CaseResult(c, tuple(v for _, v in sorted(
        outcome.verdicts.get(c.combo.name, {}).items()))) for c in cases]
    return results, outcome


def catalogue_cases(
    catalogue: Mapping[str, Scenario],
    names: Sequence[str] | None,
    versions: Sequence[KafkaVersion] | None,
    *,
    results_dir: str,
    placement: Mapping[str, Any] | None = None,
    build: KafkaDist | None = None,
) -> list[Case]:
    """Every chosen scenario and variant on every version it covers (``versions``
    filters), or on ``build`` alone (a user's build: one column, its version's
    expectations) where its version is covered; ``UsageError`` for an unknown name
    or when nothing is left to run."""
    chosen = [find(catalogue, n) for n in names] if names else [
        catalogue[k] for k in sorted(catalogue)]
    if build is not None:
        versions = [build.kafka]
    cases = [
        make_case(s, version, variant, results_dir=results_dir, placement=placement,
                  build=build)
        for s in chosen
        for variant in [None, *(v.name for v in s.variants)]
        for version in ([build.kafka] if build is not None else s.covered(variant))
        if (versions is None or version in versions) and s.covers(version, variant)
    ]
    if not cases:
        asked = ", ".join(v.version if build else v.line for v in versions or ())
        raise UsageError(f"no chosen scenario covers Kafka {asked}",
                         hint="see the versions each covers in `insync scenario list`")
    return cases
