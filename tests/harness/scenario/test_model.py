"""``harness.scenario.model``: versions covered, expectations, and the run a scenario is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from scenario_text import MINIMAL

from cluster.versions import resolve_version
from harness.base.errors import UsageError
from harness.run.options import parse
from harness.scenario import Expectation, VersionRange, load_scenario, spans


@pytest.mark.parametrize(
    ("text", "lines"),
    [("0.10.2..0.10.2", ["0.10.2"]), ("0.11.0..2.8", ["0.11.0", "1.1", "2.8"]),
     ("4.1", ["4.1"]), ("0.10.2.x..4.1.2", ["0.10.2", "0.11.0", "1.1", "2.8", "3.9", "4.1"])],
    ids=["one", "middle", "single", "spelled-out"],
)
def test_a_range_holds_the_table_versions_between_its_ends(text: str, lines: list[str]) -> None:
    assert [v.line for v in VersionRange.parse(text).versions()] == lines


@pytest.mark.parametrize(
    ("text", "lines", "shown"),
    [("2.8..", ["2.8", "3.9", "4.1", "4.2", "4.3", "4.4"], "2.8.."),
     ("..1.1", ["0.8.2", "0.9.0", "0.10.2", "0.11.0", "1.1"], "..1.1"),
     ("3.9.1..4.1", ["3.9", "4.1"], "3.9.1..4.1"), ("4.1.2..4.1", ["4.1"], "4.1.2..4.1")],
    ids=["open-above", "open-below", "release-end", "release-to-its-line"],
)
def test_open_ranges_hold_the_table_versions_on_their_side(
    text: str, lines: list[str], shown: str
) -> None:
    r = VersionRange.parse(text)
    assert [v.line for v in r.versions()] == lines
    assert str(r) == shown


@pytest.mark.parametrize(
    ("text", "release", "inside"),
    [("2.8..", "4.4.0", True), ("2.8..", "2.8.0", True), ("2.8..", "2.7.2", False),
     ("..1.1", "1.1.0", True), ("..1.1", "2.0.0", False), ("0.10.2..4.1", "4.1.0", True),
     ("0.10.2..4.1", "4.2.2", False), ("3.9..4.1.1", "4.1.2", False),
     ("3.9..4.1.1", "4.1.1", True), ("3.9.1..", "3.9.0", False)],
)
def test_any_release_compares_by_its_number(text: str, release: str, inside: bool) -> None:
    """A line end takes in every patch of the line, including releases the catalogue's
    table does not pin (4.4.0 under an open range, 2.8.0 under "2.8..")."""
    assert (resolve_version(release) in VersionRange.parse(text)) is inside


def test_a_range_within_another() -> None:
    outer = VersionRange.parse("2.8..")
    assert VersionRange.parse("3.9..4.1").within(outer)
    assert VersionRange.parse("3.9..").within(outer)
    assert not VersionRange.parse("..4.1").within(outer)
    assert not VersionRange.parse("2.7..4.1").within(outer)


@pytest.mark.parametrize(
    "text", ["4.1..0.10.2", "9.9..4.1", "0.7.0..2.8", "", "..", "4.1.2..4.1.1"],
    ids=["backwards", "unknown-end", "below-the-floor", "empty", "both-open",
         "release-backwards"])
def test_a_bad_range_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError):
        VersionRange.parse(text)


_ANY = VersionRange.parse("0.10.2..4.1")


@pytest.mark.parametrize(
    ("expect", "valid", "found", "matches"),
    [
        (Expectation(_ANY, True), True, [], True),
        (Expectation(_ANY, True), False, ["duplicate"], False),
        (Expectation(_ANY, False, ("lost-write",)), False, ["lost-write", "duplicate"], True),
        (Expectation(_ANY, False, ("lost-write",)), False, ["duplicate"], False),
        (Expectation(_ANY, False, ("lost-write",)), True, [], False),
        (Expectation(_ANY, None, absent=("inconsistent-offsets",)), False, ["lost-write"], True),
        (Expectation(_ANY, None, absent=("inconsistent-offsets",)), True, [], True),
        (Expectation(_ANY, None, absent=("inconsistent-offsets",)), False,
         ["inconsistent-offsets"], False),
        (Expectation(_ANY, True), "unknown", [], False),
        (Expectation(_ANY, None, absent=("lost-write",)), "unknown", [], False),
    ],
    ids=["valid-valid", "valid-but-anomaly", "required-and-more", "required-missing",
         "required-but-valid", "absent-other-anomaly", "absent-valid", "absent-present",
         "unknown-is-never-valid", "unknown-is-never-absent"],
)
def test_an_expectation_matches_verdicts(expect: Expectation, valid: bool | str,
                                         found: list[str], matches: bool) -> None:
    assert expect.matches(valid, found) is matches


def test_expected_picks_the_range_and_refuses_outside_it(write: Callable[..., Path]) -> None:
    s = load_scenario(write())
    assert s.expected("0.10.2.x").anomalies == ("lost-write",)
    assert s.expected(resolve_version("3.9")).valid is True
    assert s.expected("2.8", "isr2").valid is True
    with pytest.raises(UsageError, match=r"variant isr2 does not cover Kafka 0\.10\.2\.2"):
        s.expected("0.10.2", "isr2")
    with pytest.raises(UsageError, match="has no variant 'nope'"):
        s.expected("4.1", "nope")
    assert [v.line for v in s.affected()] == ["0.10.2", "0.11.0", "1.1"]
    assert spans(s.affected()) == "0.10.2..1.1" and spans(s.fixed()) == "2.8..4.1"
    assert spans([resolve_version("0.10.2"), resolve_version("4.1")]) == "0.10.2, 4.1"
    assert spans([]) == "none"


@pytest.mark.parametrize(
    ("version", "variant", "mode", "acks"),
    [("0.10.2", None, "zookeeper", "1"), ("3.9", None, "zookeeper", "1"),
     ("4.1", None, "kraft", "1"), ("2.8", "isr2", "zookeeper", "all")],
    ids=["0.10-zk", "3.9-first-listed-mode", "4.1-kraft-only", "variant"],
)
def test_the_run_argv_is_insync_runs_own_and_parses_back(
    write: Callable[..., Path], tmp_path: Path, *, version: str, variant: str | None, mode: str,
    acks: str,
) -> None:
    s = load_scenario(write())
    schedule = s.write_schedule(tmp_path / "sched")
    argv = s.run_argv(version, schedule, variant)
    opts = parse(argv)  # exactly as `insync run ARGV` would read it
    assert opts == s.run_options(version, schedule, variant)
    assert (opts.kafka_version, opts.mode, opts.acks) == (f"{version}.x", mode, acks)
    assert opts.nemesis_schedule == str(schedule) and opts.nemesis == []
    assert opts.broker_config["replica.lag.time.max.ms"] == "5000"
    assert ("log.flush.interval.messages" in opts.broker_config) is (variant == "isr2")
    assert opts.name == "scenario-tiny" + (f"-{variant}" if variant else "")


def test_the_schedule_file_is_read_back_by_the_schedule_loader(write: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    from nemesis.schedule import load_schedule

    s = load_scenario(write())
    steps = load_schedule(s.write_schedule(tmp_path))
    assert [(st.at, st.f, st.value) for st in steps] == [
        (10.0, "kill", "leader:t0-0"), (15.0, "start", "all")]
    assert list(s.parsed) == steps


def test_the_schedule_file_is_named_after_the_scripts_contents(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    """Resume compares the path a run recorded: equal scripts share one, others do not."""
    s = load_scenario(write())
    one = s.write_schedule(tmp_path / "a")
    assert one.name.startswith("scenario-tiny-") and one.name.endswith(".schedule.jsonl")
    assert s.write_schedule(tmp_path / "b").name == one.name
    text = write().read_text()
    later = load_scenario(write(text.replace("at = 15", "at = 20"), name="tiny"))
    changed = later.write_schedule(tmp_path / "a")
    assert changed.name != one.name and one.exists()  # the old script stays as it was
    assert '"at": 15' in one.read_text() and '"at": 20' in changed.read_text()


def test_the_partitions_a_script_names_are_pinned_for_the_run() -> None:
    """``leader:t0-0``, ``followers:t0-0`` and a wait's key name one partition: the run
    keeps writing to it (``--pin-keys``) instead of retiring it when it stalls, so what
    the faults do to it shows in the history. A setting of the scenario's own wins."""
    from harness.scenario.load import load_catalogue

    catalogue = load_catalogue()
    isr = catalogue["isr-shrink-unclean"]
    assert isr.script_keys() == ["t0-0"]
    assert isr.options("4.1").pin_keys == ["t0-0"]
    assert "--pin-keys" in isr.options("4.1").argv()
    assert catalogue["controller-failover"].script_keys() == []
    assert catalogue["controller-failover"].options("4.1").pin_keys == []


def test_a_partition_named_inside_a_steps_value_is_pinned_too(tmp_path: Path) -> None:
    """``value = { isolate = "followers:t1-2" }`` names t1-2 as surely as ``leader:t0-0``."""
    from tests.support.scenario_text import MINIMAL

    path = tmp_path / "tiny.toml"
    path.write_text(MINIMAL + '\n[[step]]\nat = 20\nf = "start-partition"\n'
                    'value = { isolate = "followers:t1-2" }\n')
    assert load_scenario(path).script_keys() == ["t0-0", "t1-2"]


def test_a_wait_on_any_partition_pins_nothing(tmp_path: Path) -> None:
    """``key = "*"`` is no partition: pinning it would make the workload write to "*"."""
    from tests.support.scenario_text import MINIMAL

    path = tmp_path / "tiny.toml"
    path.write_text(MINIMAL + '\n[[step]]\nafter = 0\nwait = "leader-changed"\nkey = "*"\n'
                    'timeout = 30\n')
    assert load_scenario(path).script_keys() == ["t0-0"]


@pytest.mark.parametrize(
    ("found", "matches"),
    [(["inconsistent-offsets"], True), (["unseen", "duplicate"], True),
     (["lost-write", "inconsistent-offsets"], True), (["duplicate"], False)],
    ids=["one-of-them", "another-and-more", "several", "none-of-them"],
)
def test_a_loss_expectation_takes_any_way_a_loss_shows(found: list[str], matches: bool) -> None:
    loss = Expectation(_ANY, False, any=("lost-write", "inconsistent-offsets", "unseen"))
    assert loss.matches(False, found) is matches
    assert loss.describe() == "invalid: one of lost-write | inconsistent-offsets | unseen"


@pytest.mark.parametrize(
    ("expect", "found", "replicas", "matches"),
    [("diverged", ["lost-write"], False, True), ("diverged", [], True, False),
     ("consistent", ["inconsistent-offsets"], True, True), ("consistent", [], False, False),
     ("consistent", [], None, False), ("consistent", [], "unknown", False),
     ("offsets-backwards", [], "offsets-backwards", True),
     ("offsets-backwards", ["lost-write"], False, False),
     ("diverged", [], "offsets-backwards", True),
     ("consistent", [], "offsets-backwards", False)],
    ids=["diverged-found", "diverged-but-consistent", "consistent-despite-loss",
         "consistent-but-diverged", "never-compared", "not-comparable",
         "backwards-found", "backwards-but-only-diverged", "backwards-is-divergence",
         "consistent-but-backwards"],
)
def test_a_replicas_expectation_judges_the_replica_comparison(
        expect: str, found: list[str], replicas: bool | str | None, matches: bool) -> None:
    e = Expectation(_ANY, None, replicas=expect)
    assert e.matches(bool(found) is False, found, replicas) is matches
    assert e.bug_shows is (expect != "consistent")
    assert e.describe() == f"any verdict; replicas {expect}"


@pytest.mark.parametrize(
    ("valid", "found", "stall_s", "matches"),
    [(True, [], 88.3, True), (False, ["unseen"], 30.0, True), (True, [], 12.7, False),
     (True, [], None, False), ("unknown", [], 88.3, False)],
    ids=["long-stall", "at-the-threshold", "a-pause-long", "not-measured", "unknown-verdict"],
)
def test_a_read_stall_expectation_reads_the_longest_read_committed_stall(
        valid: bool | str, found: list[str], stall_s: float | None, matches: bool) -> None:
    e = Expectation(_ANY, None, read_stall_s=30.0)
    assert e.matches(valid, found, None, stall_s) is matches
    assert e.bug_shows is True
    assert e.describe() == "any verdict; a read_committed stall of at least 30 s"


@pytest.mark.parametrize(
    ("valid", "observed", "matches"),
    [(True, 50, True), (True, 49, False), (True, None, False), (False, 80, False)],
    ids=["enough", "too-few", "not-measured", "invalid"],
)
def test_an_abort_observed_expectation_needs_that_many_classified_reads(
        valid: bool, observed: int | None, matches: bool) -> None:
    e = Expectation(_ANY, True, abort_observed=50)
    assert e.matches(valid, [] if valid else ["lost-write"], None, None, observed) is matches
    assert e.bug_shows is True
    assert e.describe() == ("valid; at least 50 reads after aborts whose reads were kept, "
                            "classified")


@pytest.mark.parametrize(
    ("valid", "logged", "matches"),
    [(True, ["KAFKA-17507"], True), (False, ["KAFKA-17507"], True), (True, [], False),
     (True, None, False)],
    ids=["logged-valid", "logged-invalid", "not-logged", "not-scanned"],
)
def test_a_logged_expectation_needs_the_line_in_the_brokers_logs(
        valid: bool, logged: list[str] | None, matches: bool) -> None:
    e = Expectation(_ANY, None, logged=("KAFKA-17507",))
    found = [] if valid else ["garbage-commit"]
    assert e.matches(valid, found, logged=logged) is matches
    assert e.bug_shows is True
    assert e.describe() == "any verdict; the brokers log KAFKA-17507"
    assert Expectation(_ANY, True).matches(True, [], logged=["KAFKA-17507"]) is True


def test_a_kraft_voter_count_is_dropped_on_a_zookeeper_version(
    write: Callable[..., Path]
) -> None:
    """``controllers`` shapes a KRaft quorum only: on a ZooKeeper-mode version the run's
    settings are those it has without it, so its stored runs are still the same runs."""
    s = load_scenario(write(MINIMAL.replace("[settings]\n", "[settings]\ncontrollers = 1\n")))
    assert s.options("3.9").controllers is None
    assert s.options("0.10.2").controllers is None
    assert s.options("4.1").controllers == 1
    assert s.options("3.9") == load_scenario(write(MINIMAL)).options("3.9")
