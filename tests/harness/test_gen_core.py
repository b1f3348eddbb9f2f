"""The generator protocol's pieces: the RNG value, the context, lifting plain values."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.gen import NEMESIS, PENDING, Context, Pending, Rng, clients, lift, simulate
from harness.gen.core import Fn, Once, Seq, fill_in, min_wake


def ctx(free: set[int | str], time: int = 7, seed: int = 0) -> Context:
    threads: tuple[int | str, ...] = (0, 1, 2, NEMESIS)
    return Context(time, threads, frozenset(free), {0: 0, 1: 4, 2: 2, NEMESIS: NEMESIS}, Rng(seed))


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_rng_is_a_value(seed: int) -> None:
    a, b = Rng(seed), Rng(seed)
    assert a.next64() == b.next64()
    x, nxt = a.random()
    assert 0.0 <= x < 1.0
    assert nxt != a
    assert a.fork(1) != a.fork(2)


@given(st.integers(min_value=0, max_value=2**64 - 1), st.integers(min_value=0, max_value=2**20),
       st.integers(min_value=1, max_value=1000))
def test_rng_draws_are_splitmix64_steps(seed: int, salt: int, n: int) -> None:
    """``fork``, ``below`` and ``random`` are ``next64`` steps (computed without the
    intermediate values), so a seed keeps making the same ops."""
    a = Rng(seed)
    x, nxt = a.next64()
    assert a.below(n) == (x % n, nxt)
    assert a.random() == ((x >> 11) * 2.0**-53, nxt)
    assert a.fork(salt) == Rng(Rng((seed ^ (salt * 0xD1B54A32D192ED03)) % 2**64).next64()[0])


def test_rng_below_and_weighted_follow_their_distribution() -> None:
    rng = Rng(42)
    counts: Counter[int] = Counter()
    for _ in range(20_000):
        i, rng = rng.weighted([1.0, 0.0, 3.0])
        counts[i] += 1
    assert counts[1] == 0
    assert 0.72 < counts[2] / 20_000 < 0.78
    seen = set()
    for _ in range(1_000):
        j, rng = rng.below(5)
        seen.add(j)
    assert seen == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("bad", [[0.0, 0.0], []], ids=["all-zero", "empty"])
def test_weighted_refuses_no_weight(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        Rng(1).weighted(bad)


def test_context_views() -> None:
    c = ctx({1, NEMESIS})
    assert c.free_threads() == [1, NEMESIS]
    assert not c.all_free()
    assert c.thread_of(4) == 1
    assert c.thread_of(1) is None
    clients_only = c.restrict(lambda t: t != NEMESIS)
    assert clients_only.free_threads() == [1]
    assert clients_only.restrict(lambda t: t == 0).all_free() is False
    own, child = c.split()
    assert child.rng not in (own, c.rng)


def test_fill_in_completes_a_template() -> None:
    op = fill_in({"f": "poll", "value": [["poll"]]}, ctx({1}))
    assert op == {"f": "poll", "value": [["poll"]], "type": "invoke", "time": 7, "process": 4}
    assert fill_in({"f": "poll"}, ctx(set())) == PENDING
    kept = fill_in({"f": "poll", "process": 2, "time": 99}, ctx({2}))
    assert isinstance(kept, dict) and kept["process"] == 2 and kept["time"] == 99
    assert fill_in({"f": "poll", "process": 2}, ctx({0, 1})) == PENDING
    assert fill_in({"f": "poll", "process": 1}, ctx({1})) == PENDING  # thread 1 runs process 4


def test_lift_turns_plain_values_into_generators() -> None:
    assert lift(None) is None
    assert isinstance(lift({"f": "x"}), Once)
    assert isinstance(lift([{"f": "x"}]), Seq)
    assert isinstance(lift(lambda c: None), Fn)
    with pytest.raises(TypeError):
        lift(42)  # type: ignore[arg-type]


def test_a_dict_is_one_op_and_a_list_runs_in_turn() -> None:
    history = simulate([{"f": "a"}, {"f": "b"}, [{"f": "c"}]], concurrency=1)
    assert [op["f"] for op in history if op["type"] == "invoke"] == ["a", "b", "c"]


def test_a_function_yields_until_it_returns_none() -> None:
    def upto3(c: Context) -> dict[str, object] | None:
        return {"f": "tick"} if c.time < 3_000_000 else None

    history = simulate(clients(upto3), concurrency=1)
    assert [op["time"] for op in history if op["type"] == "invoke"] == [0, 1_000_000, 2_000_000]


def test_min_wake_keeps_the_earliest_known_time() -> None:
    assert min_wake([None, 5, 3]) == Pending(3)
    assert min_wake([None]) == PENDING
