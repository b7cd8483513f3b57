"""Suspect rows on the page: amber points from /diagnostics, the panel, the count chart."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, Route, expect

from tests.explorer.conftest import api, open_explorer

pytestmark = pytest.mark.slow


def wait_for_suspects(page: Page) -> int:
    """How many plotted points the page flagged, once it has."""
    page.wait_for_selector("#plot[data-suspects]")
    return int(page.get_attribute("#plot", "data-suspects") or "-1")


def test_plotted_suspects_are_the_apis(page: Page, base_url: str) -> None:
    # The first rows hold MiniLM's suspects (its default rows, the words, leave them out).
    open_explorer(page, base_url, "?table=minilm&points=5000&selection=first")
    flagged = wait_for_suspects(page)
    answer = api(base_url, "v1/tables/minilm/diagnostics", {"limit": 1000})
    first = {"points": 5000, "selection": "first"}
    plotted = {p["id"] for p in api(base_url, "v1/tables/minilm/projection", first)["points"]}
    expected = {s["id"] for s in answer["suspects"]} & plotted
    shown = set(
        page.evaluate("[...window.explorer.plot.suspects].map(i => window.explorer.points[i].id)")
    )
    assert shown == expected and flagged == len(expected) > 0
    status = page.locator("#suspects-status")
    expect(status).to_contain_text(f"{answer['suspect_count']} suspects")
    expect(status).to_contain_text("unused reference rows")
    expect(page.locator("#count-chart")).to_be_hidden()  # MiniLM has no counts
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_suspects_are_drawn_in_amber(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&points=5000&selection=first")
    wait_for_suspects(page)
    spot = page.evaluate(
        """() => {
            const plot = window.explorer.plot;
            const [i] = window.explorer.plot.suspects;
            const rect = plot.canvas.getBoundingClientRect();
            return [plot.view.screenX(plot.xs[i]), plot.view.screenY(plot.ys[i]),
                    plot.canvas.width / rect.width];
        }"""
    )
    x, y, ratio = spot
    pixel = page.evaluate(
        f"Array.from(window.explorer.plot.ctx.getImageData({round(x * ratio)}, "
        f"{round(y * ratio)}, 1, 1).data)"
    )
    assert pixel[:3] == [0xF5, 0x9F, 0x00] or (pixel[0] > 200 and pixel[2] < 80), pixel


def test_the_count_chart_on_the_lee_table(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=lee")
    wait_for_suspects(page)
    chart = page.locator("#count-chart")
    expect(chart).to_be_visible()
    answer = api(base_url, "v1/tables/lee/diagnostics", {"limit": 1000})
    assert chart.get_attribute("data-bins") == str(len(answer["counts"]["bins"]))
    assert chart.get_attribute("data-suspects") == str(len(answer["suspects"]))
    rho = answer["counts"]["spearman_norm"]["rho"]
    expect(page.locator("#count-note")).to_contain_text(f"= {rho:.3f}")
    expect(page.locator("#suspects-status")).to_contain_text("lowest row norms")
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_a_diagnostics_failure_leaves_the_picture(page: Page, base_url: str) -> None:
    def overloaded(route: Route) -> None:
        error = {"error": {"type": "Overloaded", "message": "overloaded: try again"}}
        route.fulfill(status=429, content_type="application/json", body=json.dumps(error))

    page.route("**/diagnostics", overloaded)
    open_explorer(page, base_url)
    expect(page.locator("#suspects-status")).to_contain_text("Suspect rows unavailable")
    expect(page.locator("#plot-message")).to_be_hidden()
