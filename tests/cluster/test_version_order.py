"""Builds sort among releases: ``4.4.0-rc1 < 4.4.0 < 4.5.0-SNAPSHOT < 4.5.0``, everywhere
versions are compared (eras, scenario ranges)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster.version_order import order_key, parse_version, split_version
from cluster.versions import release
from harness.scenario.ranges import VersionRange

numbers = st.lists(st.integers(0, 30), min_size=3, max_size=3).map(tuple)
#: (stage, rc number): 0 snapshot, 1 candidate, 2 release
stages = st.one_of(st.just((0, 0)), st.tuples(st.just(1), st.integers(1, 9)), st.just((2, 0)))


def spelled(number: tuple[int, ...], stage: tuple[int, int]) -> str:
    text = ".".join(map(str, number))
    return text + ("-SNAPSHOT" if stage[0] == 0 else f"-rc{stage[1]}" if stage[0] == 1 else "")


@given(st.lists(st.tuples(numbers, stages), min_size=2, max_size=12))
def test_order_is_number_then_snapshot_candidates_release(
    versions: list[tuple[tuple[int, ...], tuple[int, int]]],
) -> None:
    texts = [spelled(n, s) for n, s in versions]
    by_key = sorted(texts, key=lambda t: order_key(t) or ())
    by_meaning = sorted(texts, key=lambda t: next((n, s) for n, s in versions
                                                  if spelled(n, s) == t))
    assert by_key == by_meaning


@given(numbers, stages)
def test_a_build_has_the_eras_of_its_number(
    number: tuple[int, ...], stage: tuple[int, int]
) -> None:
    text = spelled(number, stage)
    assert parse_version(text) == number
    assert split_version(text) == (number, text[len(".".join(map(str, number))):])
    if number >= (0, 8, 2):
        build, plain = release(text), release(".".join(map(str, number)))
        assert (build.modes, build.logging, build.scala) == (plain.modes, plain.logging,
                                                             plain.scala)
        assert build.line == plain.line


@given(numbers)
def test_a_build_sits_between_the_releases_around_it(number: tuple[int, ...]) -> None:
    major, minor, patch = number
    text = f"{major}.{minor}.{patch}"
    before = f"{major}.{minor}.{patch - 1}" if patch else f"{major}.{minor - 1}.99" if minor \
        else f"{major - 1}.99.99" if major else "0.0.0-SNAPSHOT"
    if before == "0.0.0-SNAPSHOT":
        return  # nothing comes before 0.0.0's first build
    keys = [order_key(t) for t in (before, f"{text}-SNAPSHOT", f"{text}-rc1", f"{text}-rc2",
                                   text, f"{major}.{minor}.{patch}.1")]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # type: ignore[arg-type]


def test_the_examples() -> None:
    assert order_key("4.4.0") < order_key("4.5.0-SNAPSHOT") < order_key("4.5.0")  # type: ignore[operator]
    assert order_key("4.4.0-rc1") < order_key("4.4.0")  # type: ignore[operator]
    assert order_key("4.4.0-RC1") == order_key("4.4.0-rc1")
    assert order_key("0.10.2.2") < order_key("1.1.1-SNAPSHOT")  # type: ignore[operator]
    for bad in ("4.1.2-mine", "latest", "4", "4.1.2.3.4", "4.1.x"):
        assert order_key(bad) is None and split_version(bad) is None


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        ("..4.1.2", ["4.1.2-SNAPSHOT", "4.1.2-rc1"], ["4.1.3-SNAPSHOT"]),
        ("4.1.2..", ["4.1.3-SNAPSHOT", "4.1.2"], ["4.1.2-SNAPSHOT", "4.1.2-rc2"]),
        ("4.1..", ["4.1.0-SNAPSHOT", "4.5.0-SNAPSHOT"], ["4.0.1-rc1"]),
        ("..3.9", ["3.9.3-SNAPSHOT"], ["4.0.0-SNAPSHOT"]),
        ("2.8..3.9", ["3.0.0-rc1", "2.8.0-SNAPSHOT"], ["4.0.0-rc1", "2.7.2-SNAPSHOT"]),
    ],
)
def test_ranges_place_builds_by_the_order(text: str, inside: list[str], outside: list[str]) -> None:
    span = VersionRange.parse(text)
    assert all(release(v) in span for v in inside)
    assert not any(release(v) in span for v in outside)
