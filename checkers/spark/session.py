"""One place that starts Spark for insync, so every caller gets the same quiet, local setup.

Why a module of its own: ``insync analyze`` and ``insync check --engine spark``
both need a session, tests share one per pytest session, and the failure modes
of starting one (no Java, a master URL that is wrong or unreachable) must turn
into one-line ``EnvironmentProblem``/``UsageError`` messages instead of a
Py4J traceback.

Defaults are for a 2-core laptop or CI box: ``local[2]``, a small driver, no
web UI, everything bound to 127.0.0.1 (no traffic leaves the machine), logs
at ERROR, and a code-generation cache large enough that a second check in
the same session reuses the first one's compiled classes. ``--master URL``
points the same code at any cluster.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from harness.base.errors import EnvironmentProblem, UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"
DEFAULT_DRIVER_MEMORY = "2g"
#: generated classes the JVM keeps (Spark's default is 100): one check compiles about 330,
#: so with the default every check in a shared session (a test suite, ``insync analyze``
#: over many runs) compiles them all again; kept, a later check compiles a handful
CODEGEN_CACHE_ENTRIES = 1000
LOOPBACK = "127.0.0.1"
#: master URL schemes Spark understands; anything else is a usage error before the JVM starts
MASTER_PREFIXES = ("local", "spark://", "yarn", "k8s://", "mesos://")


def check_master(master: str) -> str:
    """Reject a master URL Spark cannot understand, with a hint (no JVM needed)."""
    if not master.startswith(MASTER_PREFIXES):
        raise UsageError(
            f"unknown Spark master {master!r}",
            hint="use local[N] or a cluster URL such as spark://host:7077",
        )
    return master


def _check_java() -> None:
    """Spark needs a JVM; say so in one line instead of a Py4J gateway error."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java") is None:
        raise EnvironmentProblem(
            "no Java runtime found for Spark",
            hint="install a JDK 17+ (e.g. apt-get install openjdk-17-jre-headless) "
            "or set JAVA_HOME",
        )


def get_session(
    master: str = DEFAULT_MASTER,
    *,
    app_name: str = "insync",
    driver_memory: str = DEFAULT_DRIVER_MEMORY,
    shuffle_partitions: int | None = None,
) -> SparkSession:
    """A SparkSession (or the active one), quiet and bound to loopback in local mode."""
    check_master(master)
    _check_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError as err:  # pragma: no cover - pyspark is a dependency
        raise EnvironmentProblem(
            "pyspark is not installed", hint="pip install 'insync' (it depends on pyspark)"
        ) from err
    local = master.startswith("local")
    if shuffle_partitions is None:
        shuffle_partitions = 4 if local else 200
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.codegen.cache.maxEntries", str(CODEGEN_CACHE_ENTRIES))
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        # malformed history input must become NULL (then a HistoryError naming the line),
        # not an ANSI-mode exception deep inside a Spark task
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
    )
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
        builder = builder.config("spark.driver.host", LOOPBACK).config(
            "spark.driver.bindAddress", LOOPBACK
        )
    try:
        session = builder.getOrCreate()
    except Exception as err:  # Py4J/JVM start-up errors have no common base class
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise EnvironmentProblem(
            f"could not start Spark (master {master}): {first[:200]}",
            hint="check the master URL, that it is reachable, and that Java 17+ works",
        ) from err
    session.sparkContext.setLogLevel("ERROR")
    return session


def stop_session(session: SparkSession) -> None:
    """Stop a session (and its JVM's Spark context); safe to call twice."""
    try:
        session.stop()
    except Exception:  # stopping an already dead JVM: nothing left to clean
        return


@contextmanager
def spark_session(
    master: str = DEFAULT_MASTER, *, app_name: str = "insync"
) -> Iterator[SparkSession]:
    """A session for one command: stopped afterwards unless it was already running.

    A caller that shares one session (a test suite, a notebook) keeps it: a
    command run inside it must not stop it under the caller's feet.
    """
    from pyspark.sql import SparkSession

    already = SparkSession.getActiveSession()
    session = get_session(master, app_name=app_name)
    try:
        yield session
    finally:
        if already is None:
            stop_session(session)
