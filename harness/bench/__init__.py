"""The benchmarks of ``insync bench NAME``: one public module per benchmark.

They ship with the CLI (floor 4 of the architecture) because a user measures
their own machine with them; modules whose names start with ``_`` are helpers,
not benchmarks (``harness.commands.bench`` lists only the others).
"""
