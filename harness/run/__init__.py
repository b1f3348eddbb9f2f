"""``insync run``: the runner, split by job.

Modules: ``options`` (every setting: flags, run.toml, replay; the run's rows
and every registered workload's), ``cluster_options`` (the cluster's settings,
shared with ``insync cluster`` and ``insync matrix``), ``values`` (the run's
converters; the rest are ``harness.base.values``), ``setup`` (cluster spec,
nemesis, the workload's environment and test.json from the options;
``preflight``), ``plan`` (the one phase list the simulator tests, run a phase
at a time; drain completion), ``workers`` (threads that perform and record
ops), ``interpreter`` (the loop between generator and workers; ``stuck`` logs
where an abandoned op's thread was stuck), ``stats`` and
``display`` (progress), ``verdict`` (the workload's checker), ``runner`` (the
lifecycle that always unwinds), ``closing`` (what a run works out once it
ends: why its drain did not finish, its coverage, results.json's run block,
its report). The workload comes from ``workloads.WORKLOADS``
and is never named here. The run directory itself is ``harness.base.rundir``.
"""

from harness.run.options import RunOptions, options_from, parse
from harness.run.runner import RunResult, run

__all__ = ["RunOptions", "RunResult", "options_from", "parse", "run"]
