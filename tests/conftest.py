"""Settings every test shares.

Hypothesis's per-example deadline (200 ms) measures wall time, and this
project's machines are 2 shared cores where a neighbour's build can stall a
test for seconds: a deadline there fails on load, not on a bug. Timing goals
live in benchmarks (``insync bench``), so examples here have no deadline.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("insync", deadline=None)
settings.load_profile("insync")


@pytest.fixture(autouse=True, scope="session")
def _cluster_locks_in_a_tmp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Commands lock their cluster name under ``$XDG_STATE_HOME`` (``cluster.lock``):
    the tests' locks live in a folder of their own, never in the user's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
        yield


#: Maven Central's kafka_<scala> listings as recorded (4.4.0 the newest release).
RECORDED_MAVEN = Path(__file__).parent / "support" / "maven"


@pytest.fixture(autouse=True, scope="session")
def _maven_listing_is_recorded() -> Iterator[None]:
    """Which releases exist (``4.2.x``, ``latest``) is read from recorded listings, so a
    test's answer does not change when Kafka publishes a release, and needs no network."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INSYNC_MAVEN_REPO", RECORDED_MAVEN.as_uri())
        yield
