"""The Spark engine of the history checker: four anomaly types over histories too large
for one machine's memory (``harness.base.contract.checked_by("spark")``).

It reads the files itself (``checkers.spark.history``, shape rules in
``checkers.spark.rules``), runs the analyses as joins (``checkers.spark.anomalies``)
and assembles its verdict with the memory engine's own function
(``checkers.spark.check``). ``checkers.check(path, engine="spark")`` is the entry point;
the names below are for batches of histories (the agreement tests, the analysis).
"""

from checkers.spark.check import CHECKED_TYPES, check_files_spark, check_with_spark, judge
from checkers.spark.session import check_master, get_session, spark_session, stop_session

__all__ = [
    "CHECKED_TYPES",
    "check_files_spark",
    "check_master",
    "check_with_spark",
    "get_session",
    "judge",
    "spark_session",
    "stop_session",
]
