"""The explorer on a phone, in a real browser: 360 and 390 px wide, touch, twice the pixels.

The picture comes first and fills the width, nothing is wider than the screen (no element and
no line of text), every control is a finger's size, a pinch zooms and Fit frames every point.
Each test saves a screenshot of the page and prints its path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, CDPSession, Page, expect

from tests.explorer.conftest import TIMEOUT_MS, PageLog, labels_once_marked, open_explorer

pytestmark = pytest.mark.slow

HEIGHT = 780
# Apple's smallest touch target, and WCAG 2.5.5's.
FINGER = 44
# The canvas box's padding and border on each side.
PLOT_MARGIN = 9

# Every visible element, and every line of text, that reaches past the viewport's sides.
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const outside = (r) => r.width > 0 && (r.left < -0.5 || r.right > width + 0.5);
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "");
  const found = [];
  for (const element of document.body.querySelectorAll("*")) {
    if (outside(element.getBoundingClientRect())) found.push(name(element));
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim()) continue;
    range.selectNodeContents(node);
    if ([...range.getClientRects()].some(outside)) {
      found.push(`text "${node.textContent.trim().slice(0, 30)}" in ${name(node.parentElement)}`);
    }
  }
  return { found, scrollWidth: document.documentElement.scrollWidth, width };
}"""

# Every visible control smaller than a finger either way: [what, width, height].
SMALL_TARGETS = """finger => {
  const controls = document.querySelectorAll(
    "button, select, input:not([type=checkbox]):not([type=file]), a[href], .file-button, " +
    "label:has(> input[type=checkbox])");
  const small = [];
  for (const control of controls) {
    const box = control.getBoundingClientRect();
    if (box.width === 0 || control.closest("dialog:not([open])")) continue;
    if (box.width < finger || box.height < finger) {
      const what = control.id || control.textContent.trim().slice(0, 20) || control.tagName;
      small.push([what, Math.round(box.width), Math.round(box.height)]);
    }
  }
  return small;
}"""


@pytest.fixture
def phone(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A phone-sized touch tab, `request.param` CSS pixels wide (390 unless parametrised)."""
    width = getattr(request, "param", 390)
    context = browser.new_context(
        viewport={"width": width, "height": HEIGHT},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    tab.log = PageLog(tab)  # type: ignore[attr-defined]
    yield tab
    context.close()


def save(page: Page, folder: Path, name: str) -> None:
    """The whole page as a PNG in `folder`, its path printed (pytest -s shows it)."""
    path = folder / name
    page.screenshot(path=str(path), full_page=True)
    print(f"\nscreenshot: {path}")


def rect(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


@pytest.mark.parametrize("phone", [360, 390], indirect=True)
def test_the_picture_comes_first_at_full_width_and_nothing_overflows(
    phone: Page, base_url: str, tmp_path: Path
) -> None:
    open_explorer(phone, base_url, "?table=minilm&token=king")
    phone.wait_for_selector("#neighbours li")
    labels_once_marked(phone, ["king", "queen"])
    phone.fill("#split-input", "An unbelievably long sentence to split into its pieces")
    phone.wait_for_selector("#split-pieces li")
    width = phone.evaluate("document.documentElement.clientWidth")
    plot = rect(phone, "#plot")
    assert plot["width"] >= width - 2 * PLOT_MARGIN
    assert plot["height"] >= plot["width"] - 1  # square: the whole cloud at the page's width
    drawn = phone.evaluate(
        "(c => [c.width, c.height, window.explorer.plot.view.width, devicePixelRatio])"
        "(window.explorer.plot.canvas)"
    )
    assert drawn[0] == round(drawn[2] * drawn[3]) and drawn[2] == pytest.approx(plot["width"])
    panels = rect(phone, "aside")
    assert panels["y"] >= plot["y"] + plot["height"] and panels["width"] >= width - 1
    caption = rect(phone, "#plot-caption")
    assert caption["width"] >= width - 2 * PLOT_MARGIN
    overflowing = phone.evaluate(OVERFLOWING)
    assert overflowing["found"] == [] and overflowing["scrollWidth"] == width
    assert phone.evaluate(SMALL_TARGETS, FINGER) == []
    assert phone.log.errors == []  # type: ignore[attr-defined]
    save(phone, tmp_path, f"explorer-{width}px.png")


def touch(session: CDPSession, kind: str, points: list[tuple[float, float]]) -> None:
    """One touch event of the real input pipeline (Chromium's own, not a synthetic DOM event)."""
    touch_points = [{"x": x, "y": y, "id": i} for i, (x, y) in enumerate(points)]
    session.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": touch_points})


def pinch(session: CDPSession, centre: tuple[float, float], start: float, end: float) -> None:
    """Two fingers on either side of `centre`, `start` then `end` pixels apart."""
    x, y = centre

    def fingers(apart: float) -> list[tuple[float, float]]:
        return [(x - apart / 2, y), (x + apart / 2, y)]

    touch(session, "touchStart", fingers(start))
    for step in range(1, 11):
        touch(session, "touchMove", fingers(start + (end - start) * step / 10))
    touch(session, "touchEnd", [])


def view(page: Page) -> list[Any]:
    return page.evaluate(
        "(p => [p.view.scale, p.view.centerX, p.view.centerY, p.fitted])(window.explorer.plot)"
    )


def test_a_pinch_zooms_a_tap_chooses_and_fit_frames_every_point(
    phone: Page, base_url: str, tmp_path: Path
) -> None:
    open_explorer(phone, base_url, "?table=minilm")
    plot = rect(phone, "#plot")
    centre = (plot["x"] + plot["width"] / 2, plot["y"] + plot["height"] / 2)
    spot = phone.evaluate(
        "t => window.explorer.plot.screenOf(window.explorer.points["
        "window.explorer.indexOfToken.get(t)])",
        "queen",
    )
    phone.touchscreen.tap(plot["x"] + spot["x"], plot["y"] + spot["y"])
    expect(phone.locator("#neighbours-word")).to_have_text("queen")
    fitted = view(phone)
    under = "([x, y]) => (v => [v.dataX(x), v.dataY(y)])(window.explorer.plot.view)"
    middle = [centre[0] - plot["x"], centre[1] - plot["y"]]
    before = phone.evaluate(under, middle)
    session = phone.context.new_cdp_session(phone)
    pinch(session, centre, 60, 180)
    zoomed = view(phone)
    # Three times as far apart: three times the scale, around the fingers' middle.
    assert zoomed[0] == pytest.approx(3 * fitted[0], rel=1e-6) and zoomed[3] is False
    assert phone.evaluate(under, middle) == pytest.approx(before, abs=1e-9)
    phone.wait_for_function("() => location.search.includes('camera=')")  # the link keeps it
    save(phone, tmp_path, "explorer-pinched.png")
    phone.tap("#fit-view")
    assert view(phone) == pytest.approx(fitted)
    assert phone.log.errors == []  # type: ignore[attr-defined]
