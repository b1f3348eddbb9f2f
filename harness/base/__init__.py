r"""The ground floor: modules every other insync package may import,
which import nothing of insync above them.

Why a floor: vocabulary that both the side that acts (the nemesis, the
runner) and the side that reads (reports, Spark analysis, synthetic runs)
must agree on belongs below both, so neither has to import the other's
machinery to speak it:

- ``errors``: every deliberate insync error and its exit status;
- ``history``: the op model, the live ``HistoryWriter`` and the reader;
- ``rundir``: the run directory's layout (results/LAYOUT.md);
- ``faults``: the fault-kind registry;
- ``version``: the installed insync's version;
- ``usage``: the argparse parser whose errors are one-line usage errors.
"""
