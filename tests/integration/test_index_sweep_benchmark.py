"""CI runs benchmarks/index_sweep.py on a small synthetic table, so the sweep behind the recall
plots stays runnable, and checks the plot's lines (drawn only with matplotlib, the bench extra)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.index_plot import lines_of
from benchmarks.synthetic_table import write_table

pytestmark = pytest.mark.slow


def test_the_sweep_measures_both_layouts_and_the_plot_draws_a_line_for_each(
    tmp_path: Path,
) -> None:
    table, out = tmp_path / "small.bin", tmp_path / "points.json"
    write_table(table, rows=20_000, width=32, seed=0)
    command = [sys.executable, "-m", "benchmarks.index_sweep", "--table", str(table),
               "--nlist", "64", "--pq-m", "16", "--nprobe", "4", "16", "--k-factor", "4",
               "--probe-margin", "2", "0.3", "--hnsw-ef", "--hnswsq-ef", "--ivf-nlist",
               "--ivfpq-nlist", "64", "--ivfpq-nprobe", "16", "--ivfpq-k-factor", "4",
               "--seconds", "0.2", "--row-major", "--per-call", "8", "--batched-rescoring",
               "--rounds", "2", "--out", str(out)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.startswith("command: python -m benchmarks.index_sweep ")
    points = json.loads(out.read_text())["points"]
    assert [(p["kind"], p["nprobe"], p["probe_margin"]) for p in points] == [
        ("fastscan", 4, 2), ("fastscan", 4, 0.3), ("fastscan", 16, 2), ("fastscan", 16, 0.3),
        ("ivfpq", 16, 2), ("ivfpq", 16, 0.3),
    ]  # fmt: skip
    ivfpq = points[-1]
    assert (ivfpq["nlist"], ivfpq["pq_m"], ivfpq["pq_bits"], ivfpq["k_factor"]) == (64, 8, 8, 4)
    for point in points:
        assert 0 <= point["recall_at_10"] <= 1
        assert point["queries_per_second"] > 0 and point["row_major_queries_per_second"] > 0
        # 8 queries a call (their answers checked against one a call's), and the batched path
        assert point["per_call"] == 8 and point["per_call_queries_per_second"] > 0
        assert point["batched_rescoring_queries_per_second"] > 0
    assert "| q/s batched rescoring |" in result.stdout and "(8 a call)" in result.stdout
    lines = lines_of(points)
    built = (("fastscan", 16), ("ivfpq", 8))  # kind, pq_m
    names = [f"{kind} nlist=64 M={m}, probe_margin={margin} (rescored exactly)"
             for kind, m in built for margin in ("2", "0.3")]  # fmt: skip
    assert set(lines) == {*names, *(name + ", layout rows" for name in names)}
    by_rows = [p["queries_per_second"] for p in lines[names[1] + ", layout rows"]]
    assert set(by_rows) <= {p["row_major_queries_per_second"] for p in points}
