"""CI runs benchmarks/big_tables.py's code paths on a small table, so none goes untested."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_the_big_tables_benchmark_runs_on_a_small_table(tmp_path: Path) -> None:
    out = tmp_path / "big-tables.json"
    command = [sys.executable, "-m", "benchmarks.big_tables", "--dir", str(tmp_path / "work"),
               "--rows", "20000", "--width", "32", "--seconds", "1", "--rounds", "1",
               "--out", str(out), "--plot", str(tmp_path / "recall.png")]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["raw_load"]["ours"] > 0 and figures["ready"]["medians"]["serve"] > 0
    assert figures["bandwidth"]["passes"]["1"]["gb_per_second"] > 0
    assert {"hnsw", "ivf"} <= set(figures["builds"]) and figures["sweeps"]["hnsw"]
    assert figures["builds"]["hnsw"]["recall_at_10"] >= 0.95
    assert figures["bandwidth"]["worst_request_seconds"] > 0
    assert figures["hnsw_worst"]["batch"] == 32 and figures["hnsw_worst"]["one_query_seconds"] > 0
    for workers in ("1", "2"):
        run = figures["http"]["workers"][workers]
        assert run["neighbors"]["failures"] == 0 and run["healthz"]["failures"] == 0
        assert len(run["memory"]) == int(workers)
    assert not (tmp_path / "work" / "synthetic-20000-32.bin").exists()  # removed after use
