"""From a partition shape to the exact cut, rewriting shapes that would mean nothing.

``plan`` turns what ``start-partition`` was asked for into the grudge to apply
and the value its completion records. Shapes are symbolic, so on a small
cluster some degenerate:

* ``majorities-ring`` on 3 nodes has no ring (over TCP every node would be cut
  from every other); it becomes ``bridge``, which on 3 nodes is exactly what
  the ring promises: each node sees a majority, no two the same one;
* a shape that would leave every node alone, or take a majority of the KRaft
  controllers out of the quorum (``nemesis.impact``), becomes ``isolate X``
  for one node X it meant to cut off (a leader for ``leaders:N``), the first
  whose isolation harms neither; if none, nothing is applied and the
  completion says why.

Faults overlap: a cut is judged together with the nodes the faults in force
keep down (``nemesis.in_force``; the cut replaces any partition in force), and
rewritten when it would *add* such an outcome. When some one node could be
isolated with nothing else in force but not with what is, the partition is
withheld: nothing is cut and the value says ``"withheld": true`` and
``"because"``.

A rewritten cut records ``rewritten-from`` (what was asked) and
``rewritten-because``. Explicit forms (``{"grudge": ...}``, ``{"components":
...}``, ``{"isolate": all|majority|names}``) are applied as given; whatever
any cut does to the cluster is recorded (``whole-cluster``,
``quorum-majority``).

Pure: the nodes, the controllers, the run's RNG and a target resolver come in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import nemesis.grudge as g
from nemesis.impact import Impact, added, linked, of_state
from nemesis.in_force import InForce
from nemesis.targets import Target, is_explicit, is_target, leader_count

Resolve = Callable[[Target], list[str]]

RING_ON_THREE = ("there is no ring of majorities on 3 nodes: over TCP every node would be "
                 "cut from every other; a bridge is that ring")


@dataclass(frozen=True)
class Cut:
    """What to apply (``grudge``) and what the completion records (``value``)."""

    value: dict[str, Any]
    grudge: g.Grudge
    #: False when the partition is withheld: nothing to cut
    applied: bool = True


@dataclass(frozen=True)
class _Drawn:
    label: str
    cut: g.Components | g.Grudge
    explicit: bool
    #: the nodes this shape means to cut off: where a rewrite picks its one node
    aimed_at: list[str]
    rewritten: tuple[str, str] | None = None  # (from, because)


def plan(spec: Any, nodes: Sequence[str], controllers: Collection[str], rng: random.Random,
         resolve: Resolve, *, in_force: InForce | None = None) -> Cut:
    """The cut for ``spec`` with ``in_force``'s nodes down (its own partition is replaced);
    ``ValueError`` for a shape that is unknown or cannot be cut."""
    state = in_force or InForce()
    drawn = _draw(spec, list(nodes), rng, resolve)
    value, grudge = _describe(drawn.label, drawn.cut, nodes)
    judge = _Judge(state, list(nodes), controllers)
    origin, because = drawn.rewritten or (drawn.label, "")
    more = judge.adds(grudge)
    if more.harmful and not drawn.explicit:
        because = f"{drawn.label} {more.reason(controllers, cut=True, together=bool(state.down))}"
        if state.down:
            because = f"with {state.describe(nodes, partition=False)}, {because}"
        return _isolate_one(drawn.aimed_at, (origin, because), judge, rng)
    if drawn.rewritten:
        value.update({"rewritten-from": origin, "rewritten-because": because})
    value.update(judge.after(grudge).record())
    return Cut(value, grudge)


@dataclass(frozen=True)
class _Judge:
    """A cut's impact together with the nodes the faults in force keep down."""

    state: InForce
    nodes: list[str]
    controllers: Collection[str]

    def after(self, grudge: g.Grudge, *, alone: bool = False) -> Impact:
        """The union with ``grudge`` as the cut (``alone``: as if nothing were down)."""
        down = () if alone else self.state.down
        return of_state(down, grudge, self.nodes, self.controllers)

    def adds(self, grudge: g.Grudge, *, alone: bool = False) -> Impact:
        """What ``grudge`` would add to what the nodes down already cause."""
        return added(self.after(grudge, alone=alone), self.after({}, alone=alone))


def _draw(spec: Any, nodes: list[str], rng: random.Random, resolve: Resolve) -> _Drawn:
    if isinstance(spec, Mapping) and "grudge" in spec:
        grudge = g.normalize(spec["grudge"])
        return _Drawn("grudge", grudge, True, sorted(grudge))
    if isinstance(spec, Mapping) and "components" in spec:
        comps = [list(c) for c in spec["components"]]
        listed = {n for c in comps for n in c}
        comps = [c for c in [*comps, [n for n in nodes if n not in listed]] if c]
        return _Drawn("components", comps, True, [])
    if isinstance(spec, Mapping) and "isolate" in spec:
        target = spec["isolate"]
        chosen = resolve(target)
        return _Drawn(f"isolate {target}", g.isolate(chosen, nodes),
                      is_explicit(target, nodes), chosen)
    if isinstance(spec, str) and leader_count(spec) is not None:
        leaders = resolve(spec)
        if not leaders:
            raise ValueError("no partition of the workload has a leader right now")
        return _Drawn(spec, g.isolate(leaders, nodes, each=True), False, leaders)
    if spec == "controller":
        chosen = resolve("controller")
        return _Drawn("controller", g.isolate(chosen, nodes), False, chosen)
    if spec == "majorities-ring" and len(nodes) == 3:
        bridged = g.bridge(nodes, rng)
        return _Drawn("bridge", bridged, False, _cut_off(bridged, nodes),
                      rewritten=(spec, RING_ON_THREE))
    if isinstance(spec, str):
        shaped = g.plain_shape(spec, nodes, rng)
        aimed = shaped[0] if isinstance(shaped, list) else _cut_off(shaped, nodes)
        return _Drawn(spec, shaped, False, list(aimed))
    raise ValueError(f"not a partition: {spec!r}")


def _cut_off(grudge: Mapping[str, Collection[str]], nodes: Sequence[str]) -> list[str]:
    """Nodes that lost a link, in node order."""
    return [a for a in nodes if any(not linked(grudge, a, b) for b in nodes if b != a)]


def _describe(label: str, cut: g.Components | g.Grudge, nodes: Sequence[str]
              ) -> tuple[dict[str, Any], g.Grudge]:
    if isinstance(cut, dict):
        grudge = g.normalize(cut)
        return {"shape": label, "grudge": g.as_json(grudge)}, grudge
    unknown = sorted({n for c in cut for n in c} - set(nodes))
    if unknown:
        raise ValueError(f"unknown nodes {unknown}")
    return {"shape": label, "isolated": cut}, g.normalize(g.complete_grudge(cut))


def _isolate_one(aimed_at: Sequence[str], why: tuple[str, str], judge: _Judge,
                 rng: random.Random) -> Cut:
    """The nearest harmless cut: one node the shape aimed at, alone against the rest."""
    origin, because = why
    candidates = list(aimed_at)
    rng.shuffle(candidates)
    cuts = {n: g.normalize(g.complete_grudge(g.isolate([n], judge.nodes))) for n in candidates}
    for node in candidates:
        if not judge.adds(cuts[node]).harmful:
            return Cut({"shape": f"isolate {node}", "isolated": g.isolate([node], judge.nodes),
                        "rewritten-from": origin, "rewritten-because": because,
                        **judge.after(cuts[node]).record()}, cuts[node])
    if any(not judge.adds(cuts[n], alone=True).harmful for n in candidates):
        return Cut({"shape": origin, "withheld": True,
                    "because": f"{because}, and so would isolating any one node it aims at"},
                   {}, applied=False)
    raise ValueError(f"{because}, and so would isolating any one node it aims at; "
                     "nothing was cut (ask for it explicitly with a grudge or components)")


def is_shape(target: str) -> bool:
    """Whether ``--nemesis-targets`` may name ``target`` as a partition shape."""
    return target in g.SHAPES or (is_target(target) and leader_count(target) is not None)


def default_shapes(nodes: int | None) -> tuple[str, ...]:
    """The shapes the random generator draws from when none are named.

    On 3 nodes (when the run says how many) the ring is drawn as what it would
    become anyway, a bridge, so nothing needs rewriting; the position in the
    list stays, so a seed draws the same shapes.
    """
    if nodes == 3:
        return tuple("bridge" if s == "majorities-ring" else s for s in g.DEFAULT_SHAPES)
    return g.DEFAULT_SHAPES


def shape_problem(shape: str, nodes: int) -> str | None:
    """Why ``shape`` cannot mean anything on ``nodes`` nodes, or None if it can."""
    if nodes <= 2 and shape in g.SHAPES:
        return (f"on {nodes} node{'s' if nodes != 1 else ''} every partition cuts every "
                "node off from every other")
    return None
