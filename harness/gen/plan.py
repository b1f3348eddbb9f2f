"""The phases of a run, as one generator: main → heal → quiet → final drain.

* **main**: client ops (staggered to ``--rate``) and nemesis ops side by side,
  until ``--time-limit``;
* **heal**: the nemesis package's final generator (end every fault), once every
  main-phase op has completed;
* **quiet**: nothing for a while, so the cluster settles (ISR catch-up, leader
  elections) before judging what it kept;
* **drain**: every client re-reads every key from the beginning, bounded by
  ``--final-time-limit`` (the runner may stop earlier, see ``drain_complete``).
"""

from __future__ import annotations

from harness.gen.combinators import any_of, clients, nemesis, phases, sleep, stagger, time_limit
from harness.gen.core import Gen, GenLike
from harness.gen.queue import Drain, QueueGen, QueueOptions


def run_plan(
    client_gen: GenLike,
    *,
    time_limit_s: float,
    nemesis_gen: GenLike = None,
    final_nemesis: GenLike = None,
    quiet_s: float = 0.0,
    drain: GenLike = None,
    final_time_limit_s: float = 60.0,
) -> Gen:
    """The four phases around any client generator (phases with nothing to do are skipped)."""
    main = time_limit(time_limit_s, any_of(clients(client_gen), nemesis(nemesis_gen)))
    return phases(
        main,
        nemesis(final_nemesis),
        sleep(quiet_s) if quiet_s > 0 else None,
        clients(time_limit(final_time_limit_s, drain)) if drain is not None else None,
    )


def queue_plan(
    opts: QueueOptions | None = None,
    *,
    rate: float | None,
    time_limit_s: float,
    nemesis_gen: GenLike = None,
    final_nemesis: GenLike = None,
    quiet_s: float = 0.0,
    final_time_limit_s: float = 60.0,
) -> Gen:
    """The queue workload's run: ``rate`` ops/s in total (None: as fast as clients go)."""
    workload: Gen = QueueGen.start(opts)
    client_gen = workload if rate is None else stagger(1.0 / rate, workload)
    return run_plan(
        client_gen,
        time_limit_s=time_limit_s,
        nemesis_gen=nemesis_gen,
        final_nemesis=final_nemesis,
        quiet_s=quiet_s,
        drain=Drain(),
        final_time_limit_s=final_time_limit_s,
    )
