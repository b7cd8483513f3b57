"""Hover, zoom, pan, click, analogies and switching tables, as a person does them."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.explorer.conftest import (
    api,
    first_held,
    hold_requests,
    labels_once_marked,
    open_explorer,
)

pytestmark = pytest.mark.slow


def screen_of(page: Page, token: str) -> dict[str, float]:
    """Where the page draws a plotted token, in page coordinates."""
    box = page.locator("#plot").bounding_box()
    assert box is not None
    spot = page.evaluate(
        "token => window.explorer.plot.screenOf("
        "window.explorer.points[window.explorer.indexOfToken.get(token)])",
        token,
    )
    return {"x": box["x"] + spot["x"], "y": box["y"] + spot["y"]}


def view(page: Page) -> list[float]:
    return page.evaluate("(v => [v.scale, v.centerX, v.centerY])(window.explorer.plot.view)")


def test_hover_shows_token_id_norm_and_the_count_column(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=lee")
    expect(page.locator("#labels")).to_have_value("metadata:count")
    point = api(base_url, "v1/tables/lee/projection", {"selection": {"tokens": ["police"]}})
    police = point["points"][0]
    spot = screen_of(page, "police")
    page.mouse.move(spot["x"], spot["y"])
    card = page.locator("#tooltip")
    expect(card).to_be_visible()
    expect(card.locator("strong")).to_have_text("police")
    text = card.inner_text()
    assert f"id\n{police['id']}" in text
    assert f"norm\n{police['norm']:.3f}" in text
    assert f"count\n{police['metadata']['count']}" in text


def test_wheel_zooms_and_drag_pans(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=lee")
    box = page.locator("#plot").bounding_box()
    assert box is not None
    middle = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    scale, x, y = view(page)
    page.mouse.move(*middle)
    page.mouse.wheel(0, -400)
    page.wait_for_timeout(100)
    zoomed = view(page)
    assert zoomed[0] > scale * 1.5
    page.mouse.down()
    page.mouse.move(middle[0] + 120, middle[1] + 60, steps=5)
    page.mouse.up()
    panned = view(page)
    assert panned[0] == zoomed[0] and panned[1] < zoomed[1] and panned[2] > zoomed[2]
    # Double-click where no point is (a corner): the view fits every point again.
    page.mouse.dblclick(box["x"] + 3, box["y"] + 3)
    assert view(page) == pytest.approx([scale, x, y])


def test_clicking_a_point_chooses_it(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&points=3100")
    spot = screen_of(page, "queen")
    page.mouse.click(spot["x"], spot["y"])
    expect(page.locator("#neighbours-word")).to_have_text("queen")
    assert "token=queen" in page.url


def test_the_analogy_lists_the_api_answers_and_places_the_result(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm")
    page.fill("#analogy-a", "king")
    page.fill("#analogy-b", "man")
    page.fill("#analogy-c", "woman")
    page.click("#analogy-form button[type=submit]")
    page.wait_for_selector("#analogy-answers li")
    expected = api(
        base_url,
        "v1/tables/minilm/analogy",
        {"positive": ["king", "woman"], "negative": ["man"], "k": 8, "method": "add"},
    )["neighbors"]
    shown = page.eval_on_selector_all(
        "#analogy-answers li", "items => items.map(li => [li.dataset.token, li.dataset.score])"
    )
    assert shown == [[n["token"], str(n["score"])] for n in expected]
    assert shown[0][0] == "queen"
    # The list comes first; the star follows once /lookup and /project have answered.
    expect(page.locator("#analogy-status")).to_contain_text("The star is a \u2212 b + c itself")
    roles = page.evaluate("window.explorer.plot.marks.map(m => m.role)")
    assert roles.count("result") == 1 and roles.count("term") == 3
    # The terms, the answers and the star are labelled, above the ordinary labels.
    wanted = ["king", "man", "woman", "king \u2212 man + woman", *(t for t, _ in shown)]
    labelled = {label["text"] for label in labels_once_marked(page, wanted) if label["mark"]}
    assert set(wanted) <= labelled


def test_switching_tables_keeps_the_page_working(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&token=king")
    page.wait_for_selector("#neighbours li")
    page.select_option("#table", "lee")
    expect(page.locator("#plot")).to_have_attribute("data-plotted", "1657")
    expect(page.locator("#table-facts")).to_contain_text("1,657 rows \u00d7 384 dimensions")
    expect(page.locator("#neighbours li")).to_have_count(0)
    assert "table=lee" in page.url and "token=" not in page.url
    page.fill("#search", "police")
    page.press("#search", "Enter")
    expect(page.locator("#neighbours-word")).to_have_text("police")
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_a_late_picture_of_the_table_left_is_not_drawn(page: Page, base_url: str) -> None:
    # Switch to minilm, hold its projection back, switch to lee: lee's picture is drawn, and
    # minilm's, answered afterwards, is dropped rather than drawn over it.
    open_explorer(page, base_url, "?table=lee")
    held = hold_requests(page, "**/v1/tables/minilm/projection")
    page.select_option("#table", "minilm")
    late = first_held(page, held)
    page.select_option("#table", "lee")
    plot = page.locator("#plot")
    expect(plot).to_have_attribute("data-plotted", "1657")
    with page.expect_response("**/v1/tables/minilm/projection"):
        late.continue_()
    page.wait_for_timeout(1000)  # ample for the late answer to be drawn, were it drawn
    expect(plot).to_have_attribute("data-plotted", "1657")
    assert page.evaluate("window.explorer.points.length") == 1657
    assert page.evaluate("window.explorer.table.name") == "lee" and "table=lee" in page.url
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_the_list_is_of_the_last_word_asked_whatever_answers_last(
    page: Page, base_url: str
) -> None:
    # king's answer is held back until queen's is shown (as a cached answer can overtake a
    # computed one); when king's arrives, the page still shows queen's neighbours and marks.
    open_explorer(page, base_url, "?table=minilm")
    held = hold_requests(page, "**/v1/tables/minilm/neighbors", '"king"')
    page.fill("#search", "king")
    page.press("#search", "Enter")
    late = first_held(page, held)
    page.fill("#search", "queen")
    page.press("#search", "Enter")
    expect(page.locator("#neighbours-word")).to_have_text("queen")
    expected = api(base_url, "v1/tables/minilm/neighbors", {"token": "queen", "k": 8})
    tokens = [n["token"] for n in expected["neighbors"]]
    with page.expect_response("**/v1/tables/minilm/neighbors"):
        late.continue_()
    page.wait_for_timeout(1000)  # ample for the late answer to be shown, were it shown
    expect(page.locator("#neighbours-word")).to_have_text("queen")
    listed = page.eval_on_selector_all(
        "#neighbours li", "items => items.map(li => li.dataset.token)"
    )
    assert listed == tokens
    marks = page.evaluate("window.explorer.plot.marks.map(m => m.point.token)")
    assert marks == ["queen", *tokens]
    assert "token=queen" in page.url
    assert page.log.errors == []  # type: ignore[attr-defined]
