"""What a failed Kafka tool run is recorded as having said (``ToolRun.reason``)."""

from __future__ import annotations

from cluster.tool_run import ToolRun


def test_the_reason_is_the_error_line_not_the_last_stack_frame() -> None:
    out = ("Current partition replica assignment\n\n"
           "Error: org.apache.kafka.common.errors.TimeoutException: Timed out waiting\n"
           "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
           "TimeoutException: Call(callName=alterPartitionReassignments) timed out\n"
           "\tat java.base/java.util.concurrent.FutureTask.report(FutureTask.java:122)\n"
           "\t... 3 more\n"
           "\tat org.apache.kafka.tools.reassign.ReassignPartitionsCommand.main("
           "ReassignPartitionsCommand.java:149)\n")
    assert ToolRun("n1", 1, out, 9.0).reason() == (
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
        "TimeoutException: Call(callName=alterPartitionReassignments) timed out")


def test_without_an_error_line_the_reason_is_the_last_line() -> None:
    assert ToolRun("n1", 1, "one\ntwo\n", 1.0).reason() == "two"
    assert ToolRun("n1", 1, "", 1.0).reason() == "no output"
