"""3-D, isolating a selection, labels of highlighted marks, and the header, in a real browser."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from tests.explorer.conftest import api, labels_once_marked, open_explorer
from tests.explorer.test_layouts import assert_graph_is_the_apis

pytestmark = pytest.mark.slow


def page_spot(page: Page, token: str) -> dict[str, float]:
    """Where the page draws a plotted token now (3-D: after rotation), in page coordinates."""
    box = page.locator("#plot").bounding_box()
    assert box is not None
    spot = page.evaluate(
        """token => {
            const app = window.explorer;
            const i = app.indexOfToken.get(token);
            return app.plot.screenOf(app.points[i], i);
        }""",
        token,
    )
    return {"x": box["x"] + spot["x"], "y": box["y"] + spot["y"]}


def test_pca_in_3d_renders_rotates_and_picks(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&points=3000&dims=3")
    body = {"points": 3000, "dims": 3, "selection": "words"}
    expected = api(base_url, "v1/tables/minilm/projection", body)
    drawn = page.evaluate("window.explorer.points.map(p => [p.token, p.x, p.y, p.z])")
    assert drawn == [[p["token"], p["x"], p["y"], p["z"]] for p in expected["points"]]
    expect(page.locator("#plot")).to_have_attribute("data-dims", "3")
    expect(page.locator("#plot-caption")).to_contain_text("PC3")
    before = page_spot(page, "king")
    box = page.locator("#plot").bounding_box()
    assert box is not None
    corner = (box["x"] + 20, box["y"] + box["height"] - 20)
    page.mouse.move(*corner)
    page.mouse.down()
    page.mouse.move(corner[0] + 90, corner[1] - 40, steps=6)
    page.mouse.up()
    after = page_spot(page, "king")
    assert (round(after["x"]), round(after["y"])) != (round(before["x"]), round(before["y"]))
    yaw = page.evaluate("window.explorer.plot.rotation.yaw")
    assert yaw == pytest.approx(0.6 + 0.9)
    page.mouse.click(after["x"], after["y"])
    expect(page.locator("#neighbours-word")).to_have_text("king")
    expect(page).to_have_url(re.compile("camera="))  # a moment after the camera stops
    assert "dims=3" in page.url
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_isolating_a_word_shows_exactly_it_and_its_neighbours(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&token=king")
    page.wait_for_selector("#neighbours li")
    page.click("#isolate-neighbours")
    expect(page.locator("#plot")).to_have_attribute("data-plotted", "9")
    neighbours = api(base_url, "v1/tables/minilm/neighbors", {"token": "king", "k": 8})
    selection = ["king", *(n["token"] for n in neighbours["neighbors"])]
    body = {"points": 9, "selection": {"tokens": selection}, "fit": "selection"}
    expected = api(base_url, "v1/tables/minilm/projection", body)["points"]
    drawn = page.evaluate("window.explorer.points.map(p => [p.token, p.x, p.y])")
    assert drawn == [[p["token"], p["x"], p["y"]] for p in expected]
    assert sorted(token for token, _, _ in drawn) == sorted(selection)
    # A PCA fitted on exactly these rows (spherized), not the table's basis: numpy's, up to sign.
    rows = api(base_url, "v1/tables/minilm/lookup", {"tokens": [t for t, _, _ in drawn]})
    units = np.array([item["vector"] for item in rows["items"]], dtype=np.float64)
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    centred = units - units.mean(axis=0)
    _, _, right = np.linalg.svd(centred, full_matrices=False)
    reference = centred @ right[:2].T
    np.testing.assert_allclose(np.abs([[x, y] for _, x, y in drawn]), np.abs(reference), atol=1e-6)
    expect(page.locator("#isolated")).to_be_visible()
    caption = page.locator("#plot-caption")
    expect(caption).to_contain_text("PCA fitted on the 9 isolated rows alone")
    expect(caption).to_contain_text("9 of 30,522 rows plotted (isolated rows)")
    # Every neighbour is plotted now, and the list still comes from the whole table.
    expect(page.locator("#neighbours .not-plotted")).to_have_count(0)
    page.click("#show-all")
    expect(page.locator("#plot")).to_have_attribute("data-plotted", "5000")
    expect(page.locator("#isolated")).to_be_hidden()
    assert "isolate=" not in page.url


def test_isolating_matches_runs_umap_on_neighbours_among_them(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=lee&points=1657&projection=umap&epochs=50")
    page.wait_for_selector('#plot[data-layout="done"]')
    page.fill("#search", "^s", timeout=5000)
    page.check("#search-regex")
    page.wait_for_selector("#isolate-matches:not([hidden])")
    matches = page.evaluate(
        "[...window.explorer.plot.matches].map(i => window.explorer.points[i].token)"
    )
    page.click("#isolate-matches")
    expect(page.locator("#plot")).to_have_attribute("data-plotted", str(len(matches)))
    page.wait_for_selector('#plot[data-layout="done"]')
    tokens = page.evaluate("window.explorer.points.map(p => p.token)")
    assert sorted(tokens) == sorted(matches)
    k = page.evaluate("window.explorer.layout.params.k")
    assert_graph_is_the_apis(page, base_url, k, table="lee")
    expect(page.locator("#plot-caption")).to_contain_text(f"among the {len(tokens)} plotted rows")


def test_every_neighbour_of_king_is_labelled_above_the_rest(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&token=king")
    page.wait_for_selector("#neighbours li")
    neighbours = api(base_url, "v1/tables/minilm/neighbors", {"token": "king", "k": 8})
    wanted = ["king", *(n["token"] for n in neighbours["neighbors"])]
    labels = labels_once_marked(page, wanted)
    marked = {label["text"] for label in labels if label["mark"]}
    assert set(wanted) <= marked
    boxes = [label["box"] for label in labels]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = (
                a["right"] <= b["left"]
                or b["right"] <= a["left"]
                or a["bottom"] <= b["top"]
                or b["bottom"] <= a["top"]
            )
            assert apart, (a, b)


def test_the_header_facts_are_not_cut_off(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=lee")
    facts = page.locator("#table-facts")
    expect(facts).to_contain_text("metadata: count")
    width = page.evaluate(
        "(f => [f.scrollWidth, f.clientWidth, f.getBoundingClientRect().right])"
        "(document.getElementById('table-facts'))"
    )
    assert width[0] <= width[1] and width[2] <= 1280
