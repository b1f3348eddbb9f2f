"""Resolving Kafka from Maven Central into the cache, and proving the result runs.

Unit tests use a fake ``mvn`` on PATH (a shell script that lays out jars as
the real one would), so they need no network. The integration and slow tests
resolve the real jars and start a real broker on 127.0.0.1 with the host's
Java; every JVM they start is stopped in ``finally``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from cluster import jvm
from cluster.distribution import (
    MARKER,
    default_cache_root,
    distribution_dir,
    ensure_distribution,
    render_pom,
)
from cluster.versions import Artifact, KafkaVersion, resolve_version
from harness.base.errors import EnvironmentProblem

V41 = resolve_version("4.1.x")
NS = {"m": "http://maven.apache.org/POM/4.0.0"}

FAKE_MVN = """#!/bin/sh
echo run >> "{calls}"
{body}
"""
GOOD_BODY = "mkdir -p libs && : > libs/kafka_2.13-4.1.2.jar && : > libs/kafka-clients-4.1.2.jar"
OFFLINE_BODY = (
    r"printf '\033[1;31m[ERROR]\033[m Failed to execute goal on project kafka-4.1.2: "
    "Could not resolve dependencies: Could not transfer artifact "
    "org.apache.kafka:kafka_2.13:pom:4.1.2 from/to central (https://repo.maven.apache.org/maven2): "
    r"repo.maven.apache.org: Temporary failure in name resolution\n'"
    "\nexit 1"
)


def _fake_mvn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """Put a fake ``mvn`` first on PATH; returns the file counting its runs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "mvn-calls"
    mvn = bin_dir / "mvn"
    mvn.write_text(FAKE_MVN.format(calls=calls, body=body))
    mvn.chmod(mvn.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return calls


def _runs(calls: Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


# -- pom -------------------------------------------------------------------------------


def test_pom_lists_every_artifact_with_exclusions() -> None:
    root = ET.fromstring(render_pom(V41))
    deps = root.findall("m:dependencies/m:dependency", NS)
    coords = [
        ":".join(
            d.findtext(f"m:{t}", namespaces=NS) or "" for t in ("groupId", "artifactId", "version")
        )
        for d in deps
    ]
    assert coords == [a.coordinate for a in V41.artifacts]
    assert coords[0] == "org.apache.kafka:kafka_2.13:4.1.2"
    tools = next(d for d in deps if d.findtext("m:artifactId", namespaces=NS) == "kafka-tools")
    excluded = tools.findall("m:exclusions/m:exclusion", NS)
    assert [e.findtext("m:artifactId", namespaces=NS) for e in excluded] == ["connect-runtime"]


def test_pom_escapes_xml() -> None:
    odd = replace(V41, extra_artifacts=(Artifact("g<&>", "a", "1"),))
    root = ET.fromstring(render_pom(odd))
    groups = [e.text for e in root.iter("{http://maven.apache.org/POM/4.0.0}groupId")]
    assert "g<&>" in groups


# -- cache layout and reuse ---------------------------------------------------------


def test_cache_root_honours_insync_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path / "c"))
    assert default_cache_root() == tmp_path / "c"
    assert distribution_dir(V41) == tmp_path / "c" / "kafka" / "4.1.2"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INSYNC_CACHE", "rel")
    assert distribution_dir(V41) == tmp_path / "rel" / "kafka" / "4.1.2"
    monkeypatch.delenv("INSYNC_CACHE")
    assert default_cache_root() == Path.home() / ".cache" / "insync"


def test_resolution_lays_out_install_and_second_call_is_a_cache_hit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = _fake_mvn(tmp_path, monkeypatch, GOOD_BODY)
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path / "cache"))
    dist = ensure_distribution(V41)
    assert dist.root == tmp_path / "cache" / "kafka" / "4.1.2"
    assert dist.version is V41
    assert dist.jars == ("kafka-clients-4.1.2.jar", "kafka_2.13-4.1.2.jar")
    assert all(p.is_file() for p in dist.jar_paths)
    assert dist.libs_dir == dist.root / "libs"
    assert dist.classpath == f"{dist.root}/libs/*"
    config = (dist.config_dir / "log4j2.properties").read_text()
    assert "${sys:kafka.logs.dir}/server.log" in config
    assert "controller.log" in config and "state-change.log" in config
    assert (dist.config_dir / "tools-log4j2.properties").is_file()
    assert (dist.root / "pom.xml").read_text() == render_pom(V41)
    marker = json.loads((dist.root / MARKER).read_text())
    assert marker["jars"] == list(dist.jars)
    assert _runs(calls) == 1

    again = ensure_distribution(V41)
    assert again == dist
    assert _runs(calls) == 1  # no mvn, so no network
    assert [p.name for p in dist.root.parent.iterdir()] == ["4.1.2"]  # no staging left


def test_cache_is_readable_by_other_users_and_a_hit_restores_config_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Containers may read the bind mount as a non-root user; config is insync's own."""
    calls = _fake_mvn(tmp_path, monkeypatch, GOOD_BODY)
    dist = ensure_distribution(V41, tmp_path / "cache")
    assert dist.root.stat().st_mode & 0o005 == 0o005
    admin = dist.config_dir / "tools-admin.properties"
    assert admin.stat().st_mode & 0o004
    original = admin.read_text()
    assert "default.api.timeout.ms=" in original
    admin.write_text("edited\n")
    (dist.config_dir / "log4j2.properties").unlink()
    assert ensure_distribution(V41, tmp_path / "cache") == dist
    assert admin.read_text() == original
    assert (dist.config_dir / "log4j2.properties").is_file()
    assert _runs(calls) == 1


def test_log4j1_versions_get_log4j_properties(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_mvn(tmp_path, monkeypatch, GOOD_BODY)
    dist = ensure_distribution(resolve_version("3.9.x"), tmp_path / "cache")
    config = (dist.config_dir / "log4j.properties").read_text()
    assert "log4j.appender.kafkaAppender.File=${kafka.logs.dir}/server.log" in config


def test_cache_missing_a_jar_or_with_a_changed_table_entry_is_resolved_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = _fake_mvn(tmp_path, monkeypatch, GOOD_BODY)
    dist = ensure_distribution(V41, tmp_path / "cache")
    dist.jar_paths[0].unlink()
    assert ensure_distribution(V41, tmp_path / "cache") == dist
    assert _runs(calls) == 2
    changed = replace(V41, extra_artifacts=())
    ensure_distribution(changed, tmp_path / "cache")
    assert _runs(calls) == 3
    marker = json.loads((dist.root / MARKER).read_text())
    assert marker["artifacts"] == [a.coordinate for a in changed.artifacts]


BINDING_BODY = (
    "mkdir -p libs && : > libs/kafka_2.13-4.4.0.jar && : > libs/slf4j-api-1.7.36.jar"
    " && : > libs/log4j-core-2.25.5.jar"
    "\nif grep -q '<artifactId>log4j-slf4j-impl</artifactId>' pom.xml; then"
    " : > libs/log4j-slf4j-impl-2.25.5.jar; fi"
)


def test_a_tree_without_a_binding_gets_the_one_matching_its_own_log4j(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """4.x POMs bring log4j-core but no slf4j binding: a second pass adds the one of
    the same log4j version, and the pom kept is the one that gave the jars."""
    calls = _fake_mvn(tmp_path, monkeypatch, BINDING_BODY)
    v44 = resolve_version("4.4.0")
    dist = ensure_distribution(v44, tmp_path / "cache")
    assert "log4j-slf4j-impl-2.25.5.jar" in dist.jars
    assert _runs(calls) == 2
    marker = json.loads((dist.root / MARKER).read_text())
    assert marker["binding"] == ["org.apache.logging.log4j:log4j-slf4j-impl:2.25.5"]
    assert "log4j-slf4j-impl" in (dist.root / "pom.xml").read_text()
    assert ensure_distribution(v44, tmp_path / "cache") == dist
    assert _runs(calls) == 2


def test_stale_unmarked_directory_is_replaced(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_mvn(tmp_path, monkeypatch, GOOD_BODY)
    stale = distribution_dir(V41, tmp_path / "cache")
    (stale / "libs").mkdir(parents=True)
    (stale / "libs" / "half-downloaded.jar").write_text("")
    dist = ensure_distribution(V41, tmp_path / "cache")
    assert "half-downloaded.jar" not in dist.jars
    assert not (dist.libs_dir / "half-downloaded.jar").exists()
    assert sorted(p.name for p in stale.parent.iterdir()) == ["4.1.2"]


# -- failures are one-line EnvironmentProblems ----------------------------------


def test_missing_mvn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(EnvironmentProblem) as err:
        ensure_distribution(V41, tmp_path / "cache")
    assert "'mvn' is not on PATH" in err.value.message
    assert err.value.hint is not None and "apt-get install maven" in err.value.hint


def test_unreachable_maven_central(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_mvn(tmp_path, monkeypatch, OFFLINE_BODY)
    with pytest.raises(EnvironmentProblem) as err:
        ensure_distribution(V41, tmp_path / "cache")
    line = err.value.one_line()
    assert line.startswith("cannot reach Maven Central to resolve Kafka 4.1.2")
    assert "Temporary failure in name resolution" in line
    assert "\n" not in line and "[ERROR]" not in line and "\x1b" not in line
    kafka_dir = tmp_path / "cache" / "kafka"
    assert list(kafka_dir.iterdir()) == []  # the staging directory was removed


def test_unwritable_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_mvn(tmp_path, monkeypatch, GOOD_BODY)
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where the cache directory should be
    with pytest.raises(EnvironmentProblem) as err:
        ensure_distribution(V41, blocker)
    assert err.value.message.startswith(f"cannot write the Kafka 4.1.2 cache at {blocker}")
    assert err.value.hint is not None and "INSYNC_CACHE" in err.value.hint


def test_mvn_that_resolves_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_mvn(tmp_path, monkeypatch, "exit 0")
    with pytest.raises(EnvironmentProblem, match="resolved no jars"):
        ensure_distribution(V41, tmp_path / "cache")
    assert not distribution_dir(V41, tmp_path / "cache").exists()


# -- real Kafka on loopback -------------------------------------------------------

START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait(
    what: str, predicate: Callable[[], bool], timeout_s: float, proc: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if proc.poll() is not None:
            pytest.fail(f"JVM exited ({proc.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what}")
        time.sleep(0.2)


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _started(server_log: Path) -> bool:
    """Every version logs a line ending in "started (kafka.server.Kafka...)"."""
    if not server_log.exists():
        return False
    return any(
        "started (kafka.server.Kafka" in line for line in server_log.read_text().splitlines()
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@contextmanager
def _single_node(version: KafkaVersion, mode: str, work: Path) -> Iterator[str]:
    """One broker (KRaft: combined broker+controller) on 127.0.0.1; yields bootstrap."""
    dist = ensure_distribution(version)
    broker_port, other_port = _free_port(), _free_port()
    props = {
        "log.dirs": str(work / "data"),
        "listeners": f"PLAINTEXT://127.0.0.1:{broker_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{broker_port}",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    if mode == "kraft":
        props |= {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{other_port}",
            "listeners": f"{props['listeners']},CONTROLLER://127.0.0.1:{other_port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        }
    else:
        props |= {"broker.id": "1", "zookeeper.connect": f"127.0.0.1:{other_port}"}
    server_properties = work / "server.properties"
    server_properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        if mode == "kraft":
            fmt = jvm.format_argv(
                version,
                cluster_id=jvm.new_cluster_id(),
                properties=server_properties,
                kafka_home=dist.root,
            )
            done = subprocess.run(fmt, capture_output=True, text=True, timeout=60, check=False)
            assert done.returncode == 0, done.stderr
        else:
            (work / "zk-data").mkdir()
            (work / "zoo.cfg").write_text(
                f"dataDir={work / 'zk-data'}\nclientPort={other_port}\n"
                "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\n"
            )
            zk_argv = jvm.zookeeper_argv(
                version, config=work / "zoo.cfg", log_dir=work / "zk-logs", kafka_home=dist.root
            )
            with (work / "zk.out").open("wb") as out:
                procs.append(subprocess.Popen(zk_argv, stdout=out, stderr=subprocess.STDOUT))
            _wait("ZooKeeper's port", lambda: _port_open(other_port), 30, procs[-1])
        (work / "logs").mkdir()
        argv = jvm.broker_argv(
            version, properties=server_properties, log_dir=work / "logs", kafka_home=dist.root
        )
        with (work / "broker.out").open("wb") as out:
            procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT))
        _wait(
            "the broker to log 'started'",
            lambda: _started(work / "logs" / "server.log"),
            START_TIMEOUT_S,
            procs[-1],
        )
        yield f"127.0.0.1:{broker_port}"
    finally:
        for proc in reversed(procs):
            _stop(proc)
    assert all(p.poll() is not None for p in procs)


def _round_trip(bootstrap: str, n: int = 20) -> list[str]:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.cimpl import NewTopic

    quiet: dict[str, str | int | float | bool] = {"bootstrap.servers": bootstrap, "log_level": 3}
    admin = AdminClient(quiet)  # keep a reference: a collected handle cancels its futures
    for future in admin.create_topics([NewTopic("rt", 1, 1)]).values():
        future.result(timeout=30)
    producer = Producer({**quiet, "acks": "all"})
    sent = [f"value-{i}" for i in range(n)]
    for value in sent:
        producer.produce("rt", value.encode())
    assert producer.flush(30) == 0
    consumer = Consumer({**quiet, "group.id": "rt", "auto.offset.reset": "earliest"})
    got: list[str] = []
    try:
        consumer.subscribe(["rt"])
        deadline = time.monotonic() + 30
        while len(got) < n and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(bytes(msg.value() or b"").decode())
    finally:
        consumer.close()
    assert got == sent
    return got


def _check_logging(work: Path) -> None:
    """Logs land in files as in a real install, and no "no binding" warning shows."""
    for name in ("server.log", "controller.log", "state-change.log"):
        assert (work / "logs" / name).is_file(), name
    console = (work / "broker.out").read_text(errors="replace")
    assert "SLF4J:" not in console  # "Failed to load class StaticLoggerBinder", no providers
    assert "StatusLogger" not in console  # log4j2's "No log4j2 configuration file found"
    assert "log4j:WARN" not in console  # log4j 1's "No appenders could be found"
    # log4j2's own status lines ("<timestamp> main ERROR ..."): Kafka's start with "[".
    assert not re.search(r"^[^\[\s]\S* \S+ (WARN|ERROR|FATAL) ", console, re.MULTILINE)
    assert "started (kafka.server.Kafka" in console


@pytest.mark.integration
@pytest.mark.timeout(180)
@pytest.mark.parametrize("spec", ["4.1.x", "3.9.x"])
def test_kraft_broker_starts_and_round_trips(spec: str, tmp_path: Path) -> None:
    version = resolve_version(spec)
    with _single_node(version, "kraft", tmp_path) as bootstrap:
        _round_trip(bootstrap)
        status = subprocess.run(
            jvm.quorum_argv(
                version, bootstrap=bootstrap, kafka_home=ensure_distribution(version).root
            ),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert status.returncode == 0, status.stderr
        assert any(line.split() == ["LeaderId:", "1"] for line in status.stdout.splitlines())
    _check_logging(tmp_path)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("spec", ["3.9.x", "2.8.x", "1.1.x", "0.11.0.3", "0.10.2.2"])
def test_zookeeper_mode_broker_starts_and_round_trips(spec: str, tmp_path: Path) -> None:
    with _single_node(resolve_version(spec), "zookeeper", tmp_path) as bootstrap:
        _round_trip(bootstrap)
    _check_logging(tmp_path)
    zk_console = (tmp_path / "zk.out").read_text(errors="replace")
    assert "SLF4J:" not in zk_console and "log4j:WARN" not in zk_console


def test_public_names_are_pinned() -> None:
    """Other layers import these; renaming one is an API change, not a refactor."""
    import importlib

    module = importlib.import_module("cluster.distribution")
    assert module.__all__ == [
        "MARKER",
        "Distribution",
        "default_cache_root",
        "distribution_dir",
        "ensure_distribution",
        "load_distribution",
        "render_pom",
        "write_configs",
    ]
    assert all(hasattr(module, name) for name in module.__all__)
