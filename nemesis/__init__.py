"""insync's nemesis: real faults on real nodes, recorded exactly as they happened.

Modules: ``protocol`` (the ``Nemesis`` protocol and ``NemesisPackage``),
``package`` (``NemesisOptions``, ``build_package``: the combined nemesis),
``options`` (argparse flags), ``schedule`` (timed scripts), ``grudge`` and
``targets`` (pure shape and target resolution), ``partition``, ``process``,
``clock``, ``packet`` (one fault family each), ``net`` (iptables/tc commands),
``compose``, ``residue`` (what a teardown must leave: nothing), ``errors``.
"""

from nemesis.compose import ComposedNemesis
from nemesis.errors import NemesisError, TeardownIncomplete
from nemesis.options import add_nemesis_options, options_from_args
from nemesis.package import ALL_FS, FAULTS, NemesisOptions, build_package
from nemesis.protocol import Nemesis, NemesisPackage
from nemesis.residue import residue
from nemesis.schedule import ScheduleStep, load_schedule, parse_schedule

__all__ = [
    "ALL_FS",
    "FAULTS",
    "ComposedNemesis",
    "Nemesis",
    "NemesisError",
    "NemesisOptions",
    "NemesisPackage",
    "ScheduleStep",
    "TeardownIncomplete",
    "add_nemesis_options",
    "build_package",
    "load_schedule",
    "options_from_args",
    "parse_schedule",
    "residue",
]
