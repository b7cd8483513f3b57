"""CI runs benchmarks/load_memory.py on a small word2vec binary: the command stays runnable, and
a table read by rows takes no more memory than by columns (one copy of the rows, not two)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.synthetic_table import write_table

pytestmark = pytest.mark.slow


def test_a_table_loaded_by_rows_peaks_at_one_copy_like_by_columns(tmp_path: Path) -> None:
    table = tmp_path / "small.bin"
    write_table(table, rows=200_000, width=100, seed=0)  # 76 MiB of rows
    command = [sys.executable, "-m", "benchmarks.load_memory", str(table), "--rounds", "2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.startswith("command: python -m benchmarks.load_memory ")
    found = re.findall(r"layout (\w+): held by (\w+), .* \(([\d.]+)x the rows\)", result.stdout)
    assert len(found) == 4, result.stdout
    assert all(layout == held for layout, held, _ in found)
    peaks = {layout: 0.0 for layout, _, _ in found}
    for layout, _, ratio in found:
        peaks[layout] = max(peaks[layout], float(ratio))
    # A second copy made during the load would add 1x the rows (2.88x against 1.49x before).
    assert peaks["rows"] < peaks["columns"] + 0.25, result.stdout
