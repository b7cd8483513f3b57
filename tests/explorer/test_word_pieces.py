"""The explorer on SmolLM2 as it ships: words typed and shown as people write them.

`king` typed is the word `Ġking`, not the piece `king` inside "s|king"; "·king" (how the page
shows the word) reads back as " king"; the stored token `Ġking` still finds itself. The JSON
API is the oracle for every list.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from harness.server import running_server
from tests.explorer.conftest import api, open_explorer
from tests.language_models import smollm2

pytestmark = pytest.mark.slow

SHOWN = "items => items.map(li => [li.dataset.token, li.querySelector('.word').textContent])"


@pytest.fixture(scope="module")
def smollm2_url() -> Iterator[str]:
    tables = [{"name": "smollm2", "path": str(smollm2())}]
    with running_server({"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}) as base:
        yield base


def shown_as_words(answer: dict) -> list[list[str]]:
    """The API's neighbours as the page should list them: token, and its text with a dot for
    the leading space."""
    return [
        [n["token"], n["text"].replace(" ", "\u00b7", 1) if n["text"][:1] == " " else n["text"]]
        for n in answer["neighbors"]
    ]


@pytest.mark.parametrize("typed", ["king", "\u00b7king", "Ġking"])
def test_a_typed_word_lists_the_words_neighbours(page: Page, smollm2_url: str, typed: str) -> None:
    open_explorer(page, smollm2_url, "?table=smollm2")
    page.fill("#search", typed)
    page.press("#search", "Enter")
    page.wait_for_selector("#neighbours li")
    expected = api(smollm2_url, "v1/tables/smollm2/neighbors", {"text": "king", "k": 8})
    assert expected["matched"] == {"king": "Ġking"}
    shown = page.eval_on_selector_all("#neighbours li", SHOWN)
    assert shown == shown_as_words(expected)
    assert [text for _, text in shown[:3]] == ["\u00b7King", "King", "\u00b7kings"]
    expect(page.locator("#neighbours-word")).to_have_text("\u00b7king")
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_label_search_lists_the_word_first_as_it_reads(page: Page, smollm2_url: str) -> None:
    # The first rows, not the default whole words: the piece `king` (row 644) is plotted too.
    open_explorer(page, smollm2_url, "?table=smollm2&selection=first")
    page.fill("#search", "king")
    page.wait_for_selector("#matches li")
    buttons = page.locator("#matches li button")
    expect(buttons.first).to_have_text("\u00b7king")
    expect(buttons.first).to_have_attribute("title", "Ġking")
    assert "king" in buttons.all_text_contents()  # the piece inside a word, listed after


def test_a_word_of_several_pieces_says_so(page: Page, smollm2_url: str) -> None:
    open_explorer(page, smollm2_url, "?table=smollm2")
    page.fill("#search", "zzyzxq")
    page.press("#search", "Enter")
    split = api(smollm2_url, "v1/tables/smollm2/tokenize", {"text": "zzyzxq"})
    assert len(split["pieces"]) > 1
    expect(page.locator("#search-status")).to_contain_text(
        f"\u201czzyzxq\u201d is {len(split['pieces'])} pieces in table smollm2"
    )


def test_the_analogy_takes_words(page: Page, smollm2_url: str) -> None:
    open_explorer(page, smollm2_url, "?table=smollm2")
    for box, word in zip("abc", ["king", "man", "woman"], strict=True):
        page.fill(f"#analogy-{box}", word)
    page.click("#analogy-form button[type=submit]")
    page.wait_for_selector("#analogy-answers li")
    body = {"positive": ["Ġking", "Ġwoman"], "negative": ["Ġman"], "k": 8}
    expected = api(smollm2_url, "v1/tables/smollm2/analogy", body)
    shown = page.eval_on_selector_all("#analogy-answers li", SHOWN)
    assert shown == shown_as_words(expected)
    assert shown[0] == ["Ġqueen", "\u00b7queen"]
    assert page.log.errors == []  # type: ignore[attr-defined]
