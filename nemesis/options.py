"""The nemesis's command-line options, for the runner to add to ``insync run``.

``add_nemesis_options(parser)`` adds the flags; ``options_from_args(args)``
turns the parsed namespace into ``NemesisOptions``. Kept apart from the runner
so the fault vocabulary has one owner.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import UsageError
from nemesis.grudge import SHAPES
from nemesis.package import FAULTS, PACKET_BEHAVIOURS, NemesisOptions
from nemesis.targets import TARGETS


def _csv(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def add_nemesis_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--nemesis`` and friends to ``parser``."""
    group = parser.add_argument_group("faults (nemesis)")
    group.add_argument(
        "--nemesis", metavar="FAULTS", type=_csv, default=(),
        help=f"comma-separated fault kinds: {','.join(FAULTS)} (default: none)",
    )
    group.add_argument(
        "--nemesis-interval", metavar="SECONDS", type=float, default=10.0,
        help="mean seconds between nemesis ops (default: 10)",
    )
    group.add_argument(
        "--nemesis-targets", metavar="TARGETS", type=_csv, default=(),
        help=f"symbolic targets to draw from: {','.join(TARGETS)}; partition shapes: "
             f"{','.join(SHAPES)} (default: all)",
    )
    group.add_argument(
        "--nemesis-schedule", metavar="FILE", type=Path, default=None,
        help="a timed fault script (TOML [[step]] tables or JSON lines with at/f/value) "
             "instead of random faults; see nemesis/schedule.py",
    )
    group.add_argument(
        "--partition-clients", action="store_true",
        help="partitions also cut the clients off from nodes outside the majority",
    )
    group.add_argument(
        "--nemesis-packet", metavar="BEHAVIOURS", type=_csv, default=("loss", "rate"),
        help=f"packet faults to draw from: {','.join(PACKET_BEHAVIOURS)} "
             "(delay/duplicate need netem in the kernel; default: loss,rate)",
    )
    group.add_argument(
        "--nemesis-seed", metavar="N", type=int, default=None,
        help="seed for fault choices (default: the run's --seed, else 0)",
    )


def options_from_args(
    args: argparse.Namespace, *, topics: tuple[str, ...] | None = None
) -> NemesisOptions:
    """``NemesisOptions`` from the parsed flags (the run's ``--seed`` if no nemesis seed)."""
    seed = args.nemesis_seed
    if seed is None:
        seed = getattr(args, "seed", None) or 0
    schedule: Path | None = args.nemesis_schedule
    if schedule is not None and not schedule.is_file():
        raise UsageError(f"no nemesis schedule file {schedule}")
    return NemesisOptions(
        faults=frozenset(args.nemesis),
        interval=args.nemesis_interval,
        targets=tuple(args.nemesis_targets),
        schedule=schedule,
        partition_clients=args.partition_clients,
        seed=int(seed),
        topics=topics,
        packet=tuple(args.nemesis_packet),
    )
