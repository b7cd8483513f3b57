"""Wall-clock runs of a piece of work, for the benchmarks' figures."""

from __future__ import annotations

import time
from collections.abc import Callable


def run_times(work: Callable[[], object], runs: int) -> list[float]:
    """The seconds each of `runs` runs of `work` took, in order."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return times
