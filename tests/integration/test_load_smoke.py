"""The Locust smoke run: a real server, the hot-path mix, zero failures, SLOs met."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from loadtests.run import RESULTS

pytestmark = pytest.mark.slow


def test_locust_smoke_run_passes_its_slos() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "loadtests.run", "--smoke"],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(RESULTS / "smoke_stats.csv", newline="") as handle:
        rows = {row["Name"]: row for row in csv.DictReader(handle)}
    total = rows["Aggregated"]
    assert int(total["Request Count"]) > 100
    assert int(total["Failure Count"]) == 0
    assert {"neighbors:token", "neighbors:vector", "analogy", "score"} <= set(rows)
    assert (RESULTS / "smoke.html").stat().st_size > 0
