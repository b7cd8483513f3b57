"""The framing and lifecycle attacks in their short form, as CI runs them: the real harness
(loadtests.attack) against a real server in a 1 GiB memory limit (a cgroup where this process
may make one, else RLIMIT_AS), each attack asserting that the server lives, its probe's p99
stays under 1 s and none of its requests fails. The long run, every attack together and memory
after it: `python -m loadtests.attack` (docs/operations.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from loadtests.attacks import framing_and_lifecycle


@pytest.mark.slow
def test_the_framing_and_lifecycle_attacks_leave_the_server_answering() -> None:
    names = [attack.name for attack in framing_and_lifecycle(1.0)]
    command = [sys.executable, "-m", "loadtests.attack", "--seconds", "1.5", "--rounds", "1",
               "--memory-mib", "1024", "--only", *names]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    passed = [line for line in result.stdout.splitlines() if line.startswith("PASS")]
    assert len(passed) == len(names), report
