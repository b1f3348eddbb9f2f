"""insync's nemesis: real faults on real nodes, recorded exactly as they happened.

Modules: ``protocol`` (the ``Nemesis`` protocol and ``NemesisPackage``),
``settings`` (``NemesisOptions``), ``package`` (``build_package``: the combined
nemesis, derived from the fault-kind registry ``harness.base.faults``),
``kinds`` (one module per fault kind, behind ``FaultImpl``), ``schedule``
(fault scripts: timed steps and waits for cluster state), ``script`` (the
generator that plays them), ``waits`` (``await-state``: a script's waits),
``polling`` (the one wait loop), ``grudge``, ``shapes`` and ``targets`` (pure shape and target
resolution), ``impact`` (whole-cluster / quorum-majority faults, narrowing),
``in_force`` (the ledger of faults in force: overlapping faults judged together),
``recovery`` (``await-recovery``: faults wait for the cluster), ``partition``,
``process``, ``clock``, ``packet`` (the fault machinery), ``net`` (iptables/tc
commands), ``compose``, ``residue`` (what a teardown must leave: nothing),
``errors``.

The names below are the public surface; no submodule imports this package's
root, so importing any of them never goes round in a circle.
"""

from nemesis.compose import ComposedNemesis
from nemesis.errors import NemesisError, TeardownIncomplete
from nemesis.kinds import FaultImpl
from nemesis.package import build_package
from nemesis.protocol import Nemesis, NemesisPackage
from nemesis.residue import residue
from nemesis.schedule import ScheduleStep, load_schedule, parse_schedule
from nemesis.settings import NemesisOptions

__all__ = [
    "ComposedNemesis",
    "FaultImpl",
    "Nemesis",
    "NemesisError",
    "NemesisOptions",
    "NemesisPackage",
    "ScheduleStep",
    "TeardownIncomplete",
    "build_package",
    "load_schedule",
    "parse_schedule",
    "residue",
]
