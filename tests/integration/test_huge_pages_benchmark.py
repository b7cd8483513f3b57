"""CI runs benchmarks/huge_pages.py on a small table, so its figures stay reproducible."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.synthetic_table import write_table

pytestmark = pytest.mark.slow


def test_the_huge_pages_benchmark_runs_on_a_small_table(tmp_path: Path) -> None:
    table = tmp_path / "small.bin"
    write_table(table, 2000, 16, seed=0)
    command = [sys.executable, "-m", "benchmarks.huge_pages", str(table), "--rounds", "1",
               "--seconds", "0.2"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    medians = [line for line in result.stdout.splitlines() if line.startswith("median ")]
    assert [line.split(":")[0] for line in medians] == [
        "median fill s",
        "median single q/s",
        "median batch-32 q/s",
    ]
    rounds = [line for line in result.stdout.splitlines() if line.startswith("round 1, ")]
    assert len(rounds) == 2 and all("single q/s" in line for line in rounds)
