"""Screenshots of the explorer for the docs, taken in headless Chromium from a real server.

    .venv/bin/python -m harness.explorer_screenshots [--out docs]

Writes explorer-minilm.png (the default table, `king` chosen), explorer-lee.png (the Lee
projector table of harness/lee_table.py, whose labels come from its count column, with
the norm-by-count chart of /diagnostics; suspect rows amber in both), explorer-umap.png
(UMAP of the Lee table on /neighbors' exact graph, seed 0, coloured and sized by count, `fire`
chosen) and explorer-phone.png (the default table on a 390 px touch screen, `king` chosen).
tests/explorer/test_screenshots.py regenerates them and compares them with docs/.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page

from harness.browser import chromium
from harness.lee_table import write_lee_table
from harness.server import running_server
from service.config import default_table

DESKTOP: dict[str, Any] = {"viewport": {"width": 1400, "height": 860}}
PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}
# name: (the explorer's query, the browser context it is taken in)
SHOTS = {
    "explorer-minilm.png": ("?table=minilm&token=king", DESKTOP),
    "explorer-lee.png": ("?table=lee&token=fire&points=2000", DESKTOP),
    "explorer-umap.png": (
        "?table=lee&token=fire&points=2000&projection=umap&color=count&size=count",
        DESKTOP,
    ),
    "explorer-phone.png": ("?table=minilm&token=king", PHONE),
}


def take(browser: Browser, base: str, out: Path) -> list[Path]:
    """Every screenshot of SHOTS from the server at `base` (serving minilm and lee) into `out`."""
    written = []
    for name, (query, device) in SHOTS.items():
        context = browser.new_context(**device)
        try:
            shoot(context.new_page(), f"{base}/explorer{query}", out / name)
        finally:
            context.close()
        written.append(out / name)
    return written


def shoot(page: Page, url: str, path: Path) -> None:
    """The page at `url` once its picture, neighbours, suspects (and layout) are drawn."""
    page.goto(url)
    page.wait_for_selector("#plot[data-plotted]")
    page.wait_for_selector("#neighbours li")
    page.wait_for_selector("#plot[data-suspects]")
    if "projection=" in url:
        page.wait_for_selector('#plot[data-layout="done"]', timeout=60_000)
    page.wait_for_timeout(300)  # the frame after the last mark
    page.screenshot(path=str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        tables = [
            {"name": "minilm", "path": str(default_table().path), "format": "huggingface"},
            {"name": "lee", "path": str(write_lee_table(Path(folder))), "format": "projector"},
        ]
        env = {"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}
        with running_server(env) as base, chromium() as browser:
            for path in take(browser, base, out):
                print(f"wrote {path}")


if __name__ == "__main__":
    main()
