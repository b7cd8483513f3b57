"""/docs in a real browser, offline: Swagger UI from the package, under the explorer's CSP,
and "Try it out" sends each operation's example, a valid request.

Before, /docs was FastAPI's page, which loads Swagger UI's script and styles from a CDN (and a
favicon from fastapi.tiangolo.com): a blank page without internet. The example of a request was
every field filled at once, which the service refuses with 422.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Request, expect

from tests.explorer.conftest import open_explorer

pytestmark = pytest.mark.slow


def test_the_docs_render_from_the_server_alone(page: Page, base_url: str) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{base_url}/docs")
    page.wait_for_selector(".opblock-summary-path[data-path='/v1/tables/{table}/neighbors']")
    operations = page.locator(".opblock").count()
    assert operations >= 17  # every query, table, limits, health and admin route
    assert requested and all(url.startswith(base_url) for url in requested), requested
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_try_it_out_sends_a_valid_example(page: Page, base_url: str) -> None:
    sent: list[Request] = []
    page.on("request", lambda request: sent.append(request))
    page.goto(f"{base_url}/docs")
    operation = page.locator("#operations-search-neighbors_v1_tables__table__neighbors_post")
    operation.locator(".opblock-summary").click()
    operation.locator(".try-out__btn").click()
    operation.locator("input[placeholder='table']").fill("minilm")
    operation.locator(".execute").click()
    status = operation.locator(".live-responses-table .response .response-col_status").first
    assert status.inner_text().strip() == "200"
    body = next(r for r in sent if r.url.endswith("/v1/tables/minilm/neighbors")).post_data
    assert body is not None and '"token": "king"' in body
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_the_explorers_link_reaches_the_docs_and_the_python_client(
    page: Page, base_url: str
) -> None:
    open_explorer(page, base_url, "?table=lee")
    link = page.get_by_role("link", name="API & Python client")
    link.click()
    page.wait_for_url(f"{base_url}/docs")
    description = page.locator(".info .description")
    expect(description).to_contain_text("Python client")
    expect(description).to_contain_text('client.neighbors("minilm", "king", k=3)')
    expect(description).to_contain_text("docs/client.md")
    page.goto(f"{base_url}/explorer/training")
    expect(page.get_by_role("link", name="API & Python client")).to_have_attribute(
        "href", "../docs"
    )
