"""Colour by a metadata column, and bookmarks that restore the same view, in a real browser."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.explorer.conftest import api, open_explorer

pytestmark = pytest.mark.slow

# The documented numeric scale (docs/explorer.md): viridis' five stops, linear between them.
SCALE = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"]


def scale_colour(t: float) -> str:
    position = min(max(t, 0.0), 1.0) * (len(SCALE) - 1)
    i = min(int(position), len(SCALE) - 2)
    a, b = ([int(stop[at : at + 2], 16) for at in (1, 3, 5)] for stop in (SCALE[i], SCALE[i + 1]))
    mixed = [round(x + (position - i) * (y - x)) for x, y in zip(a, b, strict=True)]
    return f"rgb({', '.join(map(str, mixed))})"


def test_colour_by_count_follows_the_lee_tables_counts(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=lee")
    page.select_option("#colour-by", "count")
    expect(page.locator("#plot")).to_have_attribute("data-colour", "count")
    counts = [
        p["metadata"]["count"]
        for p in api(base_url, "v1/tables/lee/projection", {"points": 5000})["points"]
    ]
    low, high = math.log10(min(counts)), math.log10(max(counts))
    assert max(counts) / min(counts) >= 100  # so the scale is logarithmic
    expected = [scale_colour((math.log10(c) - low) / (high - low)) for c in counts]
    assert page.evaluate("window.explorer.plot.colours") == expected
    legend = page.locator("#colour-legend .scale")
    expect(legend).to_have_attribute("data-low", str(min(counts)))
    expect(legend).to_have_attribute("data-high", str(max(counts)))
    expect(legend).to_contain_text("count, log scale")
    page.check("#size-by-count")
    sizes = page.evaluate("Array.from(window.explorer.plot.sizes)")
    by_count = [size for _, size in sorted(zip(counts, sizes, strict=True))]
    assert by_count == sorted(by_count) and by_count[0] < by_count[-1]
    assert "color=count" in page.url and "size=count" in page.url


def picture(page: Page) -> str:
    """The picture as drawn (the canvas's own pixels, as a PNG data URL), pointer off it.

    The canvas's bitmap rather than a screenshot of the page: the page's compositing of the
    rounded box around it varies by a few anti-aliased corner pixels from one load to the next.
    """
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)
    return page.evaluate("document.getElementById('plot').toDataURL('image/png')")


def view_state(page: Page) -> str:
    return page.evaluate(
        "import('./explorer/static/panels/viewstate.js')"
        ".then(m => m.EXPLORER_LINK.query(window.explorer.state))"
    )


def set_up_a_view(page: Page, base: str) -> None:
    open_explorer(page, base, "?table=lee&points=1000&token=police")
    page.wait_for_selector("#neighbours li")
    page.select_option("#colour-by", "count")
    box = page.locator("#plot").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    expect(page).to_have_url(re.compile("camera="))  # a moment after the camera stops


def test_a_named_bookmark_restores_the_same_view(page: Page, base_url: str) -> None:
    set_up_a_view(page, base_url)
    state, shot = view_state(page), picture(page)
    assert "camera=" in state and "color=count" in state and "token=police" in state
    page.fill("#bookmark-name", "police zoomed")
    page.press("#bookmark-name", "Enter")
    expect(page.locator("#bookmarks li")).to_have_count(1)
    page.goto(f"{base_url}/explorer?table=minilm")
    page.wait_for_selector("#plot[data-plotted]")
    page.click("#bookmarks a.bookmark")
    page.wait_for_selector("#neighbours li")
    expect(page.locator("#neighbours-word")).to_have_text("police")
    assert view_state(page) == state
    assert picture(page) == shot
    page.click("#bookmarks .remove")
    expect(page.locator("#bookmarks li")).to_have_count(0)


def test_a_bookmark_file_loads_back_the_same_view(
    page: Page, base_url: str, tmp_path: Path
) -> None:
    set_up_a_view(page, base_url)
    state, shot = view_state(page), picture(page)
    with page.expect_download() as download:
        page.click("#bookmark-download")
    download.value.save_as(tmp_path / "view.json")
    saved = json.loads((tmp_path / "view.json").read_text())
    assert saved["format"] == "embedding-explorer-view" and saved["version"] == 1
    assert saved["state"]["table"] == "lee" and saved["state"]["color"] == "count"
    page.goto(f"{base_url}/explorer?table=minilm")
    page.wait_for_selector("#plot[data-plotted]")
    with page.expect_navigation():
        page.set_input_files("#bookmark-file", str(tmp_path / "view.json"))
    page.wait_for_selector("#neighbours li")
    assert view_state(page) == state
    assert picture(page) == shot
