"""CI runs benchmarks/layout_costs.py on a small table, so it stays runnable."""

from __future__ import annotations

import subprocess
import sys


def test_the_layout_costs_benchmark_measures_both_layouts() -> None:
    command = [sys.executable, "-m", "benchmarks.layout_costs", "--rows", "5000", "--width",
               "16", "--repeats", "2"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == "command: python -m benchmarks.layout_costs " + " ".join(command[3:])
    assert [line.split(":")[0] for line in lines[2:]] == [
        "gather 80 rows", "gather 1,280 rows", "exact pass, 1 direction(s)",
        "exact pass, 8 direction(s)", "exact pass, 16 direction(s)",
    ]  # fmt: skip
    assert all("by rows" in line and "by columns" in line for line in lines[2:])
