"""``--kafka-dist`` end to end: a tarball made from a release's own jars, with its
version patched to ``4.1.2-SNAPSHOT`` as a local build would carry it, runs a short
3-node KRaft run; test.json, the summary and report.html name the build, and the
brokers themselves report the patched version."""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from pathlib import Path

import orjson
import pytest

from cluster.distribution import ensure_distribution
from cluster.docker.containers import labelled_ids
from cluster.kafka_dist import VERSION_ENTRY
from cluster.versions import resolve_version
from harness.run import parse, run
from harness.run.summary import render

pytestmark = pytest.mark.integration

CLUSTER = "dist-it"
BUILD = "4.1.2-SNAPSHOT"


def _patched(jar: Path) -> bytes:
    """The jar with its version file, if it has one, saying ``BUILD`` (the commit id kept):
    kafka-clients and half a dozen server jars carry it, as a local build's all would."""
    with zipfile.ZipFile(jar) as src:
        if VERSION_ENTRY not in src.namelist():
            return jar.read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(jar) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == VERSION_ENTRY:
                data = b"\n".join(b"version=" + BUILD.encode() if line.startswith(b"version=")
                                  else line for line in data.splitlines()) + b"\n"
            dst.writestr(item, data)
    return out.getvalue()


def _tarball(tmp_path: Path) -> Path:
    """``kafka_2.13-4.1.2-SNAPSHOT.tgz`` laid out as ``./gradlew releaseTarGz`` makes it."""
    jars = ensure_distribution(resolve_version("4.1.2"))
    top = f"kafka_2.13-{BUILD}"
    path = tmp_path / f"{top}.tgz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for jar in jars.jar_paths:
            name = jar.name.replace("-4.1.2.jar", f"-{BUILD}.jar")
            data = _patched(jar)
            info = tarfile.TarInfo(f"{top}/libs/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        for name, text in (("bin/kafka-server-start.sh", b"#!/bin/sh\n"),
                           ("config/server.properties", b"process.roles=broker\n")):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    return path


def test_a_run_on_a_users_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tgz = _tarball(tmp_path)
    # the build is unpacked into a cache of the test's own: every run makes a new
    # tarball (new sha256), which would otherwise stay in the user's cache for good
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path / "cache"))
    opts = parse(["--kafka-dist", str(tgz), "--cluster-name", CLUSTER, "--nodes", "3",
                  "--time-limit", "15", "--quiet-time", "2", "--final-time-limit", "30",
                  "--concurrency", "12", "--seed", "7", "--teardown", "true",
                  "--results-dir", str(tmp_path / "results")])
    said: list[str] = []
    started = time.monotonic()
    try:
        result = run(opts, say=said.append, live=False)
    finally:
        assert labelled_ids("container", CLUSTER) == [], "containers left behind"
    print(f"run on the build took {time.monotonic() - started:.1f}s; {said[:6]}")
    assert result.verdict.get("valid") is True, result.verdict
    test = orjson.loads(result.run_dir.test_path.read_bytes())
    build = test["cluster"]["kafka_dist"]
    assert build["version"] == BUILD and build["path"] == str(tgz)
    assert build["commit_id"] and build["commit_id"] != "unknown"
    assert list((tmp_path / "cache" / "kafka").glob("dist-*")), "unpacked in the test's cache"
    assert test["cluster"]["kafka_version"] == BUILD
    assert test["cluster"]["kafka_version_exact"] == BUILD
    assert "--kafka-dist" in test["argv"] and "--kafka-version" not in test["argv"]
    assert f"sha256 {build['sha256']}" in render(result)
    assert result.report is not None and build["sha256"] in result.report.read_text()
    # the brokers report the version they were built as, in their collected logs
    logs = [p for p in result.run_dir.path.rglob("*.log") if p.is_file()]
    assert any(f"Kafka version: {BUILD}" in p.read_text(errors="replace") for p in logs), logs
    again = parse(["--replay", str(result.run_dir.test_path)])
    assert again.kafka_dist == str(tgz) and again.kafka().version == BUILD
