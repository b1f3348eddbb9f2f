"""``harness.run.values``: ranges, strict converters, the files a user names."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.base.errors import UsageError
from harness.run.options import OPTIONS, RunOptions
from harness.run.values import (
    Range,
    boolean,
    key_values,
    number,
    opt_whole,
    read_text,
    run_name,
    usable_dir,
    whole,
)

RANGES = [Range(0, 10), Range(0, 10, open_lo=True), Range(0, 1, open_hi=True),
          Range(0.01, 100, zero=True)]  # fmt: skip


@pytest.mark.parametrize("r", RANGES, ids=lambda r: r.describe(whole=False))
@given(x=st.floats(allow_nan=True, allow_infinity=True) | st.integers())
def test_a_range_holds_only_finite_numbers_between_its_ends(r: Range, x: float) -> None:
    if x in r:
        assert math.isfinite(x)
        assert (r.zero and x == 0) or (
            (r.lo < x if r.open_lo else r.lo <= x) and (x < r.hi if r.open_hi else x <= r.hi)
        )


@given(x=st.sampled_from([math.nan, math.inf, -math.inf, float("1e400")]))
def test_no_range_holds_a_non_finite_number(x: float) -> None:
    assert all(x not in r for r in [*RANGES, Range(-math.inf, math.inf)])


def test_huge_whole_numbers_are_out_of_range_not_a_crash() -> None:
    assert 10**400 not in Range(0, 2**63 - 1) and -(10**400) not in Range(0, 1)


def test_bools_are_not_numbers() -> None:
    assert True not in Range(0, 10) and False not in Range(0, 10, zero=True)


@pytest.mark.parametrize(
    ("r", "whole_", "text"),
    [
        (Range(1, 9), True, "a whole number from 1 to 9"),
        (Range(0, 604800, open_lo=True), False, "a finite number in (0, 604800]"),
        (Range(0, 1, open_hi=True), False, "a finite number in [0, 1)"),
        (Range(0.01, 1e6, zero=True), False, "0 or a finite number from 0.01 to 1000000"),
    ],
)
def test_describe(r: Range, whole_: bool, text: str) -> None:
    assert r.describe(whole=whole_) == text


@pytest.mark.parametrize(
    ("conv", "raw", "want"),
    [
        (whole, " 12 ", 12),
        (whole, -3, -3),
        (opt_whole, "default", None),
        (opt_whole, "7", 7),
        (number, "1e3", 1000.0),
        (number, 2, 2.0),
        (boolean, "On", True),
        (boolean, False, False),
        (key_values, {"a": True, "b": 1}, {"a": "true", "b": "1"}),
        (key_values, ["a = 1", "b=x=y"], {"a": "1", "b": "x=y"}),
    ],
)
def test_converters_accept_the_spellings(conv: Any, raw: Any, want: Any) -> None:
    assert conv(raw) == want


@pytest.mark.parametrize(
    ("conv", "raw"),
    [
        (whole, True),
        (whole, 3.0),
        (whole, "3.5"),
        (whole, "1e400"),
        (whole, [3]),
        (number, True),
        (number, "three"),
        (number, None),
        (boolean, 1),
        (boolean, "maybe"),
        (key_values, {"a": {"b": 1}}),
        (key_values, {"a": math.nan}),
        (key_values, [1]),
        (run_name, "a/b"),
        (run_name, "latest"),
        (run_name, ".."),
        (run_name, ""),
        (run_name, "x" * 201),
    ],
)
def test_converters_refuse_wrong_types_and_values(conv: Any, raw: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        conv(raw)


def test_every_number_option_has_a_range_and_its_default_is_in_it() -> None:
    defaults = RunOptions()
    for spec in OPTIONS:
        if spec.conv in (whole, opt_whole, number):
            assert spec.range is not None, spec.flag
            value = getattr(defaults, spec.name)
            assert value is None or value in spec.range, spec.flag


def test_validate_holds_options_built_in_code_to_the_same_rules() -> None:
    with pytest.raises(UsageError, match="--rate must be 0 or a finite number"):
        RunOptions(rate=math.inf).validate()
    with pytest.raises(UsageError, match="--nodes must be a whole number"):
        RunOptions(nodes=True).validate()
    with pytest.raises(UsageError, match=r"no Kafka 5\.0 release"):
        RunOptions(kafka_version="5.0.x").validate()


def test_read_text_says_why_not(tmp_path: Any) -> None:
    ok = tmp_path / "ok.toml"
    ok.write_text("nodes = 3\n")
    assert read_text(ok, "--config") == "nodes = 3\n"
    with pytest.raises(UsageError, match="is a directory"):
        read_text(tmp_path, "--config")
    with pytest.raises(UsageError, match="no such file"):
        read_text(tmp_path / "nope", "--config")


def test_usable_dir(tmp_path: Any) -> None:
    usable_dir(tmp_path / "new" / "deeper", "--results-dir")  # made later, when needed
    assert not (tmp_path / "new").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="exists and is not a directory"):
        usable_dir(tmp_path / "file", "--results-dir")
    with pytest.raises(UsageError, match="is not a directory"):
        usable_dir(tmp_path / "file" / "below", "--results-dir")
