"""Kafka distributions made in a test: a tarball or a directory laid out as
``./gradlew releaseTarGz`` lays one out, whose jars are tiny zips carrying only
``kafka/kafka-version.properties`` (what insync reads of a build)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

VERSION_ENTRY = "kafka/kafka-version.properties"


def _entry(name: str) -> zipfile.ZipInfo:
    return zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))


def fake_jar(version: str | None, commit: str | None = "0123456789abcdef") -> bytes:
    """A jar holding a version file (none when ``version`` is None).

    Entries carry a fixed date, so the same arguments give the same bytes
    whenever they are called: tests compare jars made seconds apart.
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as jar:
        jar.writestr(_entry("META-INF/MANIFEST.MF"), "Manifest-Version: 1.0\n")
        if version is not None:
            lines = [f"version={version}"] + ([f"commitId={commit}"] if commit else [])
            jar.writestr(_entry(VERSION_ENTRY), "#generated\n" + "\n".join(lines) + "\n")
    return buf.getvalue()


def dist_files(version: str | None, commit: str | None = "0123456789abcdef",
               extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """A distribution's files by relative path: libs/ with a clients and a core jar."""
    tag = version or "0"
    files = {
        f"libs/kafka-clients-{tag}.jar": fake_jar(version, commit),
        f"libs/kafka_2.13-{tag}.jar": fake_jar(version, commit),
        "libs/slf4j-api-1.7.36.jar": fake_jar(None),
        "bin/kafka-server-start.sh": b"#!/bin/sh\n",
        "config/server.properties": b"broker.id=0\n",
    }
    files.update(extra or {})
    return files


def make_tarball(path: Path, files: dict[str, bytes], top: str | None = "kafka_2.13-x") -> Path:
    """``files`` under one top directory (as Apache's tarballs are), gzipped."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def make_dir(path: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    return path
