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
from nemesis.impact import linked, of_grudge
from nemesis.targets import Target, is_explicit, is_target, leader_count

Resolve = Callable[[Target], list[str]]

RING_ON_THREE = ("there is no ring of majorities on 3 nodes: over TCP every node would be "
                 "cut from every other; a bridge is that ring")


@dataclass(frozen=True)
class Cut:
    """What to apply (``grudge``) and what the completion records (``value``)."""

    value: dict[str, Any]
    grudge: g.Grudge


@dataclass(frozen=True)
class _Drawn:
    label: str
    cut: g.Components | g.Grudge
    explicit: bool
    #: the nodes this shape means to cut off: where a rewrite picks its one node
    aimed_at: list[str]
    rewritten: tuple[str, str] | None = None  # (from, because)


def plan(spec: Any, nodes: Sequence[str], controllers: Collection[str], rng: random.Random,
         resolve: Resolve) -> Cut:
    """The cut for ``spec``; ``ValueError`` for a shape that is unknown or cannot be cut."""
    drawn = _draw(spec, list(nodes), rng, resolve)
    value, grudge = _describe(drawn.label, drawn.cut, nodes)
    impact = of_grudge(grudge, nodes, controllers)
    origin, because = drawn.rewritten or (drawn.label, "")
    if impact.harmful and not drawn.explicit:
        because = f"{drawn.label} {impact.reason(controllers, cut=True)}"
        return _isolate_one(drawn.aimed_at, (origin, because), nodes, controllers, rng)
    if drawn.rewritten:
        value.update({"rewritten-from": origin, "rewritten-because": because})
    value.update(impact.record())
    return Cut(value, grudge)


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


def _isolate_one(aimed_at: Sequence[str], why: tuple[str, str], nodes: Sequence[str],
                 controllers: Collection[str], rng: random.Random) -> Cut:
    """The nearest harmless cut: one node the shape aimed at, alone against the rest."""
    origin, because = why
    candidates = list(aimed_at)
    rng.shuffle(candidates)
    for node in candidates:
        comps = g.isolate([node], nodes)
        grudge = g.normalize(g.complete_grudge(comps))
        if not of_grudge(grudge, nodes, controllers).harmful:
            return Cut({"shape": f"isolate {node}", "isolated": comps,
                        "rewritten-from": origin, "rewritten-because": because}, grudge)
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
