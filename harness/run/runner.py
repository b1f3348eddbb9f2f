"""One ``insync run``, from cluster to verdict, nested so that every layer unwinds.

Lifecycle (Jepsen's, with ducktape's "teardown runs every step"):

1. the run directory, ``test.json`` and ``insync.log`` (results/LAYOUT.md);
2. the cluster: reuse a running one with the same spec (unless ``--fresh-cluster``),
   else build it;
3. the workload (``workloads.WORKLOADS[--workload]``) and its ``setup`` (the
   queue's topics, with ``--replication-factor``, ``min.insync.replicas`` and
   ``unclean.leader.election.enable`` set per topic, so changing them never
   forces a cluster rebuild);
4. the nemesis package (``nemesis.build_package``, imported only when faults
   are asked for) and its ``setup``;
5. the phases main → heal → quiet → drain (``harness.run.plan``: the list the
   simulator tests), clients made by the workload, each op written to
   ``history.jsonl`` as it happens;
6. ``finally``, whatever happened (Ctrl-C, SIGTERM, a dead cluster, a bug):
   stop the workers, ``nemesis.teardown``, the workload's ``teardown`` (its
   topics, when the cluster stays), collect every node's logs into ``nodes/``,
   remove the cluster if ``--teardown``; each step logged and passed if it fails;
7. judge the history with the workload's checker (``harness.run.verdict``), scan
   the collected logs for known bugs' lines (``results.log_signatures``, informational),
   write ``results.json``, point ``results/latest`` here.

Before step 1, ``setup.preflight`` checks every option (values, version and
mode, files, broker keys): bad input is one ``UsageError`` line with nothing
created and Docker never asked. Then the run takes its cluster name's lock
(``cluster.lock``): while another command holds it, the run is refused in one
line, exit 69, with nothing created. Cleanup touches only what this run owns: its
topics, and the cluster once the provisioner's ``up`` returned it. A failure
before that (an engine that does not answer, Maven unreachable, a cluster found
running that does not answer) leaves any cluster of that name alone: not ``down``-ed,
its logs not read. A cluster ``up`` created that then never became ready
(``cluster.model.NotReady``) is the run's: its logs are collected, ``--teardown``
removes it, and the error's one line says what failed and whether it was kept.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cluster.lock import cluster_lock
from cluster.model import NotReady, stage
from harness.base.errors import InsyncError
from harness.base.history_writer import HistoryWriter
from harness.base.rundir import RunDir
from harness.run.closing import (
    cut_short_reason,
    log_signatures,
    main_phase_coverage,
    run_summary,
    write_run_report,
)
from harness.run.interpreter import Interpreter
from harness.run.options import RunOptions
from harness.run.plan import DrainFeed, build_plan, drive
from harness.run.setup import (
    build_package,
    dist_record,
    end_watch,
    preflight,
    run_env,
    test_json,
)
from harness.run.signals import run_log, signals_ignored, signals_interrupt
from harness.run.stats import Stats
from harness.run.verdict import judge, unknown
from harness.run.watch import HostWatch, watch_host
from workloads import workload_of

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.spec import ClusterSpec
    from nemesis.package import NemesisOptions
    from nemesis.protocol import NemesisPackage
    from workloads.protocol import WorkloadRun

LOG = logging.getLogger("insync.run")
Say = Callable[[str], None]
OnCluster = Callable[[str], None]


@dataclass
class RunResult:
    """What the command prints at the end."""

    run_dir: RunDir
    verdict: dict[str, Any]
    exit_code: int
    interrupted: bool = False
    error: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    report: Path | None = None
    signal: str | None = None  # the signal that interrupted the run, if one did


class Run:
    """The state of one run while its layers nest and unwind."""

    def __init__(
        self,
        opts: RunOptions,
        checked: tuple[ClusterSpec, NemesisOptions | None],
        *,
        say: Say,
        live: bool | None = None,
        on_cluster: OnCluster | None = None,
    ) -> None:
        # ``checked`` is what ``preflight(opts)`` made: everything that can be wrong with
        # the options failed there, before a directory or a container existed.
        self.spec, self.nopts = checked
        self.opts = opts
        self.say = say
        self.live = live
        self.on_cluster = on_cluster
        self.started = datetime.now(UTC)
        self.t0 = time.monotonic()
        self.run_dir = RunDir.create(opts.results_dir, opts.name or "run", self.started)
        self.token = "i" + self.run_dir.path.name.lower().replace(".", "").replace("-", "")
        # Set once the provisioner's up() returned it: only then is the cluster this
        # run's to read logs from and (--teardown) to remove.
        self.cluster: Cluster | None = None
        self.workload = workload_of(opts.workload)
        self.session: WorkloadRun | None = None  # the workload within this run
        self.package: NemesisPackage | None = None
        self.nemesis_ready = False
        self.interp: Interpreter | None = None
        self.history: HistoryWriter | None = None
        self.stats = Stats()
        self.feed = DrainFeed(self.workload.tracker())
        self.interrupted = False
        self.signal: str | None = None  # the signal that interrupted the run
        self.drain_finished = False  # the drain phase ran to its end (harness.base.drain)
        self.error: BaseException | None = None
        self.t0_ns: int | None = None  # the history's time zero
        self.replicas: dict[str, Any] | None = None  # --check-replicas, once compared
        self.watch: HostWatch | None = None  # from the first op to cleanup

    def execute(self) -> RunResult:
        nopts = self.nopts
        with run_log(self.run_dir.log_path):
            LOG.info("run %s: %s", self.run_dir.path, " ".join(self.opts.argv()))
            try:
                self.run_dir.write_test(test_json(self.opts, self.started, None,
                                                  drain_finished=False))
            except OSError:  # a full disk: the directory just made holds nothing of use
                shutil.rmtree(self.run_dir.path, ignore_errors=True)
                raise
            caught = None
            try:
                with signals_interrupt(on_signal=self._halt_loop) as caught:
                    self._run(nopts)
            except KeyboardInterrupt:
                self.interrupted = True
                self.signal = caught.name if caught is not None else None
                self.say(f"interrupted{f' by {self.signal}' if self.signal else ''}: "
                         "stopping clients, keeping the history so far")
                LOG.warning("interrupted by %s", self.signal or "KeyboardInterrupt")
            except Exception as err:
                self.error = err
                LOG.error("run stopped by %s", err, exc_info=not isinstance(err, InsyncError))
                if not self._raised_at_the_end():  # else the CLI prints it: once
                    self.say(f"run stopped: {err}")
            finally:
                with signals_ignored(self.say):
                    self._cleanup()
            return self._judge()

    # -- the layers -------------------------------------------------------------------

    def _run(self, nopts: NemesisOptions | None) -> None:
        from cluster import provisioner_for

        self.stats.enter("cluster")
        spec = self.spec
        if nopts is not None and nopts.needs_faketime and hasattr(spec, "faketime"):
            spec = replace(spec, faketime=True)  # brokers start under libfaketime
        if nopts is not None and nopts.needs_power_loss_fs and hasattr(spec, "power_loss_fs"):
            spec = replace(spec, power_loss_fs=True)  # brokers' data on the power-loss FS
        try:
            self.cluster = provisioner_for(self.opts.placement()).up(
                spec, fresh=self.opts.fresh_cluster, say=self.say)
        except NotReady as err:  # up() made it, so it is this run's: logs, then --teardown
            self.cluster = err.cluster
            err.settle(removed=self.opts.teardown, logs=str(self.run_dir.nodes_path))
            raise
        finally:  # from now on the cluster is this run's
            if self.cluster is not None and self.on_cluster is not None:
                self.on_cluster(spec.name)
        env = run_env(self.opts, self.cluster.bootstrap, self.token)
        if nopts is not None:  # pure values: built now so test.json records its fault spans
            self.package = build_package(replace(nopts, topic_prefix=env.topic_prefix))
            self.stats.fault_spans = dict(self.package.fault_spans)
        self.run_dir.write_test(self._test_json())
        self.stats.enter("workload-setup")
        self.session = self.workload.open(env, self.opts)  # before setup: cleanup undoes it
        self.feed.ends = end_watch(self.opts, self.session)
        with stage(self.say, f"workload {self.opts.workload!r} set up"):
            self.session.setup()
        if self.package is not None and self.package.nemesis is not None:
            self.stats.enter("nemesis-setup")
            self.nemesis_ready = True
            with stage(self.say, "nemesis set up"):
                self.package.nemesis.setup(self.cluster)
        t0 = time.monotonic_ns()  # one time zero for the history and the generators
        self.t0_ns = t0
        self.history = HistoryWriter(self.run_dir.history_path, start_ns=t0)
        self.interp = self._interpreter(self.cluster, self.session, self.history, t0)
        self.interp.start()
        self.watch = watch_host(self.interp, self.history, self.run_dir.history_path,
                                self.cluster)
        self.stats.enter("warm-up")
        with stage(self.say, "clients connected"):
            warm = self.interp.warm_up()
        LOG.info("%d of %d clients connected before the start", warm, len(self.interp.clients))
        self._phases(self.interp)

    def _halt_loop(self) -> None:
        """A signal stops the interpreter's loop on its next turn, should its
        KeyboardInterrupt be lost (see ``signals_interrupt``)."""
        if self.interp is not None and self.interp.halted is None:
            self.interp.halted = KeyboardInterrupt()

    def _test_json(self) -> dict[str, Any]:
        return test_json(self.opts, self.started, self.cluster, self.package,
                         drain_finished=self.drain_finished)

    def _raised_at_the_end(self) -> bool:
        """``_judge`` re-raises a deliberate error that stopped the run before any op."""
        return self._no_history() and isinstance(self.error, InsyncError)

    def _no_history(self) -> bool:
        return self.history is None or not self.run_dir.history_path.exists()

    def _interpreter(
        self, cluster: Cluster, session: WorkloadRun, history: HistoryWriter, t0: int
    ) -> Interpreter:
        """Client workers whose clients the workload makes, and the nemesis worker."""
        from workloads.protocol import OpTimeout

        assert self.opts.concurrency is not None  # resolved() decided it
        return Interpreter(
            op_timeout_s=session.op_timeout_s if isinstance(session, OpTimeout) else None,
            history=history,
            concurrency=self.opts.concurrency,
            seed=self.opts.seed or 0,
            client_factory=session.client,
            nemesis=self.package.nemesis if self.package else None,
            cluster=cluster,
            start_ns=t0,
            observers=(self.stats.observe, self.feed.observe),
        )

    def _phases(self, interp: Interpreter) -> None:
        from harness.run.display import Display

        plan = build_plan(self.opts, self.workload, self.package)
        with Display(self.stats, f"insync run {self.opts.name}", live=self.live):
            drive(interp, plan, stats=self.stats, feed=self.feed)
        self.drain_finished = self.feed.ran_its_course
        self.run_dir.write_test(self._test_json())
        shortfall = self.feed.shortfall()
        if shortfall is not None:
            self.say(shortfall)

    def _cleanup(self) -> None:
        self.stats.enter("cleanup")
        if self.watch is not None:  # nodes it found lost are left out of cleanup
            self.cluster = self.watch.end(self.cluster)
        steps: list[tuple[str, Callable[[], None]]] = [
            ("stop clients", self._stop_clients),
            ("nemesis teardown", self._nemesis_teardown),
            ("compare replicas", self._compare_replicas),
            ("workload teardown", self._workload_teardown),
            ("collect logs", self._collect_logs),
            ("remove cluster", self._remove_cluster),
        ]
        for name, step in steps:
            try:
                step()
            except BaseException as err:  # keep going: every later step still matters
                LOG.warning("cleanup step %r failed: %s", name, err)
                said = err.one_line() if isinstance(err, InsyncError) else str(err)
                self.say(f"cleanup: {name} failed: {said}")

    def _stop_clients(self) -> None:
        if self.interp is not None and not self.interp.stop(timeout_s=30):
            LOG.warning("some clients were still busy after 30s; their ops stay open (info)")
        if self.history is not None:
            self.history.close()

    def _nemesis_teardown(self) -> None:
        if self.nemesis_ready and self.package and self.package.nemesis and self.cluster:
            self.package.nemesis.teardown(self.cluster)

    def _compare_replicas(self) -> None:
        """``--check-replicas``: every replica's log of those keys, compared (healed, after
        the drain, before the topics go); the result goes into results.json's ``run``."""
        from harness.run.replicas import compare_session

        if self.cluster is not None:
            self.replicas = compare_session(self.cluster, self.session, self.say)

    def _workload_teardown(self) -> None:
        if self.session is not None and not self.opts.teardown:  # else the cluster goes
            self.session.teardown()

    def _collect_logs(self) -> None:
        cluster = self.cluster
        if cluster is None:
            return  # up() never returned: whatever runs under that name is not ours
        for node in cluster.nodes.values():
            try:
                node.collect_logs(self.run_dir.nodes_path)
            except Exception as err:
                LOG.warning("could not collect logs of %s: %s", node.name, err)

    def _remove_cluster(self) -> None:
        from cluster import provisioner_for

        if self.opts.teardown and self.cluster is not None:
            down = provisioner_for(self.opts.placement()).down
            removed = down(self.spec.name) if self.watch is None else self.watch.retried(
                lambda: down(self.spec.name), self.say)
            self.say(f"removed cluster {self.spec.name!r} ({removed})")

    # -- the verdict ---------------------------------------------------------------------

    def _judge(self) -> RunResult:
        error = None if self.error is None else str(self.error)
        if self._no_history():
            if isinstance(self.error, InsyncError):
                raise self.error
            verdict, code = unknown(error or "interrupted before any op"), 2
        else:
            verdict, code = judge(self.workload.checker, self.run_dir.history_path,
                                  drain_finished=self.drain_finished,
                                  why=self._cut_short_reason())
        summary = run_summary(
            self.stats, self.feed, exit_code=code, duration_s=time.monotonic() - self.t0,
            interrupted=self.interrupted, drain_finished=self.drain_finished,
            signal=self.signal, error=error, coverage=self._coverage(),
            replicas=self.replicas, build=dist_record(self.opts),
            signatures=log_signatures(self.run_dir))
        try:
            self.run_dir.write_results({**verdict, "run": summary})
            self.run_dir.point_latest()
        except OSError as err:  # a full disk: the verdict is still said, and its status given
            LOG.warning("results.json not written: %s", err)
            self.say(f"results.json not written ({err.strerror or err}); "
                     f"`insync check {self.run_dir.path}` judges the history kept")
        result = RunResult(self.run_dir, verdict, code, self.interrupted, error, summary,
                           signal=self.signal)
        result.report = self._report()
        return result

    def _cut_short_reason(self) -> str:
        return cut_short_reason(self.feed, interrupted=self.interrupted, signal=self.signal,
                                error=self.error)

    def _coverage(self) -> dict[str, Any] | None:
        if self._no_history() or self.t0_ns is None:
            return None
        return main_phase_coverage(self.run_dir, self.stats, self.t0_ns, self.opts.time_limit)

    def _report(self) -> Path | None:
        return None if self._no_history() else write_run_report(self.run_dir, self.say)


def run(
    opts: RunOptions,
    *,
    say: Say | None = None,
    live: bool | None = None,
    on_cluster: OnCluster | None = None,
) -> RunResult:
    """Run the test ``opts`` describes (validated and resolved here) and judge it, holding
    its cluster's name (``cluster.lock``) from the end of the checks to the verdict.

    ``on_cluster(name)`` is called once this run owns the cluster ``name`` (the
    provisioner's ``up`` returned it): ``insync matrix`` removes at the
    end only clusters its runs owned.
    """

    def to_stderr(text: str) -> None:
        print(f"insync: {text}", file=sys.stderr, flush=True)

    resolved = opts.validate().resolved()
    checked = preflight(resolved)  # bad input is refused before the lock: it needs none
    with cluster_lock(resolved.cluster_name):
        return Run(resolved, checked, say=say or to_stderr, live=live,
                   on_cluster=on_cluster).execute()
