"""``insync run``: the runner, split by job.

Modules: ``options`` (every setting: flags, run.toml, replay),
``cluster_options`` (the cluster's settings, shared with ``insync cluster``
and ``insync matrix``), ``values`` (how
one raw value is converted and range-checked; files the user names), ``setup``
(cluster spec and nemesis from the options; ``preflight``), ``plan`` (the
phases' generators, drain completion), ``workers`` (threads that perform and
record ops), ``interpreter`` (the loop between generator and workers),
``stats`` and ``display`` (progress), ``runner`` (the lifecycle that always
unwinds). The run directory itself is ``harness.base.rundir``.
"""

from harness.run.options import RunOptions, options_from, parse
from harness.run.runner import RunResult, run

__all__ = ["RunOptions", "RunResult", "options_from", "parse", "run"]
