"""How long the explorer takes to open: navigation to the first frame with every point drawn.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.explorer_open [--runs 7]

Headless Chromium (harness/browser.py) against a real server on 127.0.0.1 serving MiniLM.
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

from harness.browser import CHROMIUM, chromium
from harness.machine import machine
from harness.server import running_server

POINTS = (1_000, 10_000, 20_000)


# Milliseconds from navigation start: the page's files loaded (DOMContentLoaded), the
# /projection answer received, the first frame with the points drawn.
TIMINGS = """() => {
  const mark = (name) => performance.getEntriesByName(name)[0].startTime;
  return [
    performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
    mark("explorer:projection"),
    mark("explorer:plotted"),
  ];
}"""


def open_once(browser: Browser, base: str, points: int) -> list[float]:
    """[files loaded, projection received, points drawn] in ms from navigation start."""
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    try:
        page = context.new_page()
        page.goto(f"{base}/explorer?table=minilm&points={points}")
        page.wait_for_selector(f'#plot[data-plotted="{points}"]', timeout=60_000)
        return [float(value) for value in page.evaluate(TIMINGS)]
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout
    print(f"command: {' '.join([os.path.basename(sys.executable), '-m', __spec__.name])}")
    print(f"machine: {machine()}; browser: {version.strip()}")
    with running_server() as base, chromium() as browser:
        cold = open_once(browser, base, 10_000)[-1]
        print(f"fresh server, 10,000 points (PCA fit included): {cold:.0f} ms")
        times: dict[int, list[list[float]]] = {n: [] for n in POINTS}
        for _ in range(runs):  # interleaved, so a noisy moment hits every size alike
            for points in POINTS:
                times[points].append(open_once(browser, base, points))
    print(f"\nwarm server, {runs} opens each, ms from navigation start (median of each):")
    print("    points   drawn (min-max)   files loaded   projection received")
    for points, runs_ in times.items():
        files, answer, drawn = (statistics.median(column) for column in zip(*runs_, strict=True))
        low, high = min(r[2] for r in runs_), max(r[2] for r in runs_)
        print(f"  {points:>8,} {drawn:7.0f} ({low:.0f}-{high:.0f}) {files:12.0f} {answer:14.0f}")
    print(f"load average after the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
