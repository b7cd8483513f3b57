"""The explorer in headless Chromium against a real server process on 127.0.0.1.

Debian's chromium (scripts/install-system-deps), driven by Playwright. A failing test leaves a
screenshot of the page in its pytest tmp dir and prints the path.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Route
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.browser import chromium
from harness.lee_table import write_lee_table
from harness.server import running_server
from service.config import default_table
from tests.checkpoint_sets import synthetic_rows, write_checkpoint_set

TIMEOUT_MS = 20_000


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the test item, so fixtures can tell a failure."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def tables_env(folder: Path) -> dict[str, str]:
    """Two tables: MiniLM (the default) and the Lee projector table with a count column."""
    tables = [
        {"name": "minilm", "path": str(default_table().path), "format": "huggingface"},
        {"name": "lee", "path": str(write_lee_table(folder)), "format": "projector"},
    ]
    return {"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}


@pytest.fixture(scope="session")
def lee_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lee")


@pytest.fixture(scope="session")
def base_url(lee_folder: Path) -> Iterator[str]:
    """A real server with two tables."""
    with running_server(tables_env(lee_folder)) as base:
        yield base


@pytest.fixture(scope="session")
def training_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with a synthetic run (five checkpoints) and its last checkpoint as a table."""
    folder = write_checkpoint_set(tmp_path_factory.mktemp("training") / "run")
    last = len(synthetic_rows()[2]) - 1
    final = folder / f"{last:03d}-step{last}_tensors.bytes"
    tables = [
        {"name": "run", "checkpoints": str(folder)},
        {"name": "final", "path": str(final), "format": "projector"},
    ]
    with running_server({"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}) as base:
        yield base


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    # Package scope, not session: Playwright's sync API keeps its event loop marked as running
    # in this thread while it is started, and asyncio.run() in later tests would refuse to run.
    with chromium() as started:
        yield started


class PageLog:
    """What the page said: console messages of type error, and uncaught exceptions."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url} {r.failure}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Page]:
    """A fresh tab (its own storage); a screenshot on failure."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    tab.log = PageLog(tab)  # type: ignore[attr-defined]
    yield tab
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        shot = tmp_path / "failure.png"
        tab.screenshot(path=str(shot), full_page=True)
        print(f"\nscreenshot of the failed page: {shot}")
        print("console errors:", tab.log.errors)  # type: ignore[attr-defined]
        loaded = "performance.getEntriesByType('resource').map(e => e.name + ' ' + e.duration)"
        print("loaded:", tab.evaluate(loaded))
    context.close()


def api(base: str, path: str, body: Any = None, key: str | None = None) -> Any:
    """The JSON API's answer, to compare with what the page shows."""
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base}/{path}", data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def open_explorer(page: Page, base: str, query: str = "") -> None:
    """Open the explorer and wait until its points are drawn."""
    page.goto(f"{base}/explorer{query}")
    page.wait_for_selector("#plot[data-plotted]")


def labels_once_marked(page: Page, texts: list[str]) -> list[dict[str, Any]]:
    """The plot's placed labels once every one of `texts` labels a mark.

    Labels are placed on an animation frame after the marks, later still on a loaded machine;
    if they never all appear, the labels as they are, for the caller's assertion to show.
    """
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            """texts => {
                const marked = new Set(window.explorer.plot.labels.placed
                    .filter(l => l.mark).map(l => l.text));
                return texts.every(t => marked.has(t));
            }""",
            arg=texts,
            timeout=TIMEOUT_MS,
        )
    return page.evaluate(
        "window.explorer.plot.labels.placed.map(l => ({text: l.text, mark: l.mark, box: l.box}))"
    )


def hold_requests(page: Page, pattern: str, marker: str = "") -> list[Route]:
    """Hold back the page's requests to `pattern` whose body holds `marker` (every one without
    a marker); the rest go through. The test lets one go with its route's continue_()."""
    held: list[Route] = []

    def handle(route: Route) -> None:
        if marker in (route.request.post_data or ""):
            held.append(route)
        else:
            route.continue_()

    page.route(pattern, handle)
    return held


def first_held(page: Page, held: list[Route]) -> Route:
    """The first request hold_requests held back, once the page has sent it."""
    while not held:
        page.wait_for_timeout(20)
    return held[0]
