"""The ground floor: modules every other insync package may import,
which import nothing of insync above them.

Why a floor: vocabulary that both the side that acts (the nemesis, the
runner) and the side that reads (reports, Spark analysis, synthetic runs)
must agree on belongs below both, so neither has to import the other's
machinery to speak it. ``faults`` is the fault-kind registry.
"""
