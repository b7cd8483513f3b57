"""Behind API keys: the page asks once per tab, sends the key as Bearer, and serves two tables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from harness.server import running_server
from tests.explorer.conftest import api, tables_env

pytestmark = pytest.mark.slow
KEY = "explorer-test-key"


@pytest.fixture(scope="module")
def keyed_url(lee_folder: Path) -> Iterator[str]:
    env = {**tables_env(lee_folder), "EMBEDDING_SERVICE_API_KEYS": f'["{KEY}"]'}
    with running_server(env) as base:
        yield base


def enter_key(page: Page, key: str) -> None:
    dialog = page.locator("#key-dialog")
    expect(dialog).to_be_visible()
    page.fill("#key-input", key)
    page.click("#key-form button[type=submit]")


def test_the_page_asks_for_a_key_once_and_sends_it(page: Page, keyed_url: str) -> None:
    page.goto(f"{keyed_url}/explorer?table=lee&token=police")
    enter_key(page, "not-the-key")
    expect(page.locator("#key-rejected")).to_be_visible()
    enter_key(page, KEY)
    page.wait_for_selector("#plot[data-plotted]")
    expect(page.locator("#table option")).to_have_count(2)
    expected = api(keyed_url, "v1/tables/lee/neighbors", {"token": "police", "k": 8}, key=KEY)
    page.wait_for_selector("#neighbours li")
    shown = page.eval_on_selector_all(
        "#neighbours li", "items => items.map(li => li.dataset.token)"
    )
    assert shown == [n["token"] for n in expected["neighbors"]]
    assert page.evaluate("sessionStorage.getItem('embedding-explorer.api-key')") == KEY
    # Kept for the tab: a reload, another table and a search ask nothing.
    page.reload()
    page.wait_for_selector("#plot[data-plotted]")
    page.select_option("#table", "minilm")
    expect(page.locator("#plot")).to_have_attribute("data-plotted", "5000")
    page.fill("#search", "king")
    page.press("#search", "Enter")
    expect(page.locator("#neighbours-word")).to_have_text("king")
    expect(page.locator("#key-dialog")).to_be_hidden()


def test_a_new_tab_asks_again_and_cancelling_explains(browser: Browser, keyed_url: str) -> None:
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.goto(f"{keyed_url}/explorer")
        expect(tab.locator("#key-dialog")).to_be_visible()
        tab.click("#key-cancel")
        expect(tab.locator("#plot-message")).to_contain_text("This server needs an API key")
    finally:
        context.close()


def test_the_training_page_asks_for_the_key_too(page: Page, keyed_url: str) -> None:
    # Both pages share keys.js, which adds the dialog to whichever page needs a key.
    page.goto(f"{keyed_url}/explorer/training?table=lee")
    enter_key(page, KEY)
    expect(page.locator("#table option")).to_have_count(2)
    expect(page.locator("#key-dialog")).to_be_hidden()
