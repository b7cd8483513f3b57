"""The text box: what the user types, split by the table's tokenizer, on the page and picture."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.explorer.conftest import api, open_explorer

pytestmark = pytest.mark.slow

SENTENCE = "Embeddings are lookup tables"


def marks(page: Page) -> list[dict]:
    return page.evaluate(
        "window.explorer.plot.marks.map(m => ({token: m.point.token, role: m.role, "
        "color: m.color, plotted: m.index >= 0}))"
    )


def test_typing_shows_the_split_pieces_coloured_and_placed(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&points=2000")
    page.locator("#split-input").press_sequentially(SENTENCE, delay=10)
    chips = page.locator("#split-pieces li")
    expect(chips).to_have_count(8)
    expected = api(base_url, "v1/tables/minilm/tokenize", {"text": SENTENCE})
    assert chips.evaluate_all("items => items.map(li => li.dataset.token)") == [
        piece["token"] for piece in expected["pieces"]
    ]
    assert chips.evaluate_all("items => items.map(li => Number(li.dataset.id))") == [
        piece["id"] for piece in expected["pieces"]
    ]
    # The text itself, cut at the pieces' offsets, each cut in its piece's colour.
    spans = page.locator("#split-text span.piece-text")
    assert spans.all_inner_texts() == ["Em", "bed", "ding", "s", "are", "look", "up", "tables"]
    expect(page.locator("#split-text")).to_have_text(SENTENCE)
    colours = spans.evaluate_all("spans => spans.map(s => getComputedStyle(s).color)")
    assert len(set(colours[:4])) == 4  # a word's pieces are told apart
    status = page.locator("#split-status")
    expect(status).to_contain_text("4 word(s), 8 piece(s)")
    expect(status).to_contain_text("\u201cEmbeddings\u201d (4 pieces)")
    placed = marks(page)
    assert [m["token"] for m in placed] == [p["token"] for p in expected["pieces"]]
    assert all(m["role"] == "piece" and m["color"] for m in placed)
    assert any(not m["plotted"] for m in placed)  # e.g. ##ding, beyond the first 2,000 rows
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_a_piece_opens_its_neighbours(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&points=2000")
    page.locator("#split-input").fill("running")
    page.locator("#split-input").press("Enter")
    expect(page.locator("#split-status")).to_contain_text("Every word is one row.")
    page.locator("#split-pieces button", has_text="running").click()
    expect(page.locator("#neighbours-word")).to_have_text("running")


def test_a_word_table_splits_by_vocabulary_and_names_unknown_words(
    page: Page, base_url: str
) -> None:
    open_explorer(page, base_url, "?table=lee")
    page.locator("#split-input").fill("police fire")
    page.locator("#split-input").press("Enter")
    expect(page.locator("#split-pieces li")).to_have_count(2)
    expect(page.locator("#split-status")).to_contain_text("Every word is one row.")
    page.locator("#split-input").fill("police zzzunknownzzz")
    page.locator("#split-input").press("Enter")
    expect(page.locator("#split-status")).to_have_text(
        "Not in table lee: \u201czzzunknownzzz\u201d."
    )
    expect(page.locator("#split-pieces li")).to_have_count(0)
