"""Read a scenario file (TOML) into a checked :class:`~harness.scenario.model.Scenario`.

The shipped catalogue (``harness/scenario/catalogue/*.toml``) and a user's own
files (``--scenario-file``, ``--scenario-dir``) go through the same loader and
the same checks. Every fact is checked where it already lives:

* ``[settings]`` are ``insync run`` options by their flag names, converted by
  the run's one ``OPTIONS`` table (``harness.run.options.convert``);
* the ``[[step]]`` fault script is judged by the schedule parser
  (``harness.scenario.steps``);
* version ranges name versions of ``cluster.versions``; anomaly names are the
  checker's (``harness.base.contract.ANOMALY_TYPES``);
* the whole, on every version it covers and for every variant, is checked as
  the run it would be (``RunOptions.validate`` and the cluster spec), so a
  scenario asking for idempotence on 0.10 is refused when read, not when run.

A malformed file is one ``UsageError`` line (exit 64) naming the file, the key,
what is wrong, and (the hint) what is accepted.
"""

from __future__ import annotations

import re
import tempfile
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cluster.versions import KRAFT, ZOOKEEPER
from harness.base.contract import anomaly_names
from harness.base.errors import UsageError
from harness.base.values import key_values, read_text, shown
from harness.scenario.model import (
    DEFAULT_MODES,
    REPLICA_OUTCOMES,
    Expectation,
    Scenario,
    Variant,
)
from harness.scenario.ranges import VersionRange
from harness.scenario.steps import check_steps
from results.log_signatures import SIGNATURES

#: The shipped scenarios, one file each.
CATALOGUE = Path(__file__).parent / "catalogue"

TOP_KEYS = ("name", "bug", "story", "sources", "versions", "settings", "broker", "step",
            "expect", "variant")
REQUIRED = ("name", "bug", "story", "sources", "versions", "step", "expect")
VERSION_KEYS = ("min", "max", "modes")
EXPECT_KEYS = ("versions", "valid", "anomalies", "any", "absent", "replicas", "read-stall-s",
               "abort-observed", "log-signatures", "note")
VARIANT_KEYS = ("name", "story", "settings", "broker", "versions", "expect")
#: Run options a scenario does not set, and why (the rest of ``OPTIONS`` it may).
NOT_SETTINGS = {
    "kafka_version": "the version is the command's, within [versions]",
    "broker_config": "broker settings go in the [broker] table",
    "nemesis": "the fault script is the [[step]] tables",
    "nemesis_schedule": "the fault script is the [[step]] tables",
    "nemesis_interval": "the fault script is the [[step]] tables",
    "nemesis_targets": "the fault script is the [[step]] tables",
    "nemesis_packet": "the fault script is the [[step]] tables",
    "name": "a scenario run is named after the scenario",
    "cluster_name": "the command chooses the cluster",
    "results_dir": "the command chooses where runs are stored",
    "seed": "the command chooses the seed",
    "teardown": "the command decides whether the cluster stays",
    "base_image": "the command chooses how nodes are built",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_MODES = (KRAFT, ZOOKEEPER)


class _File:
    """One file being read: every refusal names it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def bad(self, key: str, problem: str, accepted: str) -> UsageError:
        return UsageError(f"scenario file {self.path}: {key}: {problem}", hint=accepted)

    def keys(self, table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
        extra = [k for k in table if k not in allowed]
        if extra:
            prefix = f"{where}." if where else ""
            raise self.bad(f"{prefix}{extra[0]}", "unknown key",
                           f"{where or 'the top level'} has {', '.join(allowed)}")

    def text(self, table: Mapping[str, Any], key: str, where: str = "") -> str:
        value = table.get(key)
        if not isinstance(value, str) or not value.strip():
            raise self.bad(where + key, f"expected non-empty text, got {shown(value)}",
                           f"{key} = \"...\"")
        return " ".join(value.split())

    def table(self, table: Mapping[str, Any], key: str, where: str = "") -> dict[str, Any]:
        value = table.get(key, {})
        if not isinstance(value, dict):
            raise self.bad(where + key, f"expected a table, got {shown(value)}", f"[{key}]")
        return value

    def tables(self, table: Mapping[str, Any], key: str, where: str = "") -> list[dict[str, Any]]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.bad(where + key, f"expected [[{key}]] tables, got {shown(value)}",
                           f"one [[{key}]] table per entry")
        return value

    def range(self, text: Any, key: str) -> VersionRange:
        accepted = ("a range of Kafka lines or releases such as \"0.10.2..2.8\", open "
                    "\"2.8..\" or \"..1.1\", or one line \"4.1\"")
        if not isinstance(text, str):
            raise self.bad(key, f"expected a version range, got {shown(text)}", accepted)
        try:
            return VersionRange.parse(text)
        except UsageError as err:
            raise self.bad(key, err.message, accepted) from None

    def settings(self, raw: Mapping[str, Any], where: str) -> dict[str, Any]:
        """``[settings]`` by flag name, converted by the run's one ``OPTIONS`` table."""
        from harness.run.options import convert

        for key in raw:
            reason = NOT_SETTINGS.get(key.replace("-", "_"))
            if reason:
                raise self.bad(f"{where}.{key}", "not a scenario setting", reason)
        return convert(raw, f"scenario file {self.path}: [{where}]")

    def broker(self, raw: Any, where: str) -> dict[str, str]:
        try:
            return key_values(raw)
        except (TypeError, ValueError) as err:
            raise self.bad(where, str(err), '"replica.lag.time.max.ms" = 5000') from None

    def anomalies(self, e: Mapping[str, Any], key: str, at: str) -> tuple[str, ...]:
        names = e.get(key, [])
        known = anomaly_names()
        if not isinstance(names, list) or any(a not in known for a in names):
            raise self.bad(f"{at}.{key}", f"unknown anomaly in {shown(names, 80)}",
                           "the checker's names: " + ", ".join(known))
        return tuple(names)

    def expectations(self, raw: list[dict[str, Any]], where: str) -> tuple[Expectation, ...]:
        if not raw:
            raise self.bad(where, "no expectations", "at least one [[expect]] table")
        out = []
        for i, e in enumerate(raw, 1):
            at = f"{where}[{i}]"
            self.keys(e, EXPECT_KEYS, at)
            valid = e.get("valid")
            if valid is not None and not isinstance(valid, bool):
                raise self.bad(f"{at}.valid", f"expected true or false, got {shown(valid)}",
                               "valid = true where the bug is fixed, false where it shows")
            anomalies, any_of, absent = (self.anomalies(e, k, at)
                                         for k in ("anomalies", "any", "absent"))
            if valid is not False and any_of:
                raise self.bad(f"{at}.any", "only valid = false may list any",
                               "valid = false with any = [...]: one of them must appear")
            if valid is True and (anomalies or absent):
                raise self.bad(f"{at}.anomalies", "valid = true lists anomalies",
                               "valid = true means no anomaly at all")
            if valid is False and not (anomalies or any_of):
                raise self.bad(f"{at}.anomalies", "valid = false names no anomaly",
                               "list the anomalies that must appear (anomalies = [...], "
                               "or any = [...] for one of them)")
            replicas = e.get("replicas")
            if replicas not in (None, *REPLICA_OUTCOMES):
                raise self.bad(f"{at}.replicas", f"expected {', '.join(REPLICA_OUTCOMES)}, "
                               f"got {shown(replicas)}", 'replicas = "consistent"')
            stall = e.get("read-stall-s")
            if stall is not None and (type(stall) not in (int, float) or not stall > 0):
                raise self.bad(f"{at}.read-stall-s", f"expected seconds above 0, got "
                               f"{shown(stall)}", "read-stall-s = 60")
            observed = e.get("abort-observed")
            if observed is not None and (type(observed) is not int or observed < 1):
                raise self.bad(f"{at}.abort-observed", f"expected a count above 0, got "
                               f"{shown(observed)}", "abort-observed = 50")
            logged = self.logged(e, at)
            if valid is None and (anomalies or not (absent or replicas or stall or logged)):
                raise self.bad(f"{at}.valid", "missing",
                               "valid = true|false, or no valid with only absent = [...], "
                               "replicas = ..., read-stall-s = ... and/or log-signatures")
            note = e.get("note", "")
            if not isinstance(note, str):
                raise self.bad(f"{at}.note", f"expected text, got {shown(note)}", 'note = "..."')
            out.append(Expectation(self.range(e.get("versions"), f"{at}.versions"), valid,
                                   anomalies, absent, " ".join(note.split()), any_of,
                                   replicas, None if stall is None else float(stall),
                                   observed, logged))
        return tuple(out)

    def logged(self, e: Mapping[str, Any], at: str) -> tuple[str, ...]:
        """``log-signatures``: ids of ``results.log_signatures``' registry."""
        ids = e.get("log-signatures", [])
        known = [s.id for s in SIGNATURES]
        if not isinstance(ids, list) or any(i not in known for i in ids):
            raise self.bad(f"{at}.log-signatures", f"unknown signature in {shown(ids, 80)}",
                           "the registry's ids: " + ", ".join(known))
        return tuple(ids)


def load_scenario(path: str | Path) -> Scenario:
    """The checked scenario in ``path``, or one ``UsageError`` line."""
    p = Path(path)
    f = _File(p)
    try:
        data = tomllib.loads(read_text(p, "scenario file"))
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"scenario file {p}: not TOML: {err}", hint="fix the file") from None
    f.keys(data, TOP_KEYS, "")
    for key in REQUIRED:
        if key not in data:
            raise f.bad(key, "missing", f"a scenario has {', '.join(REQUIRED)}")
    name = f.text(data, "name")
    if not _NAME.match(name) or name != p.stem:
        raise f.bad("name", f"{name!r} must be the file's name ({p.stem!r})",
                    "lower-case letters, digits and '-', as the file is named")
    sources = data["sources"]
    if (not isinstance(sources, list) or not sources
            or not all(isinstance(s, str) and s.startswith(("https://", "http://"))
                       for s in sources)):
        raise f.bad("sources", f"expected a list of URLs, got {shown(sources, 60)}",
                    'sources = ["https://issues.apache.org/jira/browse/KAFKA-..."]')
    versions = f.table(data, "versions")
    f.keys(versions, VERSION_KEYS, "versions")
    span = f.range(f"{versions.get('min', '')}..{versions.get('max', '')}", "versions.min/max")
    settings = f.settings(f.table(data, "settings"), "settings")
    modes = _modes(f, versions.get("modes", list(DEFAULT_MODES)), settings.get("mode"))
    steps = f.tables(data, "step")
    if not steps:
        raise f.bad("step", "no fault script", "at least one [[step]] table")
    variants = tuple(_variant(f, v, i, span) for i, v in enumerate(f.tables(data, "variant"), 1))
    scenario = Scenario(
        name=name,
        bug=f.text(data, "bug"),
        story=f.text(data, "story"),
        sources=tuple(sources),
        versions=span,
        modes=modes,
        settings=settings,
        broker=f.broker(f.table(data, "broker"), "broker"),
        steps=tuple(steps),
        expect=f.expectations(f.tables(data, "expect"), "expect"),
        variants=variants,
        path=p,
        parsed=check_steps(steps, f"scenario file {p}:", _most_nodes(settings, variants)),
    )
    _check_runs(f, scenario)
    return scenario


def _most_nodes(settings: Mapping[str, Any], variants: Sequence[Variant]) -> int | None:
    """The most nodes the scenario or a variant runs on, if it says: the steps' node
    names are checked against it (None: the command's count decides, at run time)."""
    counts = [n for s in (settings, *(v.settings for v in variants))
              if isinstance(n := s.get("nodes"), int) and not isinstance(n, bool)]
    return max(counts, default=None)


def _modes(f: _File, raw: Any, fixed: str | None) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw or any(m not in _MODES for m in raw):
        raise f.bad("versions.modes", f"expected a list of modes, got {shown(raw)}",
                    'modes = ["zookeeper", "kraft"] (the first a version runs in is used)')
    if fixed is not None:
        if fixed not in raw:
            raise f.bad("settings.mode", f"{fixed} is not among versions.modes {raw}",
                        "drop settings.mode or list it in versions.modes")
        return (fixed,)
    return tuple(dict.fromkeys(raw))


def _variant(f: _File, raw: dict[str, Any], i: int, span: VersionRange) -> Variant:
    where = f"variant[{i}]"
    f.keys(raw, VARIANT_KEYS, where)
    name = f.text(raw, "name", f"{where}.")
    if not _NAME.match(name):
        raise f.bad(f"{where}.name", f"{name!r} is not a name",
                    "lower-case letters, digits and '-'")
    versions = f.range(raw["versions"], f"{where}.versions") if "versions" in raw else span
    if not versions.within(span):
        raise f.bad(f"{where}.versions", f"{versions} is outside the scenario's {span}",
                    "a variant narrows the scenario's versions")
    settings = f.settings(f.table(raw, "settings", f"{where}."), f"{where}.settings")
    if "mode" in settings:
        raise f.bad(f"{where}.settings.mode", "a variant runs in the scenario's modes",
                    "set versions.modes, or make another scenario")
    return Variant(
        name=name,
        story=f.text(raw, "story", f"{where}.") if "story" in raw else "",
        settings=settings,
        broker=f.broker(f.table(raw, "broker", f"{where}."), f"{where}.broker"),
        versions=versions,
        expect=f.expectations(f.tables(raw, "expect", f"{where}."), f"{where}.expect"),
    )


def _check_runs(f: _File, scenario: Scenario) -> None:
    """Each covered version has one expectation, and its run's options are valid."""
    names = [v.name for v in scenario.variants]
    if len(names) != len(set(names)):
        raise f.bad("variant.name", "two variants share a name", "one name per variant")
    if not scenario.covered():
        raise f.bad("versions", f"no version in {scenario.versions} runs in "
                    f"{', '.join(scenario.modes)} mode", "widen versions or modes")
    for variant, expect, where in [(None, scenario.expect, "expect"),
                                   *((v.name, v.expect, f"variant {v.name}: expect")
                                     for v in scenario.variants)]:
        covered = scenario.covered(variant)
        for e in expect:
            if not any(v in e.versions for v in covered):
                raise f.bad(where, f"versions {e.versions} matches no version covered",
                            f"covered: {', '.join(v.line for v in covered)}")
        for version in covered:
            hits = [e for e in expect if version in e.versions]
            if len(hits) != 1:
                problem = "no expectation" if not hits else "several expectations"
                raise f.bad(where, f"{problem} for Kafka {version.line}",
                            "exactly one [[expect]] per version the scenario covers")
            try:
                opts = scenario.options(version, variant)
                # Checked as the run would be, but results go nowhere here: no
                # directory of the caller's is asked whether it is writable; and the
                # script file is written only for a run (a script tail needs one).
                replace(opts, results_dir=tempfile.gettempdir(),
                        script_tail=None).validate().cluster_spec()
            except UsageError as err:
                which = f" variant {variant}" if variant else ""
                raise UsageError(f"scenario file {f.path}:{which} on Kafka {version.line}: "
                                 f"{err.message}", hint=err.hint) from None


def scenario_files(dirs: Iterable[str | Path] = (), files: Iterable[str | Path] = ()) -> list[Path]:
    """The shipped catalogue's files, then each ``dirs``' ``*.toml``, then ``files``."""
    out = sorted(CATALOGUE.glob("*.toml"))
    for d in dirs:
        p = Path(d)
        if not p.is_dir():
            raise UsageError(f"--scenario-dir {p} is not a directory",
                             hint="pass a directory of scenario .toml files")
        out += sorted(p.glob("*.toml"))
    return out + [Path(f) for f in files]


def load_catalogue(
    dirs: Iterable[str | Path] = (), files: Iterable[str | Path] = ()
) -> dict[str, Scenario]:
    """Every scenario, by name: the shipped ones and the user's (same loader, same
    checks); two files of one name are refused, naming both."""
    out: dict[str, Scenario] = {}
    for path in scenario_files(dirs, files):
        scenario = load_scenario(path)
        if scenario.name in out:
            raise UsageError(f"scenario {scenario.name} is in {out[scenario.name].path} "
                             f"and in {path}", hint="rename one of them (file and name)")
        out[scenario.name] = scenario
    return out


def find(catalogue: Mapping[str, Scenario], name: str) -> Scenario:
    """The scenario called ``name``, or one ``UsageError`` listing the names."""
    try:
        return catalogue[name]
    except KeyError:
        raise UsageError(f"no scenario {name!r}",
                         hint=f"known: {', '.join(sorted(catalogue))}") from None
