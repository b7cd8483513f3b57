"""CI runs benchmarks/request_files.py (the count of the files a request passes through) on a
real server, so the count docs/architecture.md gives stays a command anyone can rerun."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_the_request_files_script_lists_the_files_and_functions_of_one_request() -> None:
    # Five windows: a file counts when all five entered it, so the loop's 0.1 s tick (about one
    # window in four) does not count.
    command = [sys.executable, "-m", "benchmarks.request_files", "--tokens", "queen", "prince",
               "castle", "duke", "empire", "--warm", "3", "--functions"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert out.startswith("command: python -m benchmarks.request_files --tokens queen prince")
    count = re.search(r"^(\d+) project files on every request's path:$", out, re.MULTILINE)
    assert count is not None, out
    listed = {
        file: functions
        for file, _, functions in (
            line.strip().partition(": ")
            for line in out.splitlines()
            if line.startswith("  service/")
        )
    }
    assert len(listed) == int(count.group(1))
    # The bound: a token's neighbours pass through at most 12 project files.
    assert len(listed) <= 12, out
    # The door, the search's pass and its exact rescoring run for every token query.
    assert "answer" in listed["service/operations/door.py"].split(", ")
    assert "candidates" in listed["service/engine/search/rows.py"].split(", ")
    assert "rescore" in listed["service/engine/search/rows.py"].split(", ")
    assert re.search(r"^\d+ distinct functions called in them$", out, re.MULTILINE)
