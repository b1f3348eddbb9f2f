"""The analysis pipeline (``insync analyze``): stored runs into Parquet, compared on Spark.

- ``ingest``: runs (test.json, results.json, history) into the ``runs``, ``ops`` and
  ``anomalies`` tables (``results/PARQUET.md``)
- ``analyze``: per-configuration metrics, the comparison table (terminal, CSV, HTML)
  and the trend per Kafka version and night
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from results.lazy import lazy

if TYPE_CHECKING:
    from results.analysis.analyze import (
        CONFIG_COLUMNS,
        METRIC_COLUMNS,
        compare,
        has_tables,
        prepare_out,
        render_terminal,
        trend,
        write_outputs,
    )
    from results.analysis.ingest import ingest, read_runs

__all__ = ["CONFIG_COLUMNS", "METRIC_COLUMNS", "compare", "has_tables", "ingest", "prepare_out",
           "read_runs", "render_terminal", "trend", "write_outputs"]

__getattr__ = lazy(__name__, {
    "CONFIG_COLUMNS": "analyze", "METRIC_COLUMNS": "analyze", "has_tables": "analyze",
    "prepare_out": "analyze", "compare": "analyze", "render_terminal": "analyze",
    "trend": "analyze",
    "write_outputs": "analyze", "ingest": "ingest", "read_runs": "ingest",
})
