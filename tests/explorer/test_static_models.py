"""The explorer on WordLlama's static model: its rows like any table's, its pieces readable."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from harness.server import running_server
from service.config import default_static_table
from tests.explorer.conftest import api, open_explorer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wordllama_url() -> Iterator[str]:
    tables = [default_static_table().model_dump(mode="json")]
    with running_server({"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}) as base:
        yield base


def test_the_picture_and_neighbours_of_a_static_model(page: Page, wordllama_url: str) -> None:
    open_explorer(page, wordllama_url, "?table=wordllama&points=3000")
    expect(page.locator("#table-facts")).to_contain_text("32,000 rows \u00d7 256 dimensions")
    page.fill("#search", "\u2581king")
    page.press("#search", "Enter")
    page.wait_for_selector("#neighbours li")
    expected = api(wordllama_url, "v1/tables/wordllama/neighbors", {"token": "\u2581king", "k": 8})
    tokens = "items => items.map(li => li.dataset.token)"
    shown = page.eval_on_selector_all("#neighbours li", tokens)
    assert shown == [neighbour["token"] for neighbour in expected["neighbors"]]
    assert page.log.errors == []  # type: ignore[attr-defined]
