"""iptables and tc on a node: the commands behind partitions and packet faults.

Every rule insync adds lives in its own chains (``INSYNC`` for partitions,
``INSYNC-LOSS`` for random loss), jumped to from ``INPUT`` in the filter table,
so healing is "flush our chain" and teardown is "unhook and delete our chains":
nothing of Docker's (its embedded-DNS rules live in the nat table) is touched.
Faults are applied by dropping packets on *input*: a node with a grudge against
``m`` drops what ``m`` sends it; a symmetric grudge cuts both directions.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from cluster.remote import Remote, sh

PARTITION_CHAIN = "INSYNC"
LOSS_CHAIN = "INSYNC-LOSS"
CHAINS = (PARTITION_CHAIN, LOSS_CHAIN)
IPT = "iptables -w 10"
DEVICE = "eth0"


def ensure_chain(chain: str) -> str:
    """Create ``chain`` and hook it first into INPUT, both only if missing."""
    return (
        f"{IPT} -N {chain} 2>/dev/null || true; "
        f"{IPT} -C INPUT -j {chain} 2>/dev/null || {IPT} -I INPUT 1 -j {chain}"
    )


def drop_from(
    chain: str,
    sources: Sequence[str],
    probability: float | None = None,
    *,
    keep_ports: Sequence[int] = (),
) -> tuple[str, list[str]]:
    """Replace ``chain``'s rules by DROPs of packets from ``sources`` (randomly, if given):
    the script and its arguments (the addresses travel as ``$1``, never in the text).

    Packets to ``keep_ports`` (``KafkaNode.control_ports``: the SSH port insync
    reaches the host through) are accepted before any DROP, so no fault cuts
    the control node off from a host, even when the clients' address is cut.
    """
    script = f"{ensure_chain(chain)}; {IPT} -F {chain}"
    if sources:
        for port in keep_ports:
            script += f" && {IPT} -A {chain} -p tcp --dport {int(port)} -j ACCEPT"

        match = "" if probability is None else (
            f" -m statistic --mode random --probability {probability:.6f}"
        )
        script += f' && {IPT} -A {chain} -s "$1"{match} -j DROP'
        return script, [",".join(sources)]
    return script, []


def flush(chain: str) -> str:
    """Remove every rule of ``chain`` (if it exists): heal without unhooking."""
    return f"{IPT} -F {chain} 2>/dev/null || true"


def remove_chain(chain: str) -> str:
    """Unhook and delete ``chain``; succeeds when it does not exist."""
    return (
        f"while {IPT} -D INPUT -j {chain} 2>/dev/null; do :; done; "
        f"{IPT} -F {chain} 2>/dev/null; {IPT} -X {chain} 2>/dev/null; true"
    )


def list_rules(remote: Remote) -> str:
    """The filter table's rules, as ``iptables -S`` prints them."""
    return sh(remote, f"{IPT} -S").stdout


# -- tc ---------------------------------------------------------------------------


def netem_probe() -> str:
    """Add then remove a no-op netem qdisc on ``lo``: exits 0 only if the kernel has netem."""
    return "tc qdisc add dev lo root netem delay 0ms && tc qdisc del dev lo root"


def tc_replace(args: Sequence[str]) -> str:
    return f"tc qdisc replace dev {DEVICE} root " + " ".join(shlex.quote(a) for a in args)


def tc_clear() -> str:
    """Delete the root qdisc of the device (back to the kernel default); fine if none."""
    return f"tc qdisc del dev {DEVICE} root 2>/dev/null; true"
