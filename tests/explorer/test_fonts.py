"""CJK labels in a real browser: drawn as glyphs from the page's font stack, not as boxes.

A browser without a font for a character draws it as an empty box, the same box for every such
character. The page's stack (explorer.css's --font, which the plot's labels read) ends in CJK
fonts; Debian's fonts-noto-cjk is installed by scripts/install-system-deps.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.explorer.conftest import labels_once_marked, open_explorer

pytestmark = pytest.mark.slow

# Ink (alpha) of `text` drawn in the labels' bold font, and its width; labels.js is the module
# the page loaded, so its font stack is the one the plot draws with.
GLYPHS = """async (texts) => {
  const { labelFonts } = await import(new URL("explorer/static/plot/labels.js", document.baseURI));
  const font = labelFonts().bold;
  const canvas = document.createElement("canvas");
  [canvas.width, canvas.height] = [48, 24];
  const ctx = canvas.getContext("2d");
  return texts.map((text) => {
    ctx.clearRect(0, 0, 48, 24);
    ctx.font = font;
    ctx.fillText(text, 4, 18);
    const alpha = ctx.getImageData(0, 0, 48, 24).data.filter((_, i) => i % 4 === 3);
    return { ink: Array.from(alpha), width: ctx.measureText(text).width };
  });
}"""


def test_cjk_labels_are_drawn_as_glyphs_not_boxes(
    page: Page, base_url: str, tmp_path: Path
) -> None:
    # 中 (middle) is a MiniLM row; its neighbours are CJK characters too.
    open_explorer(page, base_url, "?table=minilm&token=%E4%B8%AD")
    placed = labels_once_marked(page, ["中"])
    label = next(label for label in placed if label["text"] == "中" and label["mark"])
    middle, country, unassigned, also_unassigned = page.evaluate(
        GLYPHS, ["中", "国", "\u0378", "\u0379"]
    )
    # The check can tell boxes: two characters no font has are drawn alike.
    assert unassigned["ink"] == also_unassigned["ink"]
    # Two CJK characters are two different glyphs, each an ideograph's full em (12 px) wide.
    assert middle["ink"] != country["ink"] and sum(middle["ink"]) > 0
    assert middle["width"] == pytest.approx(12, abs=0.5)
    assert country["width"] == pytest.approx(12, abs=0.5)
    # The plot laid its label out at that width (its box is the text's width plus 3 px).
    assert label["box"]["right"] - label["box"]["left"] == pytest.approx(middle["width"] + 3)
    # The page's own text takes the same stack: the neighbours listed are CJK characters too.
    family = page.evaluate("getComputedStyle(document.querySelector('#neighbours')).fontFamily")
    assert "Noto Sans CJK SC" in family
    shot = tmp_path / "explorer-cjk.png"
    page.screenshot(path=str(shot))
    print(f"\nscreenshot: {shot}")
    assert page.log.errors == []  # type: ignore[attr-defined]
