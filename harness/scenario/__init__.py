"""Scenarios as data: reported Kafka bugs as files, each with its fault script and the
outcome it expects on each version.

Public surface::

    load_catalogue(dirs=(), files=())  # every scenario by name: shipped + the user's
    load_scenario(path)                # one file, checked (UsageError naming file and key)
    find(catalogue, name)              # one scenario, or UsageError listing the names
    Scenario                           # .covered() .expected(v) .run_options(v, schedule)
                                       # .run_argv(v, schedule) .write_schedule(dir)
    Expectation, Variant, VersionRange, spans
    CATALOGUE                          # the shipped files' folder

The file format is described in ``harness/scenario/catalogue/README.md``; the
``list`` and ``show`` views are in ``render``.
"""

from harness.scenario.load import CATALOGUE, find, load_catalogue, load_scenario
from harness.scenario.model import Expectation, Scenario, Variant
from harness.scenario.ranges import VersionRange, spans

__all__ = [
    "CATALOGUE",
    "Expectation",
    "Scenario",
    "Variant",
    "VersionRange",
    "find",
    "load_catalogue",
    "load_scenario",
    "spans",
]
