"""A Kafka release assembled from Maven Central into a local, reusable cache.

insync does not download Kafka tarballs: it asks Maven for the broker's jars
(plus the logging binding and tools the tarball would have shipped) and lays
them out like an install::

    <cache root>/kafka/<exact version>/
        libs/*.jar                the full runtime classpath
        config/*.properties       logging configuration (see dist_files/)
        pom.xml                   what was asked of Maven, for reproducing it
        insync-dist.json          marker: written last, lists the jars

The cache root is ``$INSYNC_CACHE`` if set, else ``~/.cache/insync``. A
distribution is resolved into a temporary sibling directory and renamed into
place only once complete, so an interrupted run never leaves a half cache that
a later run would trust. When the marker exists and its jars are present, no
process is started and nothing touches the network.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape

from cluster.kafka_release import BINDING_JARS, Artifact, KafkaVersion, binding_for
from cluster.releases import default_cache_root
from harness.base.errors import EnvironmentProblem

__all__ = [
    "MARKER",
    "Distribution",
    "default_cache_root",
    "distribution_dir",
    "ensure_distribution",
    "load_distribution",
    "render_pom",
    "write_configs",
]

MARKER = "insync-dist.json"
MARKER_FORMAT = 2
# Pinned so resolution does not depend on whichever plugin version Maven picks.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
MVN_TIMEOUT_S = 900.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

# mvn output that means "the network, not the coordinates": say so in the error.
_NETWORK_SIGNS = (
    "unknownhost",
    "unknown host",
    "connection refused",
    "connect timed out",
    "network is unreachable",
    "could not transfer",
    "no route to host",
    "temporary failure in name resolution",
)


@dataclass(frozen=True)
class Distribution:
    """A complete, resolved Kafka install on this host."""

    version: KafkaVersion
    root: Path
    jars: tuple[str, ...]  # file names in libs_dir, sorted

    @property
    def libs_dir(self) -> Path:
        return self.root / "libs"

    @property
    def config_dir(self) -> Path:
        return self.root / "config"

    @property
    def classpath(self) -> str:
        """Host-side classpath (a JVM wildcard, as the node's one is)."""
        return f"{self.libs_dir}/*"

    @property
    def jar_paths(self) -> tuple[Path, ...]:
        return tuple(self.libs_dir / jar for jar in self.jars)


def distribution_dir(version: KafkaVersion, cache_root: Path | None = None) -> Path:
    """Always absolute: provisioners hand it to other programs as it is (a bind
    mount, for one, takes a relative source for the name of a volume)."""
    return ((cache_root or default_cache_root()) / "kafka" / version.version).absolute()


def ensure_distribution(version: KafkaVersion, cache_root: Path | None = None) -> Distribution:
    """Return the cached distribution of ``version``, resolving it first if needed.

    ``cache_root`` overrides ``$INSYNC_CACHE``/``~/.cache/insync``. Raises
    ``EnvironmentProblem`` when mvn is missing or Maven Central cannot be reached.
    """
    root = distribution_dir(version, cache_root)
    cached = load_distribution(version, root)
    if cached is not None:
        write_configs(cached.config_dir)  # insync's own files: refresh, no network
        return cached
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EnvironmentProblem(
            f"cannot resolve Kafka {version.version}: 'mvn' is not on PATH",
            hint="install Maven 3 (Debian: apt-get install maven) and retry",
        )
    try:
        _resolve_and_publish(root, version, mvn)
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot write the Kafka {version.version} cache at {root}: {exc.strerror or exc}",
            hint="make that directory writable or point INSYNC_CACHE at one that is",
        ) from exc
    published = load_distribution(version, root)
    if published is None:  # something changed it under us between rename and read
        raise EnvironmentProblem(
            f"the Kafka {version.version} cache at {root} is incomplete",
            hint=f"delete {root} and retry",
        )
    return published


def _resolve_and_publish(root: Path, version: KafkaVersion, mvn: str) -> None:
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{version.version}.", dir=root.parent))
    staging.chmod(0o755)  # mkdtemp's 0700 would hide it from a node's non-root user
    try:
        jars, binding = _resolve_into(staging, version, mvn)
        write_configs(staging / "config")
        _write_marker(staging, version, jars, binding)
        _publish(staging, root, version)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def load_distribution(version: KafkaVersion, root: Path) -> Distribution | None:
    """The distribution at ``root`` if its marker is valid and every jar is there."""
    try:
        marker = json.loads((root / MARKER).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("format") != MARKER_FORMAT:
        return None
    jars = marker.get("jars")
    if marker.get("version") != version.version or not isinstance(jars, list) or not jars:
        return None
    if marker.get("artifacts") != [a.coordinate for a in version.artifacts]:
        return None  # the table entry changed since this cache was built
    dist = Distribution(version, root, tuple(str(j) for j in jars))
    if not all(p.is_file() for p in dist.jar_paths):
        return None
    return dist


def render_pom(version: KafkaVersion, binding: tuple[Artifact, ...] = ()) -> str:
    """A throwaway pom whose runtime dependency tree is the broker classpath."""
    deps = "\n".join(_dependency_xml(a) for a in (*version.artifacts, *binding))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>insync.dist</groupId>
  <artifactId>kafka-{escape(version.version)}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def _dependency_xml(artifact: Artifact) -> str:
    exclusions = ""
    if artifact.exclusions:
        items = []
        for excluded in artifact.exclusions:
            group, name = excluded.split(":", 1)
            items.append(
                f"        <exclusion><groupId>{escape(group)}</groupId>"
                f"<artifactId>{escape(name)}</artifactId></exclusion>"
            )
        exclusions = "\n      <exclusions>\n" + "\n".join(items) + "\n      </exclusions>"
    return (
        f"    <dependency>\n"
        f"      <groupId>{escape(artifact.group)}</groupId>\n"
        f"      <artifactId>{escape(artifact.artifact)}</artifactId>\n"
        f"      <version>{escape(artifact.version)}</version>{exclusions}\n"
        f"    </dependency>"
    )


def mvn_argv(mvn: str) -> list[str]:
    return [
        mvn,
        "-q",
        "-B",
        "-Dstyle.color=never",
        "-f",
        "pom.xml",
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        "-DincludeScope=runtime",
        "-DoutputDirectory=libs",
    ]


def _jar_version(jars: list[str], name: str) -> str | None:
    """The version of jar ``name`` among file names ``<name>-<version>.jar``."""
    for jar in jars:
        found = re.fullmatch(re.escape(name) + r"-(\d[^-]*(?:-[A-Za-z0-9.]+)?)\.jar", jar)
        if found:
            return found.group(1)
    return None


def needed_binding(version: KafkaVersion, jars: list[str]) -> tuple[Artifact, ...]:
    """The slf4j binding a resolved jar set lacks (none when its POM brought one)."""
    if any(_jar_version(jars, name) for name in BINDING_JARS):
        return ()
    slf4j = _jar_version(jars, "slf4j-api")
    return binding_for(version.logging, slf4j, _jar_version(jars, "log4j-core"))


def _resolve_into(staging: Path, version: KafkaVersion, mvn: str) -> tuple[list[str], list[str]]:
    """Resolve the release's tree, then once more with the binding its tree lacks.

    The binding's version is read from the first tree (its slf4j-api and
    log4j-core), so it is the one the release was built against.
    """
    jars = _copy_dependencies(staging, version, mvn, ())
    binding = needed_binding(version, jars)
    if binding:
        jars = _copy_dependencies(staging, version, mvn, binding)
    return jars, [a.coordinate for a in binding]


def _copy_dependencies(
    staging: Path, version: KafkaVersion, mvn: str, binding: tuple[Artifact, ...]
) -> list[str]:
    (staging / "pom.xml").write_text(render_pom(version, binding))
    try:
        proc = subprocess.run(
            mvn_argv(mvn),
            cwd=staging,
            capture_output=True,
            text=True,
            timeout=MVN_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentProblem(
            f"resolving Kafka {version.version} from Maven Central took over {MVN_TIMEOUT_S:.0f}s",
            hint="check the connection to repo.maven.apache.org and retry",
        ) from exc
    except OSError as exc:  # mvn vanished or is not executable: not a cache problem
        raise EnvironmentProblem(
            f"cannot run {mvn} to resolve Kafka {version.version}: {exc.strerror or exc}",
            hint="reinstall Maven 3 (Debian: apt-get install maven) and retry",
        ) from exc
    if proc.returncode != 0:
        raise _mvn_failure(version, proc.stdout + "\n" + proc.stderr)
    libs = staging / "libs"
    jars = sorted(p.name for p in libs.glob("*.jar")) if libs.is_dir() else []
    if not jars:
        raise EnvironmentProblem(
            f"mvn resolved no jars for Kafka {version.version}",
            hint="the release's eras (cluster/versions.py) are probably wrong: check its artifacts",
        )
    return jars


def _mvn_failure(version: KafkaVersion, output: str) -> EnvironmentProblem:
    output = _ANSI.sub("", output)
    errors = [line for line in output.splitlines() if "[ERROR]" in line]
    lines = errors or output.strip().splitlines()[-1:] or ["no output"]
    said = " ".join(lines[0].replace("[ERROR]", "").split())[:300]
    if any(sign in output.lower() for sign in _NETWORK_SIGNS):
        return EnvironmentProblem(
            f"cannot reach Maven Central to resolve Kafka {version.version}: {said}",
            hint="check network/proxy access to repo.maven.apache.org (mvn settings) and retry",
        )
    return EnvironmentProblem(
        f"mvn failed to resolve Kafka {version.version}: {said}",
        hint="retry with access to Maven Central; if it persists, the version table is wrong",
    )


def write_configs(config_dir: Path) -> None:
    """Copy insync's config files into ``config_dir``, replacing any that differ.

    They are insync's, not Maven's, so a cache hit refreshes them too: an
    upgraded insync never runs with an older copy. Each file is replaced
    atomically, because a running node may be reading the directory.
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    for item in resources.files("cluster.dist_files").iterdir():
        if not item.name.endswith(".properties"):
            continue
        text = item.read_text()
        target = config_dir / item.name
        if target.is_file() and target.read_text() == text:
            continue
        fd, tmp = tempfile.mkstemp(prefix=f".{item.name}.", dir=config_dir)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)


def _write_marker(
    staging: Path, version: KafkaVersion, jars: list[str], binding: list[str] | None = None
) -> None:
    marker = {
        "format": MARKER_FORMAT,
        "version": version.version,
        "artifacts": [a.coordinate for a in version.artifacts],
        "binding": binding or [],
        "jars": jars,
        "resolved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (staging / MARKER).write_text(json.dumps(marker, indent=2) + "\n")


def _publish(staging: Path, root: Path, version: KafkaVersion) -> None:
    """Rename ``staging`` to ``root``; an invalid old ``root`` is moved aside first."""
    if root.exists():
        if load_distribution(version, root) is not None:
            return  # a concurrent run published a complete copy first: keep it
        # A stale, unmarked, incomplete or outdated cache: move it aside and replace it.
        trash = Path(tempfile.mkdtemp(prefix=f".{root.name}.old.", dir=root.parent))
        os.rename(root, trash / "old")
        shutil.rmtree(trash, ignore_errors=True)
    try:
        os.rename(staging, root)
    except OSError:
        if load_distribution(version, root) is None:  # lost a race to a broken copy
            raise
