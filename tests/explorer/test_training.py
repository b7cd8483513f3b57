"""Watch training and Drift in a real browser, on a synthetic checkpoint set made here."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from tests.checkpoint_sets import synthetic_rows
from tests.explorer.conftest import api, first_held, hold_requests

pytestmark = pytest.mark.slow

WORDS, COUNTS, ROWS = synthetic_rows()
LAST = len(ROWS) - 1


def open_training(page: Page, base: str, query: str = "?table=run") -> None:
    """Open the page and wait for its view: the picture, or the drift's lists."""
    page.goto(f"{base}/explorer/training{query}")
    page.wait_for_selector("#most-moved li" if "view=drift" in query else "#plot[data-plotted]")


def plotted_xs(page: Page) -> list[float]:
    return page.evaluate("Array.from(window.training.plot.xs)")


def trajectory(base: str) -> dict:
    body = {"points": len(WORDS), "selection": "random", "seed": 0}
    return api(base, "v1/tables/run/trajectory", body)


def test_train_plays_every_checkpoint_to_the_end(page: Page, training_url: str) -> None:
    open_training(page, training_url)
    expect(page.locator("#frame-label")).to_have_text(
        f"Checkpoint {LAST} ({LAST + 1} of {LAST + 1}): 004-step4"
    )
    page.click("#train")
    page.wait_for_selector('body[data-frame="interpolated"]', state="attached")
    expect(page.locator("#frame-label")).to_contain_text("Interpolated frame between checkpoint")
    expect(page.locator("#frame-label")).to_contain_text("not a real version of the rows")
    page.wait_for_selector('body[data-playing="false"]', state="attached", timeout=20_000)
    body = page.locator("body")
    assert body.get_attribute("data-position") == str(LAST)
    assert int(body.get_attribute("data-interpolated-frames") or "0") > 0
    expect(page.locator("#frame-label")).to_have_text(
        f"Checkpoint {LAST} ({LAST + 1} of {LAST + 1}): 004-step4"
    )
    expected = [p["x"][LAST] for p in trajectory(training_url)["points"]]
    assert plotted_xs(page) == expected
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_pause_stops_between_checkpoints(page: Page, training_url: str) -> None:
    open_training(page, training_url)
    page.click("#train")
    page.wait_for_selector('body[data-frame="interpolated"]', state="attached")
    page.click("#pause")
    body = page.locator("body")
    expect(body).to_have_attribute("data-playing", "false")
    position = body.get_attribute("data-position")
    page.wait_for_timeout(700)  # more than a step from one checkpoint to the next
    assert body.get_attribute("data-position") == position
    assert 0 <= float(position or "nan") < LAST


def test_the_slider_shows_checkpoint_zero_and_the_last(page: Page, training_url: str) -> None:
    open_training(page, training_url)
    answer = trajectory(training_url)
    slider = page.locator("#checkpoint")
    for checkpoint in (0, LAST):
        slider.fill(str(checkpoint))
        label = answer["checkpoints"][checkpoint]["label"]
        expect(page.locator("#frame-label")).to_have_text(
            f"Checkpoint {checkpoint} ({checkpoint + 1} of {LAST + 1}): {label}"
        )
        assert plotted_xs(page) == [p["x"][checkpoint] for p in answer["points"]]
    picture = api(training_url, "v1/tables/run/projection", {"points": len(WORDS)})
    by_id = {p["id"]: p["x"] for p in picture["points"]}
    assert plotted_xs(page) == [by_id[p["id"]] for p in answer["points"]]
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_rare_rows_are_amber_by_a_threshold_that_moves(page: Page, training_url: str) -> None:
    open_training(page, training_url, "?table=run&threshold=10")
    for threshold in (10, 100):
        page.locator("#threshold").fill(str(threshold))
        rare = int((threshold > COUNTS).sum())
        expect(page.locator("#plot")).to_have_attribute("data-suspects", str(rare))
        expect(page.locator("#movement-chart")).to_have_attribute("data-rare", str(rare))
        expect(page.locator("#rare-status")).to_contain_text(f"{rare} of 200 rows")
    assert "threshold=100" in page.url
    figure = trajectory(training_url)["checkpoints"][LAST]["spearman_distance"]
    expect(page.locator("#movement-note")).to_contain_text(f"= {figure['rho']:.3f}")


def test_drift_lists_a_known_mover_and_a_words_neighbours(page: Page, training_url: str) -> None:
    open_training(page, training_url, "?table=run&view=drift")
    a, b = ROWS[0].astype(np.float64), ROWS[LAST].astype(np.float64)
    cosines = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    movers = [WORDS[i] for i in np.argsort(cosines)[:20]]
    moved = page.locator("#most-moved li")
    expect(moved.first).to_have_attribute("data-token", movers[0])
    assert page.locator("#most-moved").get_attribute("data-tokens") == " ".join(movers)
    expect(page.locator("#drift-status")).to_contain_text("200 shared tokens")
    page.locator("#drift-word").fill("w3")
    page.locator("#drift-word").press("Enter")
    expect(page.locator("#neighbours-after li")).to_have_count(10)
    report = api(training_url, "v1/tables/run/drift", {"tokens": ["w3"], "k": 10})["tokens"][0]
    after = page.locator("#neighbours-after li").evaluate_all(
        "items => items.map(i => i.dataset.token)"
    )
    before = page.locator("#neighbours-before li").evaluate_all(
        "items => items.map(i => i.dataset.token)"
    )
    assert after == [n["token"] for n in report["after"]]
    assert before == [n["token"] for n in report["before"]]
    expect(page.locator("#neighbours-after li.entered")).to_have_count(len(report["entered"]))
    assert page.log.errors == []  # type: ignore[attr-defined]


def test_drift_against_another_table(page: Page, training_url: str) -> None:
    open_training(page, training_url, "?table=run&view=drift")
    expect(page.locator("#most-moved li").first).to_be_visible()
    page.select_option("#drift-from", "table:final")
    page.click("#drift-form button[type=submit]")
    expect(page.locator("#drift-status")).to_contain_text("final checkpoint 0 (table)")
    expect(page.locator("#drift-status")).to_contain_text(
        "Mean cosine of a token's two rows: 1.000"
    )
    assert "from=table%3Afinal" in page.url
    assert page.log.errors == []  # type: ignore[attr-defined]
    page.locator("#drift-word").fill("nosuchword")
    page.locator("#drift-word").press("Enter")
    expect(page.locator("#drift-word-status")).to_contain_text("Not in table run")
    expect(page.locator("#most-moved li").first).to_be_visible()  # the lists stay


def test_drift_shows_the_last_word_asked_whatever_answers_last(
    page: Page, training_url: str
) -> None:
    # w3's comparison is held back until w4's is shown; when it arrives, w4's lists stay.
    open_training(page, training_url, "?table=run&view=drift")
    held = hold_requests(page, "**/v1/tables/run/drift", '"w3"')
    page.locator("#drift-word").fill("w3")
    page.locator("#drift-word").press("Enter")
    late = first_held(page, held)
    page.locator("#drift-word").fill("w4")
    page.locator("#drift-word").press("Enter")
    status = page.locator("#drift-word-status")
    expect(status).to_contain_text("\u201cw4\u201d")
    with page.expect_response("**/v1/tables/run/drift"):
        late.continue_()
    page.wait_for_timeout(1000)  # ample for the late answer to be shown, were it shown
    expect(status).to_contain_text("\u201cw4\u201d")
    report = api(training_url, "v1/tables/run/drift", {"tokens": ["w4"], "k": 10})["tokens"][0]
    after = page.locator("#neighbours-after li").evaluate_all(
        "items => items.map(i => i.dataset.token)"
    )
    assert after == [n["token"] for n in report["after"]]
    assert page.log.errors == []  # type: ignore[attr-defined]
