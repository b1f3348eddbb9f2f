"""Parsing the quorum tool's answer into the active controller's node name."""

from __future__ import annotations

import pytest

from cluster.metadata import parse_quorum_status
from harness.base.errors import ClusterError

STATUS = """ClusterId:              abc
LeaderId:               2
LeaderEpoch:            5
HighWatermark:          300
CurrentVoters:          [{"id": 1}, {"id": 2}, {"id": 3}]
"""


def test_leader_is_named() -> None:
    assert parse_quorum_status(STATUS) == "n2"


@pytest.mark.parametrize(
    "text", ["LeaderId: -1\n", "garbage\n", ""], ids=["no-leader", "garbage", "empty"]
)
def test_no_leader_is_an_error(text: str) -> None:
    with pytest.raises(ClusterError):
        parse_quorum_status(text)
