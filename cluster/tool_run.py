"""One run of a Kafka tool's class on a node, from the build its broker runs.

Below both ``cluster.admin_tools`` (elections, reassignments, features) and
``cluster.zk_topics`` (topics through ZooKeeper on brokers before 0.10.1), which
``cluster.model`` imports: the one way a tool runs lives where both can import it
without a cycle. A tool that reads a file gets it written and is run in ONE command
(the text on stdin, the path and every argument as separate argv entries, never
pasted into shell text).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cluster import jvm
from cluster.remote import SH_NAME

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode

#: Writes stdin to "$1", then runs the rest of the argv.
_WRITE_THEN_RUN = 'f=$1; shift; mkdir -p "$(dirname "$f")" && cat > "$f" && exec "$@"'
#: Seconds a tool may run (a JVM start on a loaded 2-core host takes up to ~50 s).
TOOL_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ToolRun:
    """One tool run: where, its exit code and output, and how long it took."""

    node: str
    exit_code: int
    output: str
    seconds: float

    def tail(self, lines: int = 12) -> list[str]:
        """The output's last non-empty lines (what a completion records)."""
        return [ln for ln in self.output.splitlines() if ln.strip()][-lines:]

    def reason(self) -> str:
        """The line that says why a failed run failed: the last ``Error``/exception line
        of its output, not the stack frame a JVM tool prints last; else its last line."""
        lines = [ln.strip() for ln in self.output.splitlines() if ln.strip()]
        for ln in reversed(lines):
            if not ln.startswith(("at ", "...")) and ("Exception" in ln or ln.startswith("Error")):
                return ln
        return lines[-1] if lines else "no output"


def run_tool(node: KafkaNode, args: Sequence[str], file: tuple[str, str] | None) -> ToolRun:
    """Run the tool ``args`` (its class first) on ``node``, from the build its broker runs,
    after writing ``file`` (path on the node, text) if it needs one: one command."""
    argv = jvm.tool_argv(node.version, args[0], args[1:], kafka_home=node.kafka_home)
    began = time.monotonic()
    if file is None:
        result = node.remote.exec(argv, timeout=TOOL_TIMEOUT_S, check=False)
    else:
        result = node.remote.exec(["sh", "-c", _WRITE_THEN_RUN, SH_NAME, file[0], *argv],
                                  input=file[1], timeout=TOOL_TIMEOUT_S, check=False)
    return ToolRun(node.name, result.exit_code, (result.stdout + result.stderr).strip(),
                   round(time.monotonic() - began, 2))
