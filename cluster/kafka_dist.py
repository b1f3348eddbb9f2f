"""A person's own Kafka build (``--kafka-dist``): a distribution tarball or its unpacked tree.

``./gradlew releaseTarGz`` makes ``kafka_2.13-<version>.tgz``: one top
directory holding ``bin/``, ``config/`` and ``libs/``, the broker's whole
classpath. insync needs only ``libs/``: it reads the build's identity from its
own jars (``kafka-clients`` and the core jar carry
``kafka/kafka-version.properties`` with ``version`` and ``commitId``, what a
broker logs at start), takes the quirks of that version from its eras
(``cluster.versions.release``; ``4.5.0-SNAPSHOT`` is a 4.5.0), and lays the
jars out like a release resolved from Maven Central, under
``<cache root>/kafka/dist-<sha256 prefix>/``, so every provisioner deploys it
the same way (a bind mount, an rsync to an SSH host).

The build is named by content: a tarball by its sha256, a directory by a
digest of its ``libs/`` (each jar's name and sha256, in name order), so a
rebuilt tarball at the same path is a different build, and a replay refuses
to run one whose digest changed. Every check here is made on the user's file
before a cluster, a run directory or the cache is touched; each refusal is one
``UsageError`` line (exit 64).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Literal

from cluster.distribution import Distribution, ensure_distribution, write_configs
from cluster.releases import default_cache_root
from cluster.spec import ClusterSpec
from cluster.versions import KafkaVersion, check_runnable, release, resolve_for_mode
from harness.base.errors import UsageError
from harness.base.userfile import open_regular

__all__ = [
    "MAX_DIST_BYTES",
    "VERSION_ENTRY",
    "CachedBuild",
    "KafkaDist",
    "cached_builds",
    "dist_root",
    "home_name",
    "inspect_dist",
    "spec_distribution",
    "spec_version",
    "stage_dist",
]

#: Where a Kafka jar keeps its build's identity (read by AppInfoParser at start).
VERSION_ENTRY = "kafka/kafka-version.properties"
#: Largest tarball or jar accepted: Apache's are ~120 MiB; a 2 GiB one is a mistake.
MAX_DIST_BYTES = 2 * 2**30
MARKER = "insync-dist.json"
_HINT = ("pass a Kafka binary distribution: a kafka_<scala>-<version>.tgz (./gradlew "
         "releaseTarGz) or its unpacked directory, with libs/")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class KafkaDist:
    """One user build, as read from its jars: what test.json records of it."""

    path: str  # absolute
    kind: Literal["tarball", "directory"]
    sha256: str  # of the tarball; of the libs/ listing for a directory
    version: str
    commit_id: str | None
    jars: tuple[str, ...]  # file names under libs/

    @property
    def kafka(self) -> KafkaVersion:
        """The version whose eras (quirks) this build runs with."""
        return release(self.version)

    def record(self) -> dict[str, Any]:
        """The build's identity for test.json, the summary and the analysis."""
        return {"path": self.path, "kind": self.kind, "sha256": self.sha256,
                "version": self.version, "commit_id": self.commit_id}


def inspect_dist(path: str | Path) -> KafkaDist:
    """Read and check the build at ``path``; one ``UsageError`` line if it is not one
    insync can run. Memoised on the file's identity and modification time, so the
    several checks a command makes hash a tarball once."""
    where = Path(path).expanduser().absolute()
    try:
        info = where.stat()
    except OSError as err:
        if isinstance(err, FileNotFoundError) and str(where) in _READ:
            # Gone since this process read it (a run deletes nothing, but a person
            # may): it stays the build read, whose jars are laid out by digest.
            return _READ[str(where)]
        why = "no such file" if isinstance(err, FileNotFoundError) else err.strerror or err
        raise UsageError(f"{path}: cannot read it: {why}", hint="check the path") from None
    dist = _inspect(str(where), info.st_ino, info.st_mtime_ns, info.st_size)
    _READ[dist.path] = dist
    return dist


#: The last build read at each path, in this process.
_READ: dict[str, KafkaDist] = {}


@functools.lru_cache(maxsize=8)
def _inspect(path: str, _ino: int, _mtime_ns: int, _size: int) -> KafkaDist:
    what = path  # the option's name is the caller's prefix
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        libs = Path(path) / "libs"
        if not libs.is_dir():
            raise UsageError(f"{what} is not a Kafka distribution: it has no libs/", hint=_HINT)
        jars = {p.name: p for p in sorted(libs.glob("*.jar")) if p.is_file()}
        version, commit = _identity(what, {n: (lambda p=p: _read_jar(p, what))
                                           for n, p in jars.items()})
        digest = hashlib.sha256()
        for name, jar in jars.items():
            digest.update(f"{name} {_file_sha256(jar, what)}\n".encode())
        return _checked(KafkaDist(path, "directory", digest.hexdigest(), version, commit,
                                  tuple(jars)), what)
    with open_regular(path, what, hint=_HINT) as fh:
        if os.fstat(fh.fileno()).st_size > MAX_DIST_BYTES:
            raise UsageError(f"{what} is larger than {MAX_DIST_BYTES >> 30} GiB", hint=_HINT)
        sha = _stream_sha256(fh, what)
        fh.seek(0)
        try:
            with tarfile.open(fileobj=fh, mode="r:*") as tar:
                members = dict(_lib_members(tar, what))
                version, commit = _identity(what, {
                    n: (lambda m=m: _read_member(tar, m, what)) for n, m in members.items()})
        except (tarfile.TarError, EOFError, OSError, zipfile.BadZipFile) as err:
            raise UsageError(f"{what} is not a Kafka distribution tarball: {err}",
                             hint=_HINT) from None
    return _checked(KafkaDist(path, "tarball", sha, version, commit, tuple(sorted(members))),
                    what)


def _checked(dist: KafkaDist, what: str) -> KafkaDist:
    try:
        dist.kafka  # noqa: B018 - refuses versions insync has no eras for
    except UsageError as err:
        raise UsageError(f"{what}: built as Kafka {dist.version!r}, which insync cannot run: "
                         f"{err.message}", hint=err.hint) from None
    return dist


def _lib_members(tar: tarfile.TarFile, what: str) -> Iterator[tuple[str, tarfile.TarInfo]]:
    """The regular ``*.jar`` files of the one ``libs/`` directory (at the top or under
    one top directory); anything else in the tarball is not read."""
    found: dict[str, tarfile.TarInfo] = {}
    tops: set[str] = set()
    for member in tar.getmembers():
        parts = PurePosixPath(member.name.lstrip("./")).parts
        if len(parts) < 2 or not member.isfile() or not parts[-1].endswith(".jar"):
            continue
        if parts[-2] == "libs" and len(parts) in (2, 3):
            tops.add("/".join(parts[:-2]))
            found[parts[-1]] = member
    if not found:
        raise UsageError(f"{what} is not a Kafka distribution: it has no libs/*.jar", hint=_HINT)
    if len(tops) > 1:
        raise UsageError(f"{what} holds {len(tops)} distributions ({', '.join(sorted(tops))})",
                         hint="pass one distribution's tarball")
    yield from sorted(found.items())


def _identity(what: str, jars: dict[str, Any]) -> tuple[str, str | None]:
    """``version`` and ``commitId`` from the first Kafka jar that carries them."""
    kafka = sorted((n for n in jars if n.startswith(("kafka-clients-", "kafka_", "kafka-"))),
                   key=lambda n: (not n.startswith("kafka-clients-"),
                                  not n.startswith("kafka_"), n))
    if not kafka:
        raise UsageError(f"{what} is not a Kafka distribution: libs/ holds no kafka jar",
                         hint=_HINT)
    for name in kafka:
        props = _version_properties(jars[name](), what, name)
        if props is not None:
            version = props.get("version", "").strip()
            if not version:
                raise UsageError(f"{what}: libs/{name} names no version in {VERSION_ENTRY}",
                                 hint="rebuild it with ./gradlew releaseTarGz")
            commit = props.get("commitId", "").strip() or None
            return version, None if commit in (None, "unknown") else commit
    raise UsageError(f"{what}: no kafka jar in libs/ carries {VERSION_ENTRY}, so its version "
                     "is unknown", hint="rebuild it with ./gradlew releaseTarGz")


def _version_properties(data: bytes, what: str, name: str) -> dict[str, str] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as jar:
            if VERSION_ENTRY not in jar.namelist():
                return None
            text = jar.read(VERSION_ENTRY).decode("utf-8", "replace")
    except (zipfile.BadZipFile, OSError) as err:
        raise UsageError(f"{what}: libs/{name} is not a jar: {err}", hint=_HINT) from None
    props: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.lstrip().startswith(("#", "!")):
            props[key.strip()] = value
    return props


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, what: str) -> bytes:
    if member.size > MAX_DIST_BYTES:
        raise UsageError(f"{what}: {member.name} is larger than {MAX_DIST_BYTES >> 30} GiB",
                         hint=_HINT)
    fh = tar.extractfile(member)
    assert fh is not None  # a regular file member
    return fh.read()


def _read_jar(path: Path, what: str) -> bytes:
    with open_regular(path, f"{what}: libs/{path.name}") as fh:
        if os.fstat(fh.fileno()).st_size > MAX_DIST_BYTES:
            raise UsageError(f"{what}: libs/{path.name} is larger than "
                             f"{MAX_DIST_BYTES >> 30} GiB", hint=_HINT)
        return fh.read()


def _stream_sha256(fh: BinaryIO, what: str) -> str:
    digest = hashlib.sha256()
    try:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    except OSError as err:
        raise UsageError(f"{what}: cannot read it: {err.strerror or err}",
                         hint="check the file") from None
    return digest.hexdigest()


def _file_sha256(path: Path, what: str) -> str:
    with open_regular(path, f"{what}: libs/{path.name}") as fh:
        return _stream_sha256(fh, what)


def dist_root(dist: KafkaDist, cache_root: Path | None = None) -> Path:
    """Where the build's jars are laid out on this machine (absolute, named by digest)."""
    return ((cache_root or default_cache_root()) / "kafka" / f"dist-{dist.sha256[:16]}").absolute()


def stage_dist(dist: KafkaDist, cache_root: Path | None = None) -> Distribution:
    """The build laid out as a :class:`Distribution` (``libs/`` and insync's ``config/``).

    Done once per digest: a complete copy (its marker written last) is reused.
    The jars are copied from the user's file into a temporary sibling renamed
    into place, so an interrupted copy is never mistaken for a complete one.
    """
    root = dist_root(dist, cache_root)
    if _complete(root, dist):
        write_configs(root / "config")
        return Distribution(dist.kafka, root, dist.jars)
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    staging.chmod(0o755)  # mkdtemp's 0700 would hide it from a node's non-root user
    try:
        libs = staging / "libs"
        libs.mkdir()
        _copy_jars(dist, libs)
        write_configs(staging / "config")
        marker = {**dist.record(), "jars": list(dist.jars)}
        (staging / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        if root.exists():
            shutil.rmtree(root)  # incomplete: a marker-less copy is never trusted
        os.rename(staging, root)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Distribution(dist.kafka, root, dist.jars)


def _complete(root: Path, dist: KafkaDist) -> bool:
    try:
        marker = json.loads((root / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return (isinstance(marker, dict) and marker.get("sha256") == dist.sha256
            and marker.get("jars") == list(dist.jars)
            and all((root / "libs" / j).is_file() for j in dist.jars))


@dataclass(frozen=True)
class CachedBuild:
    """A build laid out in the cache (``stage_dist``), as its marker records it."""

    root: Path
    version: str
    commit_id: str | None
    path: str  # where the build was read from
    sha256: str
    jars: int
    size: int  # bytes of its jars


def cached_builds(cache_root: Path | None = None) -> list[CachedBuild]:
    """The builds whose complete copy is in the cache, oldest version first; a copy
    without a readable marker is incomplete and not listed."""
    from cluster.version_order import order_key

    found: list[CachedBuild] = []
    kafka = (cache_root or default_cache_root()) / "kafka"
    for root in sorted(kafka.glob("dist-*")) if kafka.is_dir() else []:
        try:
            marker = json.loads((root / MARKER).read_text())
            jars = [root / "libs" / str(j) for j in marker["jars"]]
            found.append(CachedBuild(root, str(marker["version"]), marker.get("commit_id"),
                                     str(marker["path"]), str(marker["sha256"]), len(jars),
                                     sum(j.stat().st_size for j in jars)))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(found, key=lambda b: (order_key(b.version) or (), b.sha256))


def _copy_jars(dist: KafkaDist, libs: Path) -> None:
    what = dist.path
    if dist.kind == "directory":
        for name in dist.jars:
            with open_regular(Path(dist.path) / "libs" / name, what) as src, \
                    open(libs / name, "wb") as out:
                shutil.copyfileobj(src, out, _CHUNK)
            os.chmod(libs / name, 0o644)
        return
    with open_regular(dist.path, what) as fh, tarfile.open(fileobj=fh, mode="r:*") as tar:
        for name, member in _lib_members(tar, what):
            jar = tar.extractfile(member)
            assert jar is not None
            with jar, open(libs / name, "wb") as out:  # by base name: no path escapes libs/
                shutil.copyfileobj(jar, out, _CHUNK)
            os.chmod(libs / name, 0o644)


def spec_version(spec: ClusterSpec) -> KafkaVersion:
    """The Kafka version ``spec`` runs, a release's or a build's, if it runs in the
    spec's mode. Needs no file: a build's version is in the spec."""
    if spec.kafka_dist is None:
        return resolve_for_mode(spec.kafka_version, spec.mode)
    return check_runnable(release(spec.kafka_version), spec.mode)


def spec_distribution(spec: ClusterSpec, cache_root: Path | None = None) -> Distribution:
    """The jars ``spec`` runs on this machine: a release fetched from Maven Central,
    or the user's build laid out, refused if it is no longer the build the spec names."""
    if spec.kafka_dist is None:
        return ensure_distribution(spec_version(spec), cache_root)
    spec_version(spec)
    dist = inspect_dist(spec.kafka_dist)
    if dist.sha256 != spec.kafka_dist_sha256:
        raise UsageError(
            f"--kafka-dist {spec.kafka_dist} changed: sha256 {dist.sha256[:16]}..., "
            f"the run names {str(spec.kafka_dist_sha256)[:16]}...",
            hint="restore that build, or pass --kafka-dist again to run this one")
    return stage_dist(dist, cache_root)


def home_name(spec: ClusterSpec) -> str:
    """The directory name the spec's jars have on a host (``4.1.2``, ``dist-<digest>``)."""
    if spec.kafka_dist is None:
        return spec_version(spec).version
    return f"dist-{str(spec.kafka_dist_sha256)[:16]}"
