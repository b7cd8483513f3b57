"""The framing and lifecycle attacks and the keyless ones in their short form, as CI runs
them: the real harness (loadtests.attack) against a real server in a 1 GiB memory limit (a
cgroup where this process may make one, else RLIMIT_AS), each attack asserting that the server
lives, none of its probe's requests fails, 95% of them are answered 2xx, and none is refuted
(a refused body read on, /metrics grown past 2,000 series); the probe's p99 is printed, not
judged (a time depends on the CPU); and abandoned analyses, which must leave neighbour queries
answered. The long run, every attack together and memory after it: `python -m loadtests.attack`
(docs/operations.md)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from loadtests import keyless
from loadtests.attacks import ABANDONED_EVALUATIONS, Attack, framing_and_lifecycle


def run_short(names: list[str]) -> None:
    """The named attacks in short, one round; each must PASS."""
    command = [sys.executable, "-m", "loadtests.attack", "--seconds", "1.5", "--rounds", "1",
               "--memory-mib", "1024", "--no-latency-bound", "--only", *names]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    passed = [line for line in result.stdout.splitlines() if line.startswith("PASS")]
    assert len(passed) == len(names), report


@pytest.mark.slow
@pytest.mark.parametrize("group", [framing_and_lifecycle, keyless.catalogue])
def test_the_attacks_leave_the_server_answering(group: Callable[[float], list[Attack]]) -> None:
    run_short([attack.name for attack in group(1.0)])


@pytest.mark.slow
def test_abandoned_analyses_leave_neighbour_queries_answered() -> None:
    run_short([ABANDONED_EVALUATIONS])
