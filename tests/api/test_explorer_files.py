"""The explorer's files as the app serves them: types, caching, no outside URLs, open access."""

from __future__ import annotations

import posixpath
import re
import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.explorer import MEDIA_TYPES, STATIC, load_assets

ASSETS = load_assets()
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(ASSETS))
def test_every_file_is_served_with_its_type(client: TestClient, name: str) -> None:
    response = client.get(f"/explorer/static/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"] == MEDIA_TYPES[Path(name).suffix]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.content == (STATIC / name).read_bytes()


def test_pages_revalidate_with_an_etag(client: TestClient) -> None:
    page = client.get("/explorer")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src" not in page.headers["content-security-policy"]  # default-src 'self'
    assert page.headers["cache-control"] == "no-cache"
    again = client.get("/explorer", headers={"if-none-match": page.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


def test_the_landing_page_links_the_explorer_and_the_docs(client: TestClient) -> None:
    home = client.get("/")
    assert home.status_code == 200
    assert 'href="explorer"' in home.text and 'href="docs"' in home.text


@pytest.mark.parametrize("name", ["nope.js", "..%2F__init__.py", "%2E%2E%2Fmain.py", "explorer"])
def test_unknown_files_are_404_in_the_envelope(client: TestClient, name: str) -> None:
    response = client.get(f"/explorer/static/{name}")
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "NotFound"


def test_pages_are_not_part_of_the_api_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path == "/" or path.startswith("/explorer")]


def test_nothing_is_fetched_from_outside() -> None:
    """No CDN: no file of ours refers to another origin (the SVG namespace is a name, not a
    fetch). Vendored code holds URLs it never fetches as configured; the browser test of /docs
    (tests/explorer/test_api_docs.py) checks that no request leaves the server."""
    for name, asset in ASSETS.items():
        if name.startswith("vendor/"):
            continue
        text = asset.body.decode().replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text), name


def resolved(importer: str, relative: str) -> str:
    """A path relative to `importer`'s folder as a path under static/ (what ASSETS is keyed by)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(importer), relative))


def imports(name: str) -> set[str]:
    """The modules `name` imports, directly or through others, as paths under static/."""
    found: set[str] = set()
    pending = [name]
    while pending:
        importer = pending.pop()
        text = ASSETS[importer].body.decode()
        named = re.findall(r'from "(\.{1,2}/[\w/-]+\.js)"', text)
        for module in {resolved(importer, path) for path in named} - found:
            found.add(module)
            pending.append(module)
    return found


@pytest.mark.parametrize(
    ("page", "entry"),
    [
        ("explorer.html", "main.js"),
        ("training.html", "training.js"),
        ("api-docs.html", "api-docs.js"),
    ],
)
def test_every_module_is_shipped_and_preloaded(page: str, entry: str) -> None:
    modules = {name for name in ASSETS if name.endswith(".js")}
    assert imports(entry) <= modules
    html = ASSETS[page].body.decode()
    assert re.search(rf'<script type="module" src="(/?explorer/)?static/{entry}">', html)
    preloaded = set(
        re.findall(r'rel="modulepreload" href="(?:/?explorer/)?static/([\w/-]+\.js)"', html)
    )
    assert preloaded == imports(entry)


def workers(modules: set[str]) -> set[str]:
    """The worker scripts `modules` start, and the files those scripts load (vendor/)."""
    found: set[str] = set()
    for name in modules:
        text = ASSETS[name].body.decode()
        started = re.findall(r'new URL\("(\.{1,2}/[\w/-]+\.js)", import\.meta\.url\)', text)
        found |= {resolved(name, path) for path in started}
    for name in set(found):
        loaded = re.findall(r'importScripts\("([\w./-]+\.js)"\)', ASSETS[name].body.decode())
        found |= {resolved(name, path) for path in loaded}
    return found


def test_every_module_belongs_to_a_page() -> None:
    modules = {name for name in ASSETS if name.endswith(".js")}
    entries = {"main.js", "training.js", "api-docs.js"}
    pages = entries.union(*(imports(entry) for entry in entries))
    # The API documentation page's one classic script: Swagger UI's bundle.
    assert modules == pages | workers(pages) | {"vendor/swagger-ui/swagger-ui-bundle.js"}
    assert workers(pages) == {"plot/layout-worker.js", "vendor/umap-js.js", "vendor/tsne.js"}


def test_the_modules_are_grouped_a_dozen_at_most_per_folder() -> None:
    """The page's own ES modules sit in folders of what they are (common/, plot/, panels/,
    training/; the pages' entry modules beside the pages), none holding more than 12."""
    folders: dict[str, int] = {}
    for name in ASSETS:
        if name.endswith(".js") and not name.startswith("vendor/"):
            folder = posixpath.dirname(name)
            folders[folder] = folders.get(folder, 0) + 1
    assert set(folders) == {"", "common", "plot", "panels", "training"}
    assert max(folders.values()) <= 12, folders


def test_vendored_files_keep_their_license_beside_them() -> None:
    for name in ASSETS:
        if name.startswith("vendor/"):
            assert (STATIC / name).with_suffix(".LICENSE").is_file(), name


def test_the_training_page_is_served_open(client: TestClient) -> None:
    page = client.get("/explorer/training")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'href="../explorer"' in page.text
    assert 'href="explorer/training"' in client.get("/explorer").text


def test_every_file_is_package_data() -> None:
    """The wheel and the image install the package: its data must name every static file."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["service.explorer"]
    package = STATIC.parent
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    assert {STATIC / name for name in ASSETS} <= shipped


def test_every_example_of_the_api_document_is_answered(client: TestClient) -> None:
    """/docs' "Try it out" sends these: each must be a request the service answers."""
    paths = client.get("/openapi.json").json()["paths"]
    for path, methods in paths.items():
        content = methods.get("post", {}).get("requestBody", {}).get("content", {})
        for name, example in content.get("application/json", {}).get("examples", {}).items():
            url = path.replace("{table}", "minilm")
            response = client.post(url, json=example["value"])
            assert response.status_code == 200, (path, name, response.text)
