"""How long the explorer's UMAP of N MiniLM rows takes, and how fast the page answers meanwhile.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.explorer_umap \
        [--points 5000] [--runs 3]

Headless Chromium (harness/browser.py) against a real server on 127.0.0.1 serving MiniLM.
Each run is a new browser context opening /explorer?table=minilm&points=N (PCA), then choosing
UMAP in the Projection panel as a person would. "Ready" is from that choice to the page's own
`explorer:layout-done` mark (the last epoch's picture drawn), split at `explorer:layout-graph`
into the neighbour graph (batch /neighbors calls) and the worker's epochs. While it runs, a key
is typed into the search box every 150 ms; the browser's Event Timing entries (the measure
behind Interaction to Next Paint: from the key's timestamp to the next frame painted after its
handlers) give each input's latency. Entries under 16 ms are not reported by the browser and
count as 16 ms here, an upper bound. Long tasks (over 50 ms on the page's own thread, from
the Long Tasks API) tell the page's work from waits for a core on a busy machine.
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

# Keystrokes' latencies (Event Timing) and the layout marks, collected by the page itself.
WATCH_INPUT = """() => {
  window.latencies = [];
  window.longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.name === "keydown") window.latencies.push(entry.duration);
    }
  }).observe({ type: "event", durationThreshold: 16, buffered: false });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.longTasks.push(entry.duration);
  }).observe({ type: "longtask" });
}"""
MARKS = """() => {
  const at = (name) => performance.getEntriesByName(name).at(-1).startTime;
  return [at("explorer:layout-start"), at("explorer:layout-graph"), at("explorer:layout-done")];
}"""
TYPING_MS = 150


def run_once(browser: Browser, base: str, points: int) -> dict[str, float | list[float]]:
    """One UMAP: seconds to ready (graph, epochs) and each typed key's latency in ms."""
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    try:
        page = context.new_page()
        page.goto(f"{base}/explorer?table=minilm&points={points}")
        page.wait_for_selector(f'#plot[data-plotted="{points}"]', timeout=60_000)
        page.evaluate(WATCH_INPUT)
        page.select_option("#projection", "umap")
        page.click("#search")
        typed = 0
        while page.get_attribute("#plot", "data-layout") != "done":
            page.keyboard.press("a" if typed % 2 == 0 else "Backspace")
            typed += 1
            page.wait_for_timeout(TYPING_MS)
            if typed > 2000:
                raise RuntimeError("UMAP did not finish")
        start, graph, done = page.evaluate(MARKS)
        page.wait_for_timeout(100)  # the last keystroke's entry
        reported, long_tasks = page.evaluate("[window.latencies, window.longTasks]")
        latencies = reported + [16.0] * (typed - len(reported))
        return {
            "ready": (done - start) / 1000,
            "graph": (graph - start) / 1000,
            "epochs": (done - graph) / 1000,
            "latencies": latencies,
            "long_tasks": long_tasks,
        }
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout
    command = [os.path.basename(sys.executable), "-m", __spec__.name, *sys.argv[1:]]
    print(f"command: {' '.join(command)}")
    print(f"machine: {machine()}; browser: {version.strip()}")
    with running_server() as base, chromium() as browser:
        runs = [run_once(browser, base, args.points) for _ in range(args.runs)]
    print(f"\nUMAP of {args.points:,} MiniLM rows, {args.runs} runs (seconds from choosing UMAP):")
    print(
        "  run   ready   graph (/neighbors)   epochs (worker)   keys typed   latency max  p95"
        "   long tasks (longest)"
    )
    for n, run in enumerate(runs, 1):
        latencies = sorted(run["latencies"])  # type: ignore[arg-type]
        p95 = latencies[max(0, round(0.95 * len(latencies)) - 1)]
        print(
            f"  {n:>3} {run['ready']:7.2f} {run['graph']:12.2f} {run['epochs']:18.2f}"
            f" {len(latencies):12} {max(latencies):11.0f} ms {p95:4.0f} ms"
            f" {len(run['long_tasks']):8} ({max(run['long_tasks'], default=0):.0f} ms)"  # type: ignore[arg-type]
        )
    median = statistics.median(float(run["ready"]) for run in runs)  # type: ignore[arg-type]
    worst = max(max(run["latencies"]) for run in runs)  # type: ignore[type-var]
    print(f"median ready: {median:.2f} s; slowest input handled in {worst:.0f} ms")
    print(f"load average after the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
