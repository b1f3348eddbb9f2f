"""``insync scenario list|show``: the catalogue of reported Kafka bugs, as data.

Scenarios are TOML files (``harness/scenario/catalogue/``, format in its
README); ``--scenario-dir DIR`` and ``--scenario-file FILE`` (both repeatable)
add the user's own, read and checked by the same loader, so a malformed file
is one line, exit 64, naming the file and the key, whichever command reads it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.scenario import Scenario


def _add_sources(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scenario-dir", action="append", default=[], metavar="DIR",
                   help="also read every *.toml scenario in DIR (repeatable)")
    p.add_argument("--scenario-file", action="append", default=[], metavar="FILE",
                   help="also read this scenario file (repeatable)")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "scenario", help="reported Kafka bugs as scripted scenarios: list, show",
        description="Scenarios reproduce reported Kafka data-loss bugs: a fault script that "
        "waits for cluster state, the settings the bug needs, and the outcome expected on "
        "each Kafka version (anomalies where the bug exists, valid where it was fixed).",
    )
    cmds = parser.add_subparsers(dest="scenario_command", metavar="ACTION")
    cmds.required = True
    p_list = cmds.add_parser("list", help="every scenario: its bug, affected and fixed versions")
    _add_sources(p_list)
    p_list.set_defaults(handler=_list)
    p_show = cmds.add_parser("show", help="one scenario: story, sources, settings, fault "
                             "script, expected outcome per version")
    p_show.add_argument("name", help="the scenario's name (see `insync scenario list`)")
    _add_sources(p_show)
    p_show.set_defaults(handler=_show)


def _catalogue(args: argparse.Namespace) -> dict[str, Scenario]:
    from harness.scenario import load_catalogue

    return load_catalogue(args.scenario_dir, args.scenario_file)


def _list(args: argparse.Namespace) -> int:
    from harness.scenario.render import list_table

    print(list_table(_catalogue(args)), file=sys.stdout, flush=True)
    return 0


def _show(args: argparse.Namespace) -> int:
    from harness.scenario import find
    from harness.scenario.render import show

    print(show(find(_catalogue(args), args.name)), file=sys.stdout, flush=True)
    return 0
