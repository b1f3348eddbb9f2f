"""``insync scenario run`` end to end on a real cluster: the cheapest scenario, once.

``controller-failover`` on Kafka 4.1 (KRaft, 3 nodes, ~75 s of writes while the
active controller is isolated, then killed) is a negative control: the run must
end ``valid``, the command exit 0 and say "reproduced 1 of 1", the run's
test.json carry the scenario block and its report.html the scenario panel. The
cluster (``scn-it``) is removed by the command itself (no ``--keep-cluster``).
Slow (about two minutes of a real run): default CI keeps its 25-minute budget, and
``insync catalogue`` runs every scenario end to end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

INSYNC = str(Path(sys.executable).with_name("insync"))
CLUSTER = "scn-it"


def test_controller_failover_on_4_1_is_valid_and_says_so(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = subprocess.run(
        [INSYNC, "scenario", "run", "controller-failover", "--kafka-version", "4.1",
         "--runs", "1", "--results-dir", str(results), "--cluster-name", CLUSTER],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "reproduced 1 of 1 (as expected)" in done.stdout
    assert f"removed cluster '{CLUSTER}'" in done.stdout
    (run_dir,) = (results / "scenario-controller-failover-4.1.x").iterdir()
    test = json.loads((run_dir / "test.json").read_text())
    assert test["scenario"]["name"] == "controller-failover"
    assert test["scenario"]["expected"]["valid"] is True
    assert "controller-failover" in (run_dir / "report.html").read_text()
