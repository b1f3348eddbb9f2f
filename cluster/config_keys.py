"""The broker configuration keys a Kafka version really accepts, read from its jars.

A typo in ``--broker-config`` (``zookeeper.session.tmeout.ms``) does not stop
Kafka: it logs "not a known config" and runs with the default, and the test
then verifies something other than what was asked for. insync rejects such
keys up front, against the exact key set of the version under test.

That set comes from the version's own ``KafkaConfig``: every version in the
table, 0.10.2 to 4.1, has a Scala object ``kafka.server.KafkaConfig`` with one
zero-argument method returning its ``ConfigDef`` (``configDef()`` from 2.x,
the name-mangled private ``kafka$server$KafkaConfig$$configDef()`` before). A
small reflective Java program (run with the JDK's single-file source launcher,
so it needs no compile step and no compile-time classpath) finds that method
and prints ``ConfigDef.names()``. The result is cached as JSON next to the jars.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

from cluster.distribution import Distribution
from harness.base.errors import EnvironmentProblem, UsageError

__all__ = [
    "KEYS_FILE",
    "extract_keys",
    "known_broker_keys",
    "validate_keys",
]

KEYS_FILE = "broker-config-keys.json"
EXTRACT_TIMEOUT_S = 120.0
# Keys under these prefixes are per-listener overrides of a known key
# (listener.name.<listener>.<key>); Kafka accepts them without listing them.
DYNAMIC_PREFIXES = ("listener.name.",)

JAVA_SOURCE = """\
import java.lang.reflect.Method;
import java.util.Set;
import java.util.TreeSet;

public final class InsyncConfigKeys {
    public static void main(String[] args) throws Exception {
        Class<?> configDef = Class.forName("org.apache.kafka.common.config.ConfigDef");
        Class<?> module = Class.forName("kafka.server.KafkaConfig$");
        Object instance = module.getField("MODULE$").get(null);
        Object def = null;
        for (Method m : module.getDeclaredMethods()) {
            if (m.getParameterCount() == 0 && m.getReturnType() == configDef) {
                if (def != null) throw new IllegalStateException("two ConfigDef methods");
                m.setAccessible(true);
                def = m.invoke(instance);
            }
        }
        if (def == null) throw new IllegalStateException("no ConfigDef method on KafkaConfig");
        @SuppressWarnings("unchecked")
        Set<String> names = (Set<String>) configDef.getMethod("names").invoke(def);
        for (String name : new TreeSet<>(names)) System.out.println(name);
    }
}
"""


def known_broker_keys(dist: Distribution, java: str = "java") -> frozenset[str]:
    """Every broker config name ``dist``'s Kafka accepts; extracted once, then cached."""
    cache = dist.root / KEYS_FILE
    cached = _load(cache, dist.version.version)
    if cached is not None:
        return cached
    keys = extract_keys(dist, java) if dist.version.config_def else constant_keys(dist)
    _store(cache, dist.version.version, keys)
    return keys


def extract_keys(dist: Distribution, java: str = "java") -> frozenset[str]:
    """Run the reflective extractor against ``dist``'s jars (needs a JDK, not a JRE)."""
    if shutil.which(java) is None:
        raise EnvironmentProblem(
            f"cannot read Kafka {dist.version.version}'s config keys: '{java}' is not on PATH",
            hint="install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless)",
        )
    with tempfile.TemporaryDirectory(prefix="insync-keys-") as tmp:
        source = Path(tmp) / "InsyncConfigKeys.java"
        source.write_text(JAVA_SOURCE)
        argv = [java, "-Xmx256m", "-cp", dist.classpath, str(source)]
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=EXTRACT_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise EnvironmentProblem(
                f"reading Kafka {dist.version.version}'s config keys took over "
                f"{EXTRACT_TIMEOUT_S:.0f}s",
                hint="check the machine's load and retry",
            ) from exc
        except OSError as exc:
            raise EnvironmentProblem(
                f"cannot run {java} to read Kafka {dist.version.version}'s config keys: "
                f"{exc.strerror or exc}",
                hint="install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless)",
            ) from exc
    keys = frozenset(line.strip() for line in proc.stdout.splitlines() if line.strip())
    if proc.returncode != 0 or not keys:
        said = (proc.stderr.strip().splitlines() or ["no output"])[0][:200]
        raise EnvironmentProblem(
            f"cannot read Kafka {dist.version.version}'s config keys from its jars: {said}",
            hint="the host needs a JDK (the source launcher compiles a small class); "
            f"if it has one, delete {dist.root} and retry",
        )
    return keys


#: Before 0.9.0 ``KafkaConfig`` reads each key by name from ``VerifiableProperties``
#: (``props.getInt("num.network.threads", 3)``), as ``ZKConfig`` reads ZooKeeper's: the
#: keys are the string constants of these classes that look like keys.
CONSTANT_CLASSES = ("kafka/server/KafkaConfig.class", "kafka/utils/ZKConfig.class")
_KEY = re.compile(r"^[a-z]+(\.[a-z0-9]+)+$")
#: Bytes after the tag of each constant-pool entry kind (JVMS 4.4), Utf8 (1) aside.
_CONSTANT_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3,
                   16: 2, 17: 4, 18: 4, 19: 2, 20: 2}


def class_strings(data: bytes) -> list[str]:
    """Every Utf8 constant of a class file (its names and string literals)."""
    count = struct.unpack_from(">H", data, 8)[0]
    at, index, out = 10, 1, []
    while index < count:
        tag = data[at]
        if tag == 1:
            length = struct.unpack_from(">H", data, at + 1)[0]
            out.append(data[at + 3:at + 3 + length].decode("utf-8", "replace"))
            at += 3 + length
        else:
            at += 1 + _CONSTANT_SIZES[tag]
        index += 2 if tag in (5, 6) else 1  # a long or double takes two slots
    return out


def constant_keys(dist: Distribution) -> frozenset[str]:
    """The broker keys of a release whose ``KafkaConfig`` is no ConfigDef (before 0.9.0)."""
    core = f"{dist.version.kafka_artifact.artifact}-{dist.version.version}.jar"
    jars = [p for p in dist.jar_paths if p.name == core]
    if not jars:
        raise EnvironmentProblem(f"cannot read Kafka {dist.version.version}'s config keys: "
                                 f"no {core} in {dist.libs_dir}",
                                 hint=f"delete {dist.root} and retry")
    return keys_in_jar(jars[0])


def keys_in_jar(jar_path: Path) -> frozenset[str]:
    """The key-like string constants of ``CONSTANT_CLASSES`` in a Kafka core jar."""
    with zipfile.ZipFile(jar_path) as jar:
        strings = [s for name in CONSTANT_CLASSES for s in class_strings(jar.read(name))]
    return frozenset(s for s in strings if _KEY.match(s))


def validate_keys(keys: Iterable[str], known: frozenset[str]) -> None:
    """Raise ``UsageError`` naming every unknown key, with the closest known one."""
    unknown = sorted({k for k in keys if k not in known and not _dynamic(k, known)})
    if not unknown:
        return
    parts = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        parts.append(f"{key!r} (did you mean {close[0]!r}?)" if close else repr(key))
    noun = "key" if len(unknown) == 1 else "keys"
    raise UsageError(
        f"unknown broker config {noun} for this Kafka version: {', '.join(parts)}",
        hint="fix the --broker-config key; Kafka would silently ignore it",
    )


def _dynamic(key: str, known: frozenset[str]) -> bool:
    """``listener.name.<listener>.<known key>`` is a per-listener override."""
    for prefix in DYNAMIC_PREFIXES:
        if key.startswith(prefix):
            rest = key[len(prefix) :].split(".", 1)
            return len(rest) == 2 and bool(rest[0]) and rest[1] in known
    return False


def _load(path: Path, version: str) -> frozenset[str] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    keys = data.get("keys") if isinstance(data, dict) else None
    if data.get("version") != version or not isinstance(keys, list) or not keys:
        return None
    return frozenset(str(k) for k in keys)


def _store(path: Path, version: str, keys: frozenset[str]) -> None:
    """Write atomically: a reader sees the old file, the new one, or none."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as out:
        json.dump({"version": version, "keys": sorted(keys)}, out, indent=1)
        out.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
