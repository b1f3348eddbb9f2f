"""``--kafka-dist``: a user's build read from its jars, checked, and laid out like a release.

Every distribution here is made by the test (``tests/support/fake_dists.py``):
the same layout as Apache's tarball, with tiny jars that carry only the
version file insync reads.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from fake_dists import dist_files, fake_jar, make_dir, make_tarball

from cluster.kafka_dist import (
    MARKER,
    home_name,
    inspect_dist,
    spec_distribution,
    spec_version,
    stage_dist,
)
from cluster.spec import ClusterSpec
from cluster.versions import Logging
from harness.base.errors import UsageError


def test_a_tarball_is_read_from_its_jars(tmp_path: Path) -> None:
    tgz = make_tarball(tmp_path / "kafka_2.13-4.1.2-SNAPSHOT.tgz", dist_files("4.1.2-SNAPSHOT"))
    dist = inspect_dist(tgz)
    assert dist.kind == "tarball"
    assert dist.path == str(tgz.absolute())
    assert dist.version == "4.1.2-SNAPSHOT"
    assert dist.commit_id == "0123456789abcdef"
    assert dist.sha256 == hashlib.sha256(tgz.read_bytes()).hexdigest()
    assert dist.jars == ("kafka-clients-4.1.2-SNAPSHOT.jar", "kafka_2.13-4.1.2-SNAPSHOT.jar",
                         "slf4j-api-1.7.36.jar")
    # the quirks are those of 4.1.2's eras
    assert dist.kafka.modes == {"kraft"} and dist.kafka.logging is Logging.LOG4J2
    assert dist.record() == {"path": dist.path, "kind": "tarball", "sha256": dist.sha256,
                             "version": "4.1.2-SNAPSHOT", "commit_id": "0123456789abcdef"}


def test_a_directory_is_named_by_a_stable_digest_of_its_libs(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "kafka", dist_files("3.9.2-rc1", commit=None))
    first = inspect_dist(root)
    assert (first.kind, first.version, first.commit_id) == ("directory", "3.9.2-rc1", None)
    (root / "config" / "server.properties").write_text("changed\n")  # not in libs: same build
    os.utime(root, ns=(1, 1))
    assert inspect_dist(root).sha256 == first.sha256
    (root / "libs" / "slf4j-api-1.7.36.jar").write_bytes(fake_jar("other"))
    os.utime(root, ns=(2, 2))
    assert inspect_dist(root).sha256 != first.sha256
    assert first.kafka.modes == {"kraft", "zookeeper"}  # 3.9's eras


@pytest.mark.parametrize(
    ("files", "needle"),
    [
        ({"bin/kafka-server-start.sh": b""}, "has no libs/"),
        ({"libs/guava-1.jar": fake_jar(None)}, "holds no kafka jar"),
        ({"libs/kafka-clients-1.jar": fake_jar(None)}, "so its version is unknown"),
        ({"libs/kafka-clients-1.jar": b"not a zip"}, "is not a jar"),
        ({"libs/kafka-clients-1.jar": fake_jar("banana")}, "which insync cannot run"),
        ({"libs/kafka-clients-1.jar": fake_jar("0.7.2")}, "which insync cannot run"),
        ({"libs/kafka-clients-1.jar": fake_jar("")}, "names no version"),
    ],
    ids=["no-libs", "no-kafka-jar", "no-version-file", "not-a-jar", "unreadable-version",
         "below-the-floor", "empty-version"],
)
def test_what_is_not_a_runnable_build_is_one_line(
    tmp_path: Path, files: dict[str, bytes], needle: str
) -> None:
    for target in (make_dir(tmp_path / "d", files), make_tarball(tmp_path / "t.tgz", files)):
        if needle == "has no libs/" and target.suffix == ".tgz":
            needle = "has no libs/*.jar"
        with pytest.raises(UsageError) as err:
            inspect_dist(target)
        assert needle in err.value.message and "\n" not in err.value.message
        assert str(target.absolute()) in err.value.message


def test_files_that_are_not_distributions(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        inspect_dist(tmp_path / "missing.tgz")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="FIFO"):
        inspect_dist(fifo)  # refused, never opened for a read that would block
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(UsageError, match="not a Kafka distribution tarball"):
        inspect_dist(text)
    two = {**{f"a/{k}": v for k, v in dist_files("4.1.2").items()},
           **{f"b/{k}": v for k, v in dist_files("4.1.2").items()}}
    with pytest.raises(UsageError, match="holds 2 distributions"):
        inspect_dist(make_tarball(tmp_path / "two.tgz", two, top=None))


def test_a_tarball_without_a_top_directory_is_read_too(tmp_path: Path) -> None:
    tgz = make_tarball(tmp_path / "flat.tgz", dist_files("4.0.0"), top=None)
    assert inspect_dist(tgz).version == "4.0.0"


def test_staging_lays_out_libs_and_configs_once(tmp_path: Path) -> None:
    tgz = make_tarball(tmp_path / "k.tgz", dist_files("4.1.2-SNAPSHOT"))
    dist = inspect_dist(tgz)
    cache = tmp_path / "cache"
    laid = stage_dist(dist, cache)
    assert laid.root == cache.absolute() / "kafka" / f"dist-{dist.sha256[:16]}"
    assert sorted(p.name for p in laid.libs_dir.iterdir()) == list(dist.jars)
    assert (laid.libs_dir / dist.jars[0]).read_bytes() == fake_jar("4.1.2-SNAPSHOT")
    assert (laid.config_dir / "log4j2.properties").is_file()
    assert json.loads((laid.root / MARKER).read_text())["sha256"] == dist.sha256
    stamp = (laid.libs_dir / dist.jars[0]).stat().st_mtime_ns
    again = stage_dist(dist, cache)
    assert again.root == laid.root
    assert (laid.libs_dir / dist.jars[0]).stat().st_mtime_ns == stamp  # reused, not copied
    (laid.root / MARKER).unlink()  # an unmarked copy is never trusted
    assert stage_dist(dist, cache).jars == dist.jars
    assert not [p for p in laid.root.parent.iterdir() if p.name.startswith(".")]


def test_a_spec_names_its_build_and_refuses_a_changed_one(tmp_path: Path) -> None:
    tgz = make_tarball(tmp_path / "k.tgz", dist_files("3.9.2-SNAPSHOT"))
    dist = inspect_dist(tgz)
    spec = ClusterSpec(kafka_version=dist.version, mode="zookeeper", kafka_dist=dist.path,
                       kafka_dist_sha256=dist.sha256)
    assert spec_version(spec).version == "3.9.2-SNAPSHOT"
    assert home_name(spec) == f"dist-{dist.sha256[:16]}"
    assert spec_distribution(spec, tmp_path / "cache").version.version == "3.9.2-SNAPSHOT"
    assert ClusterSpec.from_json(spec.to_json()) == spec
    make_tarball(tgz, dist_files("3.9.2-SNAPSHOT", commit="fedcba"))
    with pytest.raises(UsageError, match="changed"):
        spec_distribution(spec, tmp_path / "cache")
    with pytest.raises(UsageError, match="does not run in zookeeper mode"):
        spec_version(ClusterSpec(kafka_version="4.1.2-SNAPSHOT", mode="zookeeper",
                                 kafka_dist=dist.path, kafka_dist_sha256=dist.sha256))


def test_a_build_read_then_removed_stays_the_build_read(tmp_path: Path) -> None:
    tgz = make_tarball(tmp_path / "k.tgz", dist_files("4.1.2"))
    dist = inspect_dist(tgz)
    tgz.unlink()
    assert inspect_dist(tgz) == dist
    with pytest.raises(UsageError, match="no such file"):
        inspect_dist(tmp_path / "never-read.tgz")
