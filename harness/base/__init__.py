r"""The ground floor: modules every other insync package may import,
which import nothing of insync above them.

Why a floor: vocabulary that both the side that acts (the nemesis, the
runner) and the side that reads (reports, Spark analysis, synthetic runs)
must agree on belongs below both, so neither has to import the other's
machinery to speak it:

- ``errors``: every deliberate insync error and its exit status;
- ``history``: the op model, the live ``HistoryWriter`` and its reading-side
  twin (``read_history``, and ``pairs``: each invoke with its completion);
- ``rundir``: the run directory (results/LAYOUT.md), written and read back:
  the one place its files are named; ``shapes`` checks the shape of its JSON
  files and ``paths`` what a path named from outside is;
- ``faults``: the fault-kind registry;
- ``version``: the installed insync's version;
- ``usage``: the argparse parser whose errors are one-line usage errors.
"""
