"""Screenshots of Watch training and Drift for the README, from a real server and Chromium.

    .venv/bin/python -m harness.training_screenshots [--run DIR] [--out docs]

Serves a train-demo run (trained here with the defaults unless --run names one) and writes
training-demo.png (checkpoint 2, the end of the first epoch: the rare rows, amber, still near
the centre) and training-drift.png (checkpoint 0 against the last, `war` searched).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from playwright.sync_api import Browser

from harness.browser import chromium
from harness.server import running_server
from service.cli.train_demo import DemoOptions, train_demo

VIEWPORT = {"width": 1400, "height": 860}


def shoot(run: Path, out: Path) -> None:
    tables = [{"name": "demo", "checkpoints": str(run)}]
    env = {"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}
    with running_server(env) as base, chromium() as browser:
        take(browser, base, out)
    print(f"wrote {out / 'training-demo.png'} and {out / 'training-drift.png'}")


def take(browser: Browser, base: str, out: Path, table: str = "demo", word: str = "war") -> None:
    """Both screenshots of the checkpoint set served as `table` at `base`, into `out`."""
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.goto(f"{base}/explorer/training?table={table}")
        page.wait_for_selector("#plot[data-plotted]")
        page.locator("#checkpoint").fill("2")
        page.wait_for_selector('#plot[data-checkpoint="2"]', state="attached")
        page.wait_for_timeout(300)  # the frame after the last mark
        page.screenshot(path=str(out / "training-demo.png"))
        page.click("#tab-drift")
        page.wait_for_selector("#most-moved li")
        page.locator("#drift-word").fill(word)
        page.locator("#drift-word").press("Enter")
        page.wait_for_selector("#neighbours-before li")
        page.wait_for_timeout(300)
        page.screenshot(path=str(out / "training-drift.png"))
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="an existing train-demo run")
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        run = args.run
        if run is None:
            run = Path(folder) / "run"
            train_demo(run, DemoOptions())
        shoot(run, args.out)


if __name__ == "__main__":
    main()
