"""``insync bench NAME [OPTIONS]``: benchmarks, one module per benchmark in ``harness.bench``.

Every module ``harness/bench/<name>.py`` that defines ``HELP`` (one line),
``add_arguments(parser)`` and ``main(args) -> int`` is a benchmark named after
the module (underscores become dashes), so adding one needs no edit here.
Modules are imported only when their benchmark runs, so a benchmark may import
heavy things (PySpark, a browser driver) without slowing every ``insync`` call.
Performance goals are measured by these benchmarks, never by timed tests.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import Any

from harness import bench
from harness.base.errors import UsageError


def bench_names() -> list[str]:
    return sorted(
        info.name.replace("_", "-")
        for info in pkgutil.iter_modules(bench.__path__)
        if not info.name.startswith("_")
    )


def register(sub: Any) -> None:
    names = bench_names()
    parser: argparse.ArgumentParser = sub.add_parser(
        "bench",
        help="measure insync and Kafka",
        description="Benchmarks: " + ", ".join(names) + ". "
        "`insync bench NAME -h` lists a benchmark's options.",
    )
    parser.add_argument("name", metavar="NAME", help="one of: " + ", ".join(names))
    parser.add_argument("options", nargs=argparse.REMAINDER, help="the benchmark's options")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    if args.name not in bench_names():
        raise UsageError(
            f"no benchmark named {args.name!r}", hint="choose one of: " + ", ".join(bench_names())
        )
    module = importlib.import_module(f"{bench.__name__}.{args.name.replace('-', '_')}")
    if not all(hasattr(module, attr) for attr in ("HELP", "add_arguments", "main")):
        raise UsageError(f"bench.{args.name} is not runnable (no HELP/add_arguments/main)")
    from harness.base.args import Parser  # its usage errors are one line, exit 64

    parser = Parser(prog=f"insync bench {args.name}", description=module.HELP)
    module.add_arguments(parser)
    result: int = module.main(parser.parse_args(args.options))
    return result
