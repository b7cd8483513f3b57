"""UMAP and t-SNE in the page: seeded, stoppable, on exactly the graph /neighbors answers."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.explorer.conftest import api, open_explorer

pytestmark = pytest.mark.slow

LAYOUT_TIMEOUT_MS = 60_000


def run_layout(page: Page, base: str, query: str) -> list[list[float]]:
    """Open the explorer with a layout in the link; its final coordinates, point by point."""
    open_explorer(page, base, query)
    page.wait_for_selector('#plot[data-layout="done"]', timeout=LAYOUT_TIMEOUT_MS)
    return coordinates(page)


def coordinates(page: Page) -> list[list[float]]:
    return page.evaluate(
        "(p => Array.from(p.px, (x, i) => p.dims === 3 ? [x, p.py[i], p.pz[i]] : [x, p.py[i]]))"
        "(window.explorer.plot)"
    )


def neighbours_of(base: str, table: str, ids: list[int], k: int) -> list[list[dict[str, Any]]]:
    """Each id's neighbours among exactly `ids`, from batch /neighbors (256 queries a batch)."""
    lists = []
    for start in range(0, len(ids), 256):
        queries = [{"id": i, "k": k} for i in ids[start : start + 256]]
        body = {"queries": queries, "among": ids}
        answer = api(base, f"v1/tables/{table}/neighbors", body)
        lists += [result["neighbors"] for result in answer["results"]]
    return lists


def assert_graph_is_the_apis(page: Page, base: str, k: int, table: str = "minilm") -> None:
    """The worker's input: each row's k neighbours among the plotted rows and 1 - cosine,
    exactly as /neighbors says."""
    graph = page.evaluate(
        "(l => ({indices: l.graph.indices, distances: l.graph.distances}))(window.explorer.layout)"
    )
    ids = page.evaluate("window.explorer.points.map(p => p.id)")
    expected = neighbours_of(base, table, ids, k)
    position = {row: i for i, row in enumerate(ids)}
    assert graph["indices"] == [[position[n["id"]] for n in row] for row in expected]
    assert graph["distances"] == [[1 - n["score"] for n in row] for row in expected]
    assert all(len(row) == k for row in graph["indices"])


def test_umap_of_2000_points_is_seeded_and_built_on_neighbors(page: Page, base_url: str) -> None:
    query = "?table=minilm&points=2000&projection=umap&layoutSeed=3"
    first = run_layout(page, base_url, query)
    assert len(first) == 2000
    assert_graph_is_the_apis(page, base_url, k=14)  # 15 neighbours, the row itself included
    caption = page.locator("#plot-caption")
    expect(caption).to_contain_text("UMAP (2-D) of 2,000 of the table's 30,522 rows")
    expect(caption).to_contain_text(
        "14 exact full-space cosine neighbours among the 2,000 plotted rows"
    )
    expect(caption).to_contain_text("Neighbour lists are full-space")
    expect(page.locator("#projection-status")).to_have_text("Finished: 500 epochs.")
    page.goto("about:blank")
    assert run_layout(page, base_url, query) == first
    other = run_layout(page, base_url, "?table=minilm&points=2000&projection=umap&layoutSeed=4")
    assert other != first
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_tsne_of_2000_points_is_seeded_and_built_on_neighbors(page: Page, base_url: str) -> None:
    query = "?table=minilm&points=2000&projection=tsne&perplexity=10&iterations=200"
    first = run_layout(page, base_url, query)
    assert len(first) == 2000
    assert_graph_is_the_apis(page, base_url, k=30)  # 3 x perplexity
    expect(page.locator("#plot-caption")).to_contain_text("t-SNE (2-D) of 2,000")
    expect(page.locator("#projection-status")).to_have_text("Finished: 200 iterations.")
    page.goto("about:blank")
    assert run_layout(page, base_url, query) == first
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_stop_ends_a_run_where_it_is(page: Page, base_url: str) -> None:
    open_explorer(page, base_url, "?table=minilm&points=5000&projection=umap&epochs=5000")
    page.wait_for_selector("#plot[data-layout-step]", timeout=LAYOUT_TIMEOUT_MS)
    expect(page.locator("#layout-progress")).to_be_visible()
    page.click("#layout-stop")
    expect(page.locator("#plot")).to_have_attribute("data-layout", "stopped")
    step = int(page.get_attribute("#plot", "data-layout-step") or "0")
    assert 0 < step < 5000
    expect(page.locator("#projection-status")).to_have_text(f"Stopped at step {step:,} of 5,000.")
    expect(page.locator("#plot-caption")).to_contain_text("UMAP (stopped early)")
    held = coordinates(page)
    page.wait_for_timeout(500)
    assert coordinates(page) == held
    # Run again: the form's parameters, the same graph source.
    page.fill("#umap-epochs", "50")
    page.click("#layout-run")
    page.wait_for_selector('#plot[data-layout="done"]', timeout=LAYOUT_TIMEOUT_MS)
    assert "epochs=50" in page.url


def test_a_random_sample_gets_its_exact_graph_among_its_rows(page: Page, base_url: str) -> None:
    query = "?table=minilm&points=500&selection=random&seed=3&projection=umap&epochs=50"
    coords = run_layout(page, base_url, query)
    assert len(coords) == 500
    ids = page.evaluate("window.explorer.points.map(p => p.id)")
    assert max(ids) > 10_000  # not the first rows: restrict could not have given this graph
    assert_graph_is_the_apis(page, base_url, k=14)
    caption = page.locator("#plot-caption")
    expect(caption).to_contain_text("UMAP (2-D) of 500 of the table's 30,522 rows (the random")
    expect(caption).to_contain_text("among the 500 plotted rows")


def test_umap_in_3d_gives_three_coordinates(page: Page, base_url: str) -> None:
    coords = run_layout(page, base_url, "?table=lee&points=600&projection=umap&dims=3&epochs=100")
    assert len(coords) == 600 and all(len(c) == 3 for c in coords)
    assert len({round(c[2], 6) for c in coords}) > 500
    expect(page.locator("#plot")).to_have_attribute("data-dims", "3")
