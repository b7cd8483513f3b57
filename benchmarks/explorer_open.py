"""How long the explorer takes to open: navigation to the first frame with every point drawn.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.explorer_open [--runs 7]

Headless Chromium (benchmarks/browser.py) against a real server on 127.0.0.1 serving MiniLM.
Each run is a new browser context (no cached files) opening
/explorer?table=minilm&points=N; the time is the page's own `explorer:plotted` mark
(performance.mark after the frame that drew the points), measured from navigation start.
The first open of a fresh server also pays for the PCA fit (once per table load) and the
server's first requests; it is reported on its own, then warm opens side by side by N.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from playwright.sync_api import Browser

from benchmarks.browser import CHROMIUM, chromium
from loadtests.server import running_server

POINTS = (1_000, 10_000, 20_000)


def open_once(browser: Browser, base: str, points: int) -> float:
    """Milliseconds from navigation start to the first frame with the points drawn."""
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    try:
        page = context.new_page()
        page.goto(f"{base}/explorer?table=minilm&points={points}")
        page.wait_for_selector(f'#plot[data-plotted="{points}"]', timeout=60_000)
        mark = "performance.getEntriesByName('explorer:plotted')[0].startTime"
        return float(page.evaluate(mark))
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout
    print(f"command: {' '.join([os.path.basename(sys.executable), '-m', __spec__.name])}")
    print(f"machine: {os.cpu_count()} cores; browser: {version.strip()}")
    with running_server() as base, chromium() as browser:
        cold = open_once(browser, base, 10_000)
        print(f"fresh server, 10,000 points (PCA fit included): {cold:.0f} ms")
        times: dict[int, list[float]] = {n: [] for n in POINTS}
        for _ in range(runs):  # interleaved, so a noisy moment hits every size alike
            for points in POINTS:
                times[points].append(open_once(browser, base, points))
    print(f"\nwarm server, {runs} opens each (ms): median, min, max")
    for points, values in times.items():
        print(
            f"  {points:>6,} points: {statistics.median(values):6.0f} "
            f"{min(values):6.0f} {max(values):6.0f}"
        )


if __name__ == "__main__":
    main()
