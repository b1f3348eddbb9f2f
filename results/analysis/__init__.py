"""The analysis pipeline (``insync analyze``): stored runs into Parquet, compared on Spark.

- ``ingest``: runs (test.json, results.json, history) into the ``runs``, ``ops`` and
  ``anomalies`` tables (``results/PARQUET.md``)
- ``analyze``: per-configuration metrics on Spark, the CSV, and the trend per Kafka
  version and night
- ``tables``: the comparison's columns (from the registries) and how people see them
  (a terminal table of 100 characters, the HTML page)

Imported eagerly (Spark itself loads only when a function runs): ``ingest`` is both a
module and its function, and the function is the name exported here.
"""

from results.analysis.analyze import compare, has_tables, prepare_out, trend, write_outputs
from results.analysis.ingest import ingest, read_runs
from results.analysis.tables import CONFIG_COLUMNS, METRIC_COLUMNS, render_terminal

__all__ = ["CONFIG_COLUMNS", "METRIC_COLUMNS", "compare", "has_tables", "ingest", "prepare_out",
           "read_runs", "render_terminal", "trend", "write_outputs"]
