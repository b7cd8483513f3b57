"""The pages (service/explorer PAGES) and their files: static, open without a key (they hold no
data).

Not in the OpenAPI document: they are views of the JSON API, not part of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request, Response
from starlette.exceptions import HTTPException

from service.explorer import PAGES, STATIC_PREFIX, Asset, load_assets

router = APIRouter(include_in_schema=False)

ASSETS = load_assets()
# The page loads only its own files and talks only to this origin: no CDN, no inline script.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)


def page(name: str) -> Callable[[Request], Awaitable[Response]]:
    """The route of the page in file `name`."""

    async def serve_page(request: Request) -> Response:
        return serve(ASSETS[name], request)

    return serve_page


for page_path, page_file in PAGES.items():
    router.add_api_route(page_path, page(page_file), methods=["GET"], name=page_file)


@router.get(STATIC_PREFIX + "{name:path}")
async def static(name: str, request: Request) -> Response:
    """One of the page's CSS or JavaScript files (vendor/ holds the vendored libraries)."""
    asset = ASSETS.get(name)
    if asset is None:
        raise HTTPException(404, "no such file of the explorer")
    return serve(asset, request)


def serve(asset: Asset, request: Request) -> Response:
    """The file, or 304 when the browser's copy is current (revalidated on every use)."""
    headers = {
        "ETag": asset.etag,
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    }
    if request.headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=headers)
    return Response(asset.body, media_type=asset.media_type, headers=headers)
