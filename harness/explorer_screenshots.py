"""Screenshots of the explorer for the docs, taken in headless Chromium from a real server.

    .venv/bin/python -m harness.explorer_screenshots [--out docs]

Writes explorer-minilm.png (the default table, `king` chosen), explorer-lee.png (the Lee
projector table of harness/lee_table.py, whose labels come from its count column, with
the norm-by-count chart of /diagnostics; suspect rows amber in both) and explorer-umap.png
(UMAP of the Lee table on /neighbors' exact graph, seed 0, coloured and sized by count, `fire`
chosen). tests/explorer/test_screenshots.py regenerates them and compares them with docs/.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from playwright.sync_api import Browser

from harness.browser import chromium
from harness.lee_table import write_lee_table
from harness.server import running_server
from service.config import default_table

VIEWPORT = {"width": 1400, "height": 860}
SHOTS = {
    "explorer-minilm.png": "?table=minilm&token=king",
    "explorer-lee.png": "?table=lee&token=fire&points=2000",
    "explorer-umap.png": "?table=lee&token=fire&points=2000&projection=umap&color=count&size=count",
}


def take(browser: Browser, base: str, out: Path) -> list[Path]:
    """Every screenshot of SHOTS from the server at `base` (serving minilm and lee) into `out`."""
    page = browser.new_page(viewport=VIEWPORT)
    written = []
    try:
        for name, query in SHOTS.items():
            page.goto(f"{base}/explorer{query}")
            page.wait_for_selector("#plot[data-plotted]")
            page.wait_for_selector("#neighbours li")
            page.wait_for_selector("#plot[data-suspects]")
            if "projection=" in query:
                page.wait_for_selector('#plot[data-layout="done"]', timeout=60_000)
            page.wait_for_timeout(300)  # the frame after the last mark
            page.screenshot(path=str(out / name))
            written.append(out / name)
    finally:
        page.close()
    return written


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
