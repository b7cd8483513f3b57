"""Never a blank plot: unknown tables, an empty table list and server errors each say so."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, Route, expect

pytestmark = pytest.mark.slow


def test_an_unknown_table_names_the_served_ones(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/explorer?table=nope&token=king")
    message = page.locator("#plot-message")
    expect(message).to_have_text(
        "No table named \u201cnope\u201d. Served tables: minilm, lee. Pick one above."
    )
    expect(page.locator("#message")).to_contain_text("No table named")
    # The picker names the wanted table rather than showing nothing.
    picker = page.locator("#table")
    expect(picker).to_have_value("nope")
    expect(picker.locator("option:checked")).to_have_text("nope (not served)")
    page.select_option("#table", "lee")
    page.wait_for_selector("#plot[data-plotted]")
    expect(message).to_be_hidden()


def test_an_empty_table_list_says_so(page: Page, base_url: str) -> None:
    # A server answers an empty list before its first table is loaded; shown here by
    # answering GET /v1/tables for it.
    page.route("**/v1/tables", lambda route: route.fulfill(json={"tables": []}))
    page.goto(f"{base_url}/explorer")
    expect(page.locator("#plot-message")).to_have_text(
        "This server serves no tables yet: nothing to explore."
    )


def test_a_server_error_is_reported(page: Page, base_url: str) -> None:
    def fail(route: Route) -> None:
        error = {
            "error": {"type": "InternalError", "message": "internal error; it has been logged"}
        }
        route.fulfill(status=500, content_type="application/json", body=json.dumps(error))

    page.route("**/projection", fail)
    page.goto(f"{base_url}/explorer")
    text = "The server failed (500 InternalError): internal error; it has been logged"
    expect(page.locator("#plot-message")).to_have_text(text)
    expect(page.locator("#message")).to_contain_text(text)


def test_an_unreachable_server_is_reported(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/explorer")
    page.wait_for_selector("#plot[data-plotted]")
    page.route("**/neighbors", lambda route: route.abort("connectionrefused"))
    page.fill("#search", "king")
    page.press("#search", "Enter")
    expect(page.locator("#message")).to_contain_text("The server could not be reached")
