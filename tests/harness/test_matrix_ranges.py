"""``insync matrix --kafka-version`` takes ranges as scenarios and ``catalogue
--versions`` do: a range stands for the catalogue's versions in it, read by the one
expansion they share (``harness.scenario.ranges.expand_versions``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import matrix as mx
from harness.base.errors import UsageError
from harness.cli import build_parser
from harness.commands.catalogue import _versions
from harness.scenario.ranges import expand_versions


def axis(argv: list[str]) -> list[str]:
    args = build_parser().parse_args(["matrix", *argv])
    _, axes = mx.split({"kafka_version": args.kafka_version}, "")
    return list(axes["kafka_version"])


def test_a_range_is_the_catalogue_versions_in_it() -> None:
    assert axis(["--kafka-version", "3.9.."]) == ["3.9.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0"]
    assert axis(["--kafka-version", "..1.1"]) == ["0.8.2.2", "0.9.0.1", "0.10.2.2", "0.11.0.3",
                                                  "1.1.1"]
    assert axis(["--kafka-version", "2.8..3.9,4.1.x"]) == ["2.8.2", "3.9.2", "4.1.x"]
    # the same versions as catalogue --versions reads from the same text
    assert [v.version for v in _versions(["3.9.."]) or []] == axis(["--kafka-version", "3.9.."])
    assert [v.version for v in expand_versions(["2.8..3.9"])] == ["2.8.2", "3.9.2"]


def test_a_range_in_matrix_toml() -> None:
    _, axes = mx.split({"kafka-version": ["2.8..", "1.1.x"]}, "--config m.toml")
    assert axes["kafka_version"] == ["2.8.2", "3.9.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0", "1.1.x"]


@pytest.mark.parametrize(("text", "needle"), [
    ("4.1..3.9", "runs backwards"),
    ("9.9..", "9.9"),
    ("4.1.1..4.1.1", "holds none of the catalogue's versions"),
])
def test_bad_ranges_are_one_line(text: str, needle: str) -> None:
    with pytest.raises(UsageError) as err:
        axis(["--kafka-version", text])
    assert needle in err.value.message and "--kafka-version" in err.value.message


def test_a_matrix_on_a_users_build(tmp_path: Path) -> None:
    from fake_dists import dist_files, make_tarball

    tgz = make_tarball(tmp_path / "k.tgz", dist_files("4.1.2-SNAPSHOT"))
    args = build_parser().parse_args(["matrix", "--kafka-dist", str(tgz), "--acks", "1,all"])
    base, axes = mx.split({k: v for k, v in vars(args).items()
                           if k in ("kafka_dist", "acks")}, "")
    combos, _ = mx.expand(mx.Matrix(base, axes))
    assert [c.name for c in combos] == ["matrix-acks1-isr2-uncleanfalse-none-4.1.2-SNAPSHOT",
                                        "matrix-acksall-isr2-uncleanfalse-none-4.1.2-SNAPSHOT"]
    assert {c.opts.cluster_spec().kafka_dist for c in combos} == {str(tgz)}
    with pytest.raises(UsageError, match="takes no --kafka-version axis"):
        mx.expand(mx.Matrix({"kafka_dist": str(tgz)}, {"kafka_version": ["4.1.x"]}))
