"""Which Kafka releases Maven Central serves, read from its ``maven-metadata.xml``.

A version spec such as ``4.2.x`` or ``latest`` means "the newest one Maven
Central lists", so it is answered from the repository's own listing of the
``kafka_<scala>`` artifacts, not from a table in insync. Each listing is cached
under ``<cache root>/kafka/maven-metadata/<repository key>/``:

* an exact version already in a cached listing needs no network at all;
* a line (``4.2.x``) or ``latest`` refreshes a listing older than
  :data:`MAX_AGE_S`, and falls back to the cached one when Maven Central cannot
  be reached (the newest patch a day ago is still a real release);
* an exact version missing from the cached listing refreshes it once, since it
  may have been published since.

``$INSYNC_MAVEN_REPO`` points at another Maven 2 layout (an internal mirror,
or a ``file://`` tree of recorded listings, which is what the tests use).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from harness.base.errors import EnvironmentProblem

__all__ = [
    "CENTRAL",
    "MAX_AGE_S",
    "REPO_ENV",
    "SCALAS",
    "Listing",
    "default_cache_root",
    "listing",
    "parse_metadata",
    "repository",
]

CENTRAL = "https://repo.maven.apache.org/maven2"
REPO_ENV = "INSYNC_MAVEN_REPO"
#: Scala binary versions Kafka's core jar was published for, newest first: a
#: release is deployed with the newest Scala that lists it.
SCALAS = ("2.13", "2.12", "2.11", "2.10")
MAX_AGE_S = 24 * 3600.0
FETCH_TIMEOUT_S = 20.0

Fetch = Callable[[str], bytes]


@dataclass(frozen=True)
class Listing:
    """Every ``kafka_<scala>`` version the repository lists, and how old that knowledge is."""

    scalas: dict[str, tuple[str, ...]]  # scala -> versions as listed
    age_s: float  # seconds since the oldest listing in it was fetched

    def scala_of(self, version: str) -> str | None:
        """The newest Scala whose artifact lists ``version``, or None if none does."""
        for scala in SCALAS:
            if version in self.scalas.get(scala, ()):
                return scala
        return None

    @property
    def versions(self) -> set[str]:
        return {v for listed in self.scalas.values() for v in listed}


def default_cache_root() -> Path:
    """``$INSYNC_CACHE`` or ``~/.cache/insync``: the parent of ``kafka/``."""
    env = os.environ.get("INSYNC_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "insync"


def repository() -> str:
    """The Maven 2 repository base URL (``$INSYNC_MAVEN_REPO`` or Maven Central)."""
    return (os.environ.get(REPO_ENV) or CENTRAL).rstrip("/")


def parse_metadata(xml: bytes | str) -> tuple[str, ...]:
    """The ``<versions>`` of one ``maven-metadata.xml``, in the order listed."""
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise ValueError(f"not a maven-metadata.xml: {exc}") from exc
    return tuple(
        (node.text or "").strip()
        for node in root.iterfind("./versioning/versions/version")
        if (node.text or "").strip()
    )


def _http_get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:
        data: bytes = response.read()
        return data


def _cache_dir(cache_root: Path, repo: str) -> Path:
    key = re.sub(r"[^a-z0-9]+", "-", repo.lower()).strip("-")[:40]
    digest = hashlib.sha256(repo.encode()).hexdigest()[:10]
    return cache_root / "kafka" / "maven-metadata" / f"{key}-{digest}"


def _store(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def _read_cached(folder: Path) -> Listing | None:
    scalas: dict[str, tuple[str, ...]] = {}
    oldest = time.time()
    for scala in SCALAS:
        path = folder / f"kafka_{scala}.xml"
        try:
            scalas[scala] = parse_metadata(path.read_bytes())
            oldest = min(oldest, path.stat().st_mtime)
        except (OSError, ValueError):
            return None
    return Listing(scalas, max(0.0, time.time() - oldest))


def _fetch_all(folder: Path, repo: str, fetch: Fetch) -> Listing:
    scalas: dict[str, tuple[str, ...]] = {}
    for scala in SCALAS:
        url = f"{repo}/org/apache/kafka/kafka_{scala}/maven-metadata.xml"
        data = fetch(url)
        scalas[scala] = parse_metadata(data)
        _store(folder / f"kafka_{scala}.xml", data)
    return Listing(scalas, 0.0)


def listing(
    cache_root: Path,
    *,
    fresh: bool = False,
    wanted: Iterable[str] = (),
    fetch: Fetch = _http_get,
) -> Listing:
    """The repository's Kafka listing: cached, refreshed when ``fresh`` is asked and the
    cache is older than :data:`MAX_AGE_S`, or when it lacks one of ``wanted``.

    Raises ``EnvironmentProblem`` only when there is no cached listing and the
    repository cannot be read.
    """
    repo = repository()
    folder = _cache_dir(cache_root, repo)
    cached = _read_cached(folder)
    if cached is not None:
        stale = fresh and cached.age_s > MAX_AGE_S
        missing = not set(wanted) <= cached.versions
        if not stale and not missing:
            return cached
    try:
        return _fetch_all(folder, repo, fetch)
    except (OSError, ValueError, urllib.error.URLError) as exc:
        if cached is not None:
            return cached
        raise EnvironmentProblem(
            f"cannot list Kafka releases from {repo}: {getattr(exc, 'reason', None) or exc}",
            hint=f"check access to {repo} (or set {REPO_ENV}) and retry",
        ) from exc
