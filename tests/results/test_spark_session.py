"""Starting Spark fails in one line, before any JVM, when it cannot work."""

from __future__ import annotations

import pytest

from checkers.spark.session import check_master, get_session
from harness.base.errors import EnvironmentProblem, UsageError


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "spark://10.0.0.1:7077"])
def test_known_masters_pass(master: str) -> None:
    assert check_master(master) == master


@pytest.mark.parametrize("master", ["", "lokal[2]", "http://host:7077", "host:7077"])
def test_unknown_master_is_a_usage_error(master: str) -> None:
    with pytest.raises(UsageError, match="unknown Spark master"):
        get_session(master)


def test_no_java_is_an_environment_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EnvironmentProblem, match="no Java runtime") as err:
        get_session("local[1]")
    assert "JDK" in err.value.one_line()
