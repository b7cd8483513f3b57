"""The explorer on a Llama-shaped table: readable byte-level labels, neighbours, the size table."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from harness.server import running_server
from tests.explorer.conftest import api, open_explorer
from tests.language_models import PADDED_ROWS, TOKENS, write_llama

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = write_llama(tmp_path_factory.mktemp("llama") / "llama").folder
    tables = [{"name": "llama", "path": str(folder)}]
    with running_server({"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}) as base:
        yield base


def test_the_header_shows_the_size_table(page: Page, llama_url: str) -> None:
    open_explorer(page, llama_url, "?table=llama")
    facts = page.locator("#table-facts")
    expect(facts).to_contain_text(f"{PADDED_ROWS:,} rows \u00d7 16 dimensions")
    expect(facts).to_contain_text(f"{PADDED_ROWS - TOKENS} padding rows")
    expect(facts).to_contain_text("untied head lm_head.weight")
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_labels_and_neighbours_are_readable(page: Page, llama_url: str) -> None:
    open_explorer(page, llama_url, "?table=llama&points=3000")
    page.fill("#search", "Ġthe")
    page.press("#search", "Enter")
    page.wait_for_selector("#neighbours li")
    expected = api(llama_url, "v1/tables/llama/neighbors", {"token": "Ġthe", "k": 8})
    shown = page.eval_on_selector_all(
        "#neighbours li",
        "items => items.map(li => [li.dataset.token, li.querySelector('.word').textContent])",
    )
    assert [token for token, _ in shown] == [n["token"] for n in expected["neighbors"]]
    for (token, text), neighbour in zip(shown, expected["neighbors"], strict=True):
        readable = neighbour["text"]
        assert text == ("\u00b7" + readable[1:] if readable.startswith(" ") else readable)
        assert "Ġ" not in text or token == text
    marks = page.evaluate("window.explorer.plot.labels.placed.filter(l => l.mark).map(l => l.text)")
    assert "\u00b7the" in marks and "Ġthe" not in marks
