"""``insync bench soak``'s own arithmetic (the run itself is real and slow: not here)."""

from __future__ import annotations

import os
from pathlib import Path

from harness.bench import soak
from harness.bench.soak import Sample


def samples(per_line: float, base_kb: int = 500_000) -> list[Sample]:
    return [Sample(t, base_kb + round(per_line * t * 1000 / 1024), 0, 0, t * 1000)
            for t in range(1, 21)]


def test_the_slope_is_bytes_of_rss_per_history_line_over_the_second_half() -> None:
    assert soak.slope(samples(0.0)) == 0.0
    growing = soak.slope(samples(300.0))
    assert growing is not None and abs(growing - 300.0) < 2
    warm_then_flat = [Sample(t, 100_000 * t, 0, 0, 1000 * t) for t in range(1, 11)] + [
        Sample(t, 1_000_000, 0, 0, 1000 * t) for t in range(11, 31)]
    assert soak.slope(warm_then_flat) == 0.0  # the warm-up is not counted
    assert soak.slope(samples(10.0)[:4]) is None  # too few samples to say
    drained = samples(0.0) + [Sample(t, 3_000_000, 0, 0, 20_000 + t) for t in range(21, 30)]
    assert soak.slope(drained, main_s=20) == 0.0  # the drain and the end are not counted
    assert (soak.slope(drained) or 0) > 0


def test_memory_and_history_are_read_as_the_bench_samples_them(tmp_path: Path) -> None:
    rss, hwm = soak.status_kb(os.getpid())
    assert 0 < rss <= hwm
    assert soak.status_kb(2**22 + 12345) == (0, 0)  # gone: no error
    history = tmp_path / "history.jsonl"
    history.write_bytes(b'{"a":1}\n' * 3)
    assert soak.count_lines(history) == (24, 3)
    assert soak.count_lines(None) == (0, 0)
