"""A dynamic config change mid-run, recorded with its before and after values, and undone.

Operators lower ``min.insync.replicas`` to let writes through a degraded cluster,
or turn ``unclean.leader.election.enable`` on to get a partition back; both are
dynamic configs, applied by the brokers without a restart, and both change what
a later fault can lose. ``reconfigure`` makes such a change over the Admin API
(``cluster.configs``: what ``kafka-configs --alter`` sends):

``{"topic": "t0"|"*", "set": {key: value}}`` (``*``, the default: every workload
topic) or ``{"broker": "n2"|"all", "set": {...}}`` (``all``: the cluster-wide
default) -> ``{"resources": [...], "set", "before": {resource: {key: value in
force}}, "after": {...}, "dynamic-before": {resource: {key: value or null}}}``.

``restore-config`` (the heal) puts back every dynamic value this nemesis changed
as it found it (``null``: none was set, so the setting is deleted and the static
or default value applies again), and records the values then in force. A fresh
process (teardown after a crash) does not know them: the ``reconfigure``
completions in the history do.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cluster import configs as admin_configs
from cluster.configs import Resource
from nemesis.nodes import Resolver, completion

if TYPE_CHECKING:
    from cluster import Cluster

START, STOP = "reconfigure", "restore-config"
#: How long a change is read back until the brokers serve it.
READ_BACK_S = 10.0


class Configs(Protocol):
    """What this nemesis needs of ``cluster.configs`` (tests hand in a fake)."""

    def describe(self, bootstrap: str, resources: Iterable[Resource], keys: Iterable[str]
                 ) -> dict[Resource, dict[str, str | None]]: ...

    def effective(self, bootstrap: str, res: Resource, keys: Iterable[str]
                  ) -> dict[str, str | None]: ...

    def alter(self, bootstrap: str, res: Resource, changes: Mapping[str, str | None]
              ) -> None: ...


def label(res: Resource) -> str:
    """``topic t0``, ``broker n2``, ``brokers (default)``: how a completion names it."""
    if res[0] == "broker":
        return "brokers (default)" if res[1] == "" else f"broker n{res[1]}"
    return f"topic {res[1]}"


def text(value: Any) -> str:
    """A config value as Kafka takes it (TOML's ``false`` is ``"false"``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


class ReconfigureNemesis:
    """``reconfigure`` changes dynamic configs; ``restore-config`` puts them back."""

    def __init__(self, resolver: Resolver | None = None, prefix: str = "",
                 configs: Configs | None = None, *, read_back_s: float = READ_BACK_S,
                 poll_s: float = 0.2) -> None:
        self.resolver = resolver or Resolver()
        self.prefix = prefix
        self.configs: Configs = configs or admin_configs
        self.read_back_s = read_back_s
        self.poll_s = poll_s
        #: resource -> key -> the dynamic value it had before this nemesis first changed it
        self.undo: dict[Resource, dict[str, str | None]] = {}
        #: resource -> key -> the value this nemesis last set (what a restore moves away from)
        self.set_to: dict[Resource, dict[str, str]] = {}

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, cluster: Cluster) -> None:
        """Nothing is changed yet: nothing to prepare."""

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        began = time.monotonic()
        out = self._restore(cluster) if op["f"] == STOP else self._change(cluster, op)
        out["value"]["duration-s"] = round(time.monotonic() - began, 2)
        return out

    def _resources(self, cluster: Cluster, args: Mapping[str, Any]) -> list[Resource]:
        if "broker" in args:
            who = str(args["broker"])
            return [("broker", "" if who == "all" else who.removeprefix("n"))]
        topic = str(args.get("topic", "*"))
        if topic != "*":
            return [("topic", self.prefix + topic)]
        parts = self.resolver.facts(cluster).partitions()
        return [("topic", self.prefix + t) for t in sorted({p.topic for p in parts.values()})]

    def _in_force(self, cluster: Cluster, res: Resource, keys: Iterable[str]
                  ) -> dict[str, str | None]:
        # the cluster-wide default is read back on the first node's broker, where it applies
        concrete = ("broker", str(cluster.spec.node_id(next(iter(cluster.nodes))))) \
            if res == ("broker", "") else res
        return self.configs.effective(cluster.bootstrap, concrete, keys)

    def _read_back(self, cluster: Cluster, res: Resource, want: Mapping[str, str | None]
                   ) -> dict[str, str | None]:
        """The values in force once the brokers serve ``want``, or as served when
        ``read_back_s`` has passed. A ``None`` (a dynamic value deleted) is served once
        the value this nemesis had set is not. The controller applies an alteration and
        the brokers learn it from the metadata log later: read at once, a loaded 3-node
        4.1.2 cluster still served the old value."""
        old = self.set_to.get(res, {})
        deadline = time.monotonic() + self.read_back_s
        while True:
            seen = self._in_force(cluster, res, want)
            done = all(seen.get(k) == v if v is not None
                       else k not in old or seen.get(k) != old[k] for k, v in want.items())
            if done or time.monotonic() >= deadline:
                return seen
            time.sleep(self.poll_s)

    def _change(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        args = op.get("value") if isinstance(op.get("value"), Mapping) else {}
        assert isinstance(args, Mapping)
        changes = {k: text(v) for k, v in dict(args.get("set") or {}).items()}
        record: dict[str, Any] = {"set": changes}
        try:
            resources = self._resources(cluster, args)
            record["resources"] = [label(r) for r in resources]
            dynamic = self.configs.describe(cluster.bootstrap, resources, changes)
            before = {label(r): self._in_force(cluster, r, changes) for r in resources}
            for res in resources:
                self.configs.alter(cluster.bootstrap, res, changes)
                for key in changes:  # the first value found is the one to put back
                    self.undo.setdefault(res, {}).setdefault(key, dynamic[res][key])
            after: dict[str, dict[str, str | None]] = {}
            for r in resources:
                after[label(r)] = self._read_back(cluster, r, changes)
                self.set_to.setdefault(r, {}).update(
                    {k: v for k, v in changes.items() if v is not None})
        except Exception as err:  # metadata unavailable, a key Kafka refuses: recorded
            return completion(record, f"{type(err).__name__}: {err}")
        record.update({"before": before, "after": after,
                       "dynamic-before": {label(r): dynamic[r] for r in resources}})
        return completion(record)

    def _restore(self, cluster: Cluster) -> dict[str, Any]:
        restored: dict[str, Any] = {}
        after: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for res, values in list(self.undo.items()):
            try:
                self.configs.alter(cluster.bootstrap, res, values)
                after[label(res)] = self._read_back(cluster, res, values)
                self.set_to.pop(res, None)
            except Exception as err:  # kept for the next heal
                errors[label(res)] = f"{type(err).__name__}: {err}"
                continue
            restored[label(res)] = values
            del self.undo[res]
        return completion({"restored": restored, "after": after}, errors)

    def teardown(self, cluster: Cluster) -> None:
        """Puts back what this nemesis changed (what a fresh process knows: nothing)."""
        if self.undo:
            self._restore(cluster)
