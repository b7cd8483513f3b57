"""Issue 24's attacks in their short form, as CI runs them: the real harness (loadtests.attack)
against a real server in a 1 GiB memory limit (a cgroup where this process may make one, else
RLIMIT_AS), each attack asserting that the server lives, its probe's p99 stays under 1 s and
none of its requests fails. The long run, every attack together and memory after it:
`python -m loadtests.attack` (docs/operations.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from loadtests.attacks import ABANDONED_EVALUATIONS, issue_24


def run_short(names: list[str]) -> None:
    """The named attacks in short, one round; each must PASS."""
    command = [sys.executable, "-m", "loadtests.attack", "--seconds", "1.5", "--rounds", "1",
               "--memory-mib", "1024", "--only", *names]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    passed = [line for line in result.stdout.splitlines() if line.startswith("PASS")]
    assert len(passed) == len(names), report


@pytest.mark.slow
def test_issue_24s_attacks_leave_the_server_answering() -> None:
    run_short([attack.name for attack in issue_24(1.0)])


@pytest.mark.slow
def test_abandoned_analyses_leave_neighbour_queries_answered() -> None:
    run_short([ABANDONED_EVALUATIONS])
