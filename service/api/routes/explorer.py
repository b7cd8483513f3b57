"""The explorer page and the landing page: static files, open without a key (they hold no data).

Not in the OpenAPI document: they are views of the JSON API, not part of it.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.exceptions import HTTPException

from service.explorer import STATIC_PREFIX, Asset, load_assets

router = APIRouter(include_in_schema=False)

ASSETS = load_assets()
# The page loads only its own files and talks only to this origin: no CDN, no inline script.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)


@router.get("/")
async def home(request: Request) -> Response:
    """A landing page linking the explorer and the API documentation."""
    return serve(ASSETS["home.html"], request)


@router.get("/explorer")
async def explorer(request: Request) -> Response:
    """The explorer: a table's PCA picture, full-space neighbours and analogies."""
    return serve(ASSETS["explorer.html"], request)


@router.get("/explorer/training")
async def training(request: Request) -> Response:
    """Watch training (a table's checkpoints played in order) and Drift (two versions)."""
    return serve(ASSETS["training.html"], request)


@router.get("/docs")
async def docs(request: Request) -> Response:
    """The API documentation (Swagger UI from the package, not a CDN) over /openapi.json."""
    return serve(ASSETS["api-docs.html"], request)


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
