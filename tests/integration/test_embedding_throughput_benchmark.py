"""CI runs benchmarks/embedding_throughput.py for a second a scenario, so it stays runnable.

Only that it runs and reports every figure: the goals are measured by the script itself, on a
quiet machine, never asserted here (timings belong to benchmarks, not to the suite).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_the_embedding_benchmark_reports_the_library_the_server_and_the_worst_cases() -> None:
    command = [sys.executable, "-m", "benchmarks.embedding_throughput", "--seconds", "1"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert out.startswith("command: python -m benchmarks.embedding_throughput --seconds 1\n")
    assert re.search(r"^machine: \d+ cores, .+", out, re.M)
    assert re.search(r"WordLlama embed, 1 core\s+[\d,]+ texts/s", out)
    served = re.findall(r"req/s .* failures (\d+)$", out, re.M)
    assert served == ["0", "0", "0"]  # /healthz, one text, batches of 64: nothing refused
    assert len(re.findall(r"best of 3 +\d+ ms", out)) == 3
    assert re.search(r"batches of 64 over HTTP / library in-process: [\d.]+x", out)
    assert re.search(r"single-text req/s / /healthz req/s: \d+%", out)
