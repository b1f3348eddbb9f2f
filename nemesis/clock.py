"""Clock faults: per-node wall-clock skew through libfaketime in the broker JVM only.

The host clock is never touched. Brokers started with ``ClusterSpec.faketime``
preload libfaketime and read their offset from ``FAKETIME_CONTROL`` (up to two
seconds late: libfaketime re-reads it when the whole-second part of the real time
is more than ``FAKETIME_CACHE_DURATION`` past its last read); this nemesis rewrites
that file atomically. The monotonic clock stays real
(``cluster.kafka_node.faketime_env`` says why), so timeouts keep working while
timestamps, log retention and LogAppendTime see the skew.

Ops and values:

* ``bump-clock`` ``{"target": t, "delta-ms": d}`` → ``{"offsets-ms": {"n1": 60000}}``
  (the offset accumulates: two bumps of +30 s give +60 s);
* ``strobe-clock`` ``{"target", "delta-ms", "period-ms", "duration-s"}``: flip
  between the current offset and offset+delta every period, for the duration
  (the op completes when strobing ends) → ``{"strobed": [...], "flips": {...}}``.
  ``flips`` counts the control file's flips; the broker reads the file once every
  one to two seconds, so with a shorter period it sees the offset jump at its own
  read times, between whichever values the file holds then;
* ``freeze-clock`` ``{"target": t}`` → ``{"frozen": {"n1": "2026-11-21 02:10:00"}}``;
* ``reset-clock`` ``{"target": t}`` (default ``all``) → ``{"offsets-ms": {"n1": 0}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cluster.kafka_node import FAKETIME_CONTROL, faketime_env
from cluster.remote import Remote, sh
from nemesis.errors import TeardownIncomplete
from nemesis.nodes import Landed, Resolver, completion, on_nodes, on_nodes_timed

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode

STROBE_PIDFILE = "/var/run/insync/strobe.pid"
FS = frozenset({"bump-clock", "strobe-clock", "freeze-clock", "reset-clock"})


def offset_text(offset_ms: float) -> str:
    """libfaketime's relative form: ``+1.500`` seconds."""
    return f"{offset_ms / 1000:+.3f}"


#: The shell word the freeze script holds its stamp in.
FREEZE_STAMP = '"$t"'


def control_script(word: str) -> str:
    """Replace the control file by the shell word ``word`` (``"$2"``, ``"$t"``: never a
    value) atomically, so libfaketime never reads half a line.

    Every script of this module runs with ``$1`` = the node's ``KafkaNode.root`` (every
    path insync writes lies under it), passed as an argument, never in the text.
    """
    ctl = f'"$1"{FAKETIME_CONTROL}'
    return (f'mkdir -p "$(dirname {ctl})" && printf \'%s\\n\' {word} '
            f"> {ctl}.tmp && mv {ctl}.tmp {ctl}")


def write_control(remote: Remote, text: str, root: str = "") -> None:
    sh(remote, control_script('"$2"'), root, text)


def faked_now(remote: Remote, root: str = "") -> float:
    """The time (epoch seconds) a process under the broker's faketime settings sees now."""
    env = [f"{k}={v}" for k, v in sorted(faketime_env(root).items())
           if k != "FAKETIME_CACHE_DURATION"]
    return float(remote.exec(["env", *env, "date", "+%s.%N"]).stdout.strip())


#: A loop on the node flipping the control file between ``$2`` (high) and ``$3`` (low)
#: every ``$4`` seconds for ``$5`` seconds (``$1``: the node's root). It records its pid
#: so teardown can stop it even if the harness died mid-strobe, and always leaves the low
#: value in force when it ends.
STROBE_SCRIPT = f"""
root=$1 high=$2 low=$3 period=$4 duration=$5
ctl="$root"{FAKETIME_CONTROL} pidfile="$root"{STROBE_PIDFILE}
echo $$ > "$pidfile"
put() {{ printf '%s\\n' "$1" > "$ctl.strobe" && mv "$ctl.strobe" "$ctl"; }}
trap 'put "$low"; rm -f "$pidfile"; exit 0' TERM INT
end=$(( $(date +%s) + duration ))
n=0
while [ "$(date +%s)" -lt "$end" ]; do
  put "$high"; sleep "$period"
  put "$low"; sleep "$period"
  n=$((n + 2))
done
put "$low"
rm -f "$pidfile"
echo $n
"""


def strobe_args(high: str, low: str, period_s: float, duration_s: float, root: str = ""
                ) -> list[str]:
    """``STROBE_SCRIPT``'s arguments."""
    return [root, high, low, f"{period_s:.3f}", str(max(1, round(duration_s)))]


#: Stop a strobe loop if one runs (``$1``: the node's root), waiting (at most 2 s) until
#: it has put its low value and exited, so what is written next is not overwritten; no
#: wait when none runs.
STOP_STROBE = (f'if p=$(cat "$1"{STROBE_PIDFILE} 2>/dev/null) && kill -TERM "$p" 2>/dev/null; '
               'then n=200; while [ $n -gt 0 ] && kill -0 "$p" 2>/dev/null; '
               f'do n=$((n - 1)); sleep 0.01; done; fi; rm -f "$1"{STROBE_PIDFILE}; true')


class ClockNemesis:
    """Skews, strobes, freezes and resets the brokers' wall clocks."""

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver or Resolver()
        self.offsets_ms: dict[str, float] = {}

    def fs(self) -> frozenset[str]:
        return FS

    def setup(self, cluster: Cluster) -> None:
        if cluster.spec.faketime:
            self._reset(cluster, list(cluster.nodes))

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        value = op.get("value")
        args: Mapping[str, Any] = value if isinstance(value, Mapping) else {"target": value}
        default = "all" if op["f"] == "reset-clock" else "one"
        target = args.get("target") or default
        if not cluster.spec.faketime:
            return completion({"target": target}, "brokers were not started under libfaketime "
                                                  "(ClusterSpec.faketime is off)")
        try:
            hit = self.resolver.hit(cluster, target)
        except Exception as err:
            return completion({"target": target}, f"{type(err).__name__}: {err}")
        f, names = op["f"], hit.nodes
        if f == "reset-clock":
            landed = self._reset(cluster, names)
            value = {"target": target, "offsets-ms": landed.results}
            return completion(landed.recorded(value), landed.errors)
        if f == "bump-clock":
            out = self._bump(cluster, names, float(args.get("delta-ms", 0)), target)
        elif f == "freeze-clock":
            out = self._freeze(cluster, names, target)
        else:
            out = self._strobe(cluster, names, args, target)
        out["value"].update(hit.record)  # every node skewed, or a quorum majority
        return out

    def _bump(self, cluster: Cluster, names: list[str], delta: float, target: Any
              ) -> dict[str, Any]:
        def bump(node: KafkaNode) -> float:
            new = self.offsets_ms.get(node.name, 0.0) + delta
            write_control(node.remote, offset_text(new), node.root)
            self.offsets_ms[node.name] = new
            return new

        landed = on_nodes_timed(bump, cluster, names)
        value = {"target": target, "delta-ms": delta, "offsets-ms": landed.results}
        return completion(landed.recorded(value), landed.errors)

    def _freeze(self, cluster: Cluster, names: list[str], target: Any) -> dict[str, Any]:
        def freeze(node: KafkaNode) -> str:
            # One command: the node's own clock plus its offset, as a UTC stamp, written.
            offset_ns = round(self.offsets_ms.get(node.name, 0.0) * 1_000_000)
            script = (f"s=$(( ($(date +%s%N) + {offset_ns}) / 1000000000 )); "
                      f"t=$(date -u -d \"@$s\" '+%Y-%m-%d %H:%M:%S'); "
                      f"{control_script(FREEZE_STAMP)} && echo {FREEZE_STAMP}")
            stamp = sh(node.remote, script, node.root).stdout.strip()
            self.offsets_ms[node.name] = 0.0  # a reset after a freeze returns to real time
            return stamp

        landed = on_nodes_timed(freeze, cluster, names)
        return completion(landed.recorded({"target": target, "frozen": landed.results}),
                          landed.errors)

    def _strobe(self, cluster: Cluster, names: list[str], args: Mapping[str, Any], target: Any
                ) -> dict[str, Any]:
        delta = float(args.get("delta-ms", 1000))
        period_s = float(args.get("period-ms", 1000)) / 1000
        duration_s = float(args.get("duration-s", 10))

        def strobe(node: KafkaNode) -> int:
            base = self.offsets_ms.get(node.name, 0.0)
            args = strobe_args(offset_text(base + delta), offset_text(base),
                               period_s, duration_s, node.root)
            out = sh(node.remote, STROBE_SCRIPT, *args, timeout=duration_s + 60)
            return int(out.stdout.strip().splitlines()[-1])

        flips, errors = on_nodes(strobe, cluster, names)
        value = {"target": target, "strobed": sorted(flips), "flips": flips, "delta-ms": delta,
                 "period-ms": period_s * 1000, "duration-s": duration_s}
        return completion(value, errors)

    def _reset(self, cluster: Cluster, names: list[str]) -> Landed[float]:
        def reset(node: KafkaNode) -> float:
            # one command
            sh(node.remote, f"{STOP_STROBE}; {control_script('+0')}", node.root)
            self.offsets_ms[node.name] = 0.0
            return 0.0

        return on_nodes_timed(reset, cluster, names)

    def teardown(self, cluster: Cluster) -> None:
        if not cluster.spec.faketime:
            return
        errors = self._reset(cluster, list(cluster.nodes)).errors
        if errors:
            raise TeardownIncomplete({f"reset-clock {n}": e for n, e in errors.items()})
