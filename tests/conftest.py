"""Settings every test shares.

Hypothesis's per-example deadline (200 ms) measures wall time, and this
project's machines are 2 shared cores where a neighbour's build can stall a
test for seconds: a deadline there fails on load, not on a bug. Timing goals
live in benchmarks (``insync bench``), so examples here have no deadline.
"""

from hypothesis import settings

settings.register_profile("insync", deadline=None)
settings.load_profile("insync")
