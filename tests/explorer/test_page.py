"""The explorer in a real browser: what a person sees on the default table and a projector table."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.explorer.conftest import api, open_explorer

pytestmark = pytest.mark.slow


def neighbour_rows(page: Page) -> list[dict[str, str]]:
    """The neighbour list as shown: token, score text, exact score, plotted or not."""
    page.wait_for_selector("#neighbours li")
    return page.eval_on_selector_all(
        "#neighbours li",
        """items => items.map(li => ({
            token: li.dataset.token,
            shown: li.querySelector('.score').textContent,
            score: li.dataset.score,
            notPlotted: li.querySelector('.not-plotted')?.textContent ?? '',
        }))""",
    )


def test_the_page_loads_with_no_console_errors(page: Page, base_url: str) -> None:
    open_explorer(page, base_url)
    expect(page.locator("#plot-caption")).to_contain_text("PCA of 30,522 spherized rows")
    expect(page.locator("#table option")).to_have_count(2)
    expect(page.locator("#table-facts")).to_contain_text("30,522 rows \u00d7 384 dimensions")
    expect(page.locator("#plot-message")).to_be_hidden()
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_the_plot_shows_the_expected_number_of_points(page: Page, base_url: str) -> None:
    # The page's default rows: the first whole-word rows (test_default_rows.py).
    answer = api(base_url, "v1/tables/minilm/projection", {"points": 1234, "selection": "words"})
    open_explorer(page, base_url, "?table=minilm&points=1234")
    assert page.get_attribute("#plot", "data-plotted") == str(len(answer["points"])) == "1234"
    drawn = page.evaluate("window.explorer.points.map(p => [p.token, p.x, p.y])")
    assert drawn == [[p["token"], p["x"], p["y"]] for p in answer["points"]]


def test_searching_king_lists_kings_and_queen_with_the_api_scores(
    page: Page, base_url: str
) -> None:
    open_explorer(page, base_url)
    page.fill("#search", "king")
    page.press("#search", "Enter")
    shown = {row["token"]: row for row in neighbour_rows(page)}
    expected = api(base_url, "v1/tables/minilm/neighbors", {"token": "king", "k": 8})
    assert list(shown) == [n["token"] for n in expected["neighbors"]]
    for neighbour in expected["neighbors"]:
        assert float(shown[neighbour["token"]]["score"]) == neighbour["score"]
        assert shown[neighbour["token"]]["shown"] == f"{neighbour['score']:.3f}"
    assert shown["kings"]["shown"] == "0.690" and shown["queen"]["shown"] == "0.627"
    expect(page.locator("#full-space-note")).to_contain_text(
        "full 384-dimensional space, not in the picture"
    )
    expect(page.locator("#full-space-note")).to_contain_text("when they disagree, believe the list")
    assert "token=king" in page.url


def test_a_deep_link_opens_the_same_state(page: Page, base_url: str) -> None:
    open_explorer(page, base_url)
    page.fill("#search", "king")
    page.press("#search", "Enter")
    searched = neighbour_rows(page)
    link = page.url
    page.goto("about:blank")
    page.goto(link)
    assert neighbour_rows(page) == searched
    expect(page.locator("#neighbours-word")).to_have_text("king")
    page.goto(f"{base_url}/explorer?table=minilm&token=king&k=3")
    expect(page.locator("#neighbours li")).to_have_count(3)
    assert neighbour_rows(page) == searched[:3]
    expect(page.locator("#k")).to_have_value("3")


def test_a_neighbour_outside_the_plotted_set_is_marked_not_plotted(
    page: Page, base_url: str
) -> None:
    # The first 3,100 rows hold king (2332) and queen (3035) but not kings (5465).
    open_explorer(page, base_url, "?table=minilm&token=king&points=3100&selection=first")
    rows = {row["token"]: row for row in neighbour_rows(page)}
    assert rows["kings"]["notPlotted"] == "(not plotted)"
    assert rows["queen"]["notPlotted"] == ""
    placed = api(base_url, "v1/tables/minilm/project", {"tokens": ["kings"]})["points"][0]
    marks = page.evaluate(
        "window.explorer.plot.marks.map(m => [m.point.token, m.index, m.point.x, m.point.y])"
    )
    assert ["kings", -1, placed["x"], placed["y"]] in marks


def test_an_unknown_word_shows_its_message(page: Page, base_url: str) -> None:
    open_explorer(page, base_url)
    page.fill("#search", "xyzzyq")
    page.press("#search", "Enter")
    expect(page.locator("#neighbours-status")).to_have_text(
        "Not in table minilm: \u201cxyzzyq\u201d."
    )
    assert page.get_attribute("#plot", "data-plotted") == "5000"


def test_the_export_downloads_the_coordinates(page: Page, base_url: str, tmp_path: Path) -> None:
    open_explorer(page, base_url, "?table=lee&points=300")
    expected = api(base_url, "v1/tables/lee/projection", {"points": 300})["points"]
    with page.expect_download() as download:
        page.click("#export-csv")
    assert download.value.suggested_filename == "lee-pca-300.csv"
    download.value.save_as(tmp_path / "points.csv")
    with open(tmp_path / "points.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [(r["token"], int(r["id"]), float(r["x"]), float(r["y"])) for r in rows] == [
        (p["token"], p["id"], p["x"], p["y"]) for p in expected
    ]
    assert [int(r["count"]) for r in rows] == [p["metadata"]["count"] for p in expected]
    with page.expect_download() as download:
        page.click("#export-json")
    download.value.save_as(tmp_path / "points.json")
    exported = json.loads((tmp_path / "points.json").read_text())
    assert exported["points"] == expected and exported["table"] == "lee"
