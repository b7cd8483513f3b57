"""The explorer page: HTML, CSS and ES modules shipped in the package, served from memory.

The files hold no data (every number on the page comes from the JSON API), so they are read
once at import and served with an ETag; there is no build step and nothing from a CDN.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

STATIC = Path(__file__).parent / "static"
# Each page's path and file: the landing page (links to the explorer and the API's docs), the
# explorer (a table's PCA picture, full-space neighbours and analogies), training (checkpoints
# played in order, and drift between two versions), and Swagger UI over /openapi.json.
PAGES = {
    "/": "home.html",
    "/explorer": "explorer.html",
    "/explorer/training": "training.html",
    "/docs": "api-docs.html",
}
PAGE_PATHS = frozenset(PAGES)
STATIC_PREFIX = "/explorer/static/"
# Explicit, so a host's mime.types cannot serve an ES module with a type browsers refuse.
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}


@dataclass(frozen=True)
class Asset:
    """One file of the page: its bytes, content type and entity tag."""

    body: bytes
    media_type: str
    etag: str


def load_assets(folder: Path = STATIC) -> dict[str, Asset]:
    """Every servable file in `folder` and its subfolders (vendor/), by relative path."""
    assets = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix in MEDIA_TYPES and path.is_file():
            body = path.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            name = path.relative_to(folder).as_posix()
            assets[name] = Asset(body, MEDIA_TYPES[path.suffix], etag)
    return assets


def is_page_path(path: str) -> bool:
    """Whether `path` is a page or one of its files: open without a key, they hold no data."""
    return path in PAGE_PATHS or path.startswith(STATIC_PREFIX)
