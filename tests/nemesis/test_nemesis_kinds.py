"""Each registry entry has a working implementation, and the nemesis emits no op outside them.

Covers the ``nemesis.kinds`` modules through the registry (``FaultKind.impl``),
never by importing them by hand: what these tests reach is what a run reaches.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from fakes import fake_cluster
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.base.faults import FAULT_KINDS, FaultKind, all_fs, kind_of
from harness.gen import Rng, nemesis, phases, simulate, time_limit
from nemesis import FaultImpl, NemesisOptions, build_package
from nemesis.grudge import SHAPES
from nemesis.kinds import load
from nemesis.nodes import Resolver
from nemesis.recovery import AWAIT
from nemesis.residue import node_residue, residue
from nemesis.settings import PACKET_BEHAVIOURS
from nemesis.targets import TARGETS

KINDS = {k.name: k for k in FAULT_KINDS}
PROTOCOL = {name: inspect.signature(member) for name, member in vars(FaultImpl).items()
            if callable(member) and not name.startswith("_")}

options = st.builds(
    NemesisOptions,
    faults=st.just(frozenset(KINDS)),
    interval=st.floats(0.5, 120),
    targets=st.lists(st.sampled_from(sorted({*TARGETS, *SHAPES, "leaders:2", "primaries:3"})),
                     unique=True).map(tuple),
    nodes=st.none() | st.integers(3, 9),
    seed=st.integers(0, 2**32),
    packet=st.lists(st.sampled_from(PACKET_BEHAVIOURS), min_size=1, unique=True).map(tuple),
)


@pytest.mark.parametrize("kind", FAULT_KINDS, ids=lambda k: k.name)
def test_every_entry_has_an_impl_that_satisfies_the_protocol(kind: FaultKind) -> None:
    impl = load(kind)
    assert isinstance(impl, FaultImpl)
    for name, signature in PROTOCOL.items():
        params = list(signature.parameters)[1:]  # a module's functions have no self
        assert list(inspect.signature(getattr(impl, name)).parameters) == params, name


@pytest.mark.parametrize("kind", FAULT_KINDS, ids=lambda k: k.name)
def test_each_impl_handles_exactly_its_kinds_ops(kind: FaultKind) -> None:
    assert load(kind).make_nemesis(Resolver(0), NemesisOptions()).fs() == kind.fs


@settings(max_examples=60, deadline=None)
@given(opts=options, state=st.integers(0, 2**64 - 1))
def test_every_drawn_start_is_a_start_of_its_kind(opts: NemesisOptions, state: int) -> None:
    for kind in FAULT_KINDS:
        op = load(kind).start_op(opts, Rng(state))
        assert op["f"] in kind.starts, f"{kind.name} drew {op}"


@settings(max_examples=15, deadline=None)
@given(opts=options)
def test_every_op_the_nemesis_emits_has_a_registry_entry(opts: NemesisOptions) -> None:
    """Or is the recovery wait, which is no fault kind and which every package handles."""
    pkg = build_package(opts)
    assert pkg.nemesis is not None
    gen = phases(time_limit(300, nemesis(pkg.generator)), nemesis(pkg.final_generator))
    fs = {op["f"] for op in simulate(gen, concurrency=1, seed=opts.seed)}
    assert all(kind_of(f) is not None for f in fs - {AWAIT}), fs - all_fs()
    assert AWAIT in fs and kind_of(AWAIT) is None
    assert pkg.nemesis.fs() == all_fs() | {AWAIT}


def test_a_module_lacking_part_of_the_protocol_is_refused() -> None:
    broken = FaultKind("broken", ("break",), "mend", None, 50, "nemesis.targets")
    with pytest.raises(TypeError, match=r"lacks .*'start_op'"):
        load(broken)


# --- residue: each kind's probe finds its own leftovers, and only those -------------------

#: kind -> how to leave it behind on a fake node, and a finding that must then be reported
LEFTOVERS: dict[str, tuple[dict[str, Any], str]] = {
    "partition": ({"rules": ["-N INSYNC", "-A INPUT -j INSYNC"]}, "iptables: -N INSYNC"),
    "pause": ({"stat": "T"}, "stopped process: 100 T java"),
    "clock": ({"clock": "+30.000"}, "faketime offset: '+30.000'"),
    "packet": ({"rules": ["-A INSYNC-LOSS -s 10.0.0.2 -j DROP"],
                "qdiscs": ["qdisc tbf 8001: dev eth0 root refcnt 2 rate 256Kbit"]},
               "qdisc: qdisc tbf 8001: dev eth0 root refcnt 2 rate 256Kbit"),
}


def test_a_clean_node_has_no_residue() -> None:
    cluster, _ = fake_cluster(3)
    assert residue(cluster) == {}


@pytest.mark.parametrize("name", sorted(LEFTOVERS))
def test_each_kind_reports_its_own_leftovers(name: str) -> None:
    cluster, fakes = fake_cluster(1)
    state, finding = LEFTOVERS[name]
    for attr, value in state.items():
        setattr(fakes["n1"], attr, value)
    node = cluster.nodes["n1"]
    assert finding in node_residue(node)
    reporters = {k.name for k in FAULT_KINDS if load(k).residue(node)}
    assert reporters == {name}


def test_a_dead_broker_is_reported_once_whatever_killed_it() -> None:
    cluster, fakes = fake_cluster(2)
    fakes["n2"].pid = None
    assert residue(cluster) == {"n2": ["broker not running"]}
