"""``insync bench spark-check``: the Spark engine of ``insync check`` against the in-memory one.

The benchmark lives in ``harness/bench/analyze.py`` (one module for the Spark
pipeline's numbers); this module only gives it its name.
"""

from __future__ import annotations

import argparse

from harness.bench.analyze import SPARK_CHECK_HELP, add_spark_check_arguments, spark_check_main

HELP = SPARK_CHECK_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_spark_check_arguments(parser)


def main(args: argparse.Namespace) -> int:
    return spark_check_main(args)
