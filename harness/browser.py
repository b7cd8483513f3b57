"""Headless Chromium for the explorer's tests, screenshots and timing, driven by Playwright.

Debian's chromium (scripts/install-system-deps), never Playwright's own browser download: it
is started with the flags that keep it off the network, in a fresh profile Playwright makes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

CHROMIUM = os.environ.get("EXPLORER_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps trying to reach Google's hosts.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium, closed afterwards."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
