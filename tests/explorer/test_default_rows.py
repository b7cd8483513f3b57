"""The explorer's default pictures are of words: /projection's "words", asked by the page.

MiniLM's first rows are [unusedN], single characters and ## pieces; the page's default request
plots the first whole-word rows instead, for PCA and for the UMAP and t-SNE run on them.
"""

from __future__ import annotations

import unicodedata

import pytest
from playwright.sync_api import Page, expect

from tests.explorer.conftest import api, open_explorer

pytestmark = pytest.mark.slow


def letters_only(token: str) -> bool:
    """MiniLM's word rule (docs/api.md), from Unicode's categories."""
    return len(token) >= 2 and all(unicodedata.category(c).startswith("L") for c in token)


def test_the_default_picture_is_the_first_words(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm")
    request = page.evaluate("window.explorer.request")
    assert request["selection"] == "words" and request["points"] == 5000
    expect(page.locator("#selection")).to_have_value("words")
    answer = api(base_url, "v1/tables/minilm/projection", {"points": 5000, "selection": "words"})
    drawn = page.evaluate("window.explorer.points.map(p => [p.token, p.x, p.y])")
    assert drawn == [[p["token"], p["x"], p["y"]] for p in answer["points"]]
    assert all(letters_only(token) for token, _, _ in drawn)
    expect(page.locator("#plot-caption")).to_contain_text(
        "5,000 of 30,522 rows plotted (the first whole-word rows"
    )
    assert "selection=" not in page.url  # the default stays out of the link
    page.wait_for_selector("#plot[data-suspects]")
    assert page.get_attribute("#plot", "data-suspects") == "0"  # left out with the unused rows
    page.select_option("#selection", "first")
    expect(page.locator("#plot-caption")).to_contain_text("(first rows)")
    assert "[unused0]" in page.evaluate("window.explorer.points.map(p => p.token)")


@pytest.mark.parametrize(
    "query", ["projection=umap&epochs=50", "projection=tsne&iterations=50&perplexity=10"]
)
def test_umap_and_tsne_lay_out_the_first_words(page: Page, base_url: str, query: str) -> None:
    open_explorer(page, base_url, f"?table=minilm&points=400&{query}")
    page.wait_for_selector('#plot[data-layout="done"]', timeout=60_000)
    answer = api(base_url, "v1/tables/minilm/projection", {"points": 400, "selection": "words"})
    ids = page.evaluate("window.explorer.points.map(p => p.id)")
    assert ids == [p["id"] for p in answer["points"]]
    assert all(letters_only(p["token"]) for p in answer["points"])
    expect(page.locator("#plot-caption")).to_contain_text("(the first whole-word rows")
    assert page.log.errors == []  # type: ignore[attr-defined]
