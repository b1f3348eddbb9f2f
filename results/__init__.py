"""Stored runs, after the check: what a person reads and what many runs are compared by.

Sub-packages, one per job:

- ``results.report``: one run's report page, PNGs, terminal summary and JUnit XML
- ``results.browser``: ``insync serve``, the browser over a results directory
- ``results.analysis``: ``insync analyze``, runs into Parquet and compared on Spark

Shared by the report and the analysis: ``coverage`` (how much of a run was
exercised, from its history) and ``run_coverage`` (that, per run directory); beside them,
``log_signatures`` (known bugs' exact lines in a run's collected broker logs).
The checkers themselves live in ``checkers`` (both engines); the run directory's
layout is ``harness.base.rundir`` (``results/LAYOUT.md``).
"""
