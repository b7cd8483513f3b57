"""Admin routes: reload, add or remove a table while every other table keeps serving.

Mounted only when an admin key is configured; the access middleware demands that key. Without
one, `off` answers every admin path with a 404 that says so and which settings turn them on.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from service.api.deps import TableName, require_json
from service.api.errors import error_responses
from service.api.routes.tables import describe
from service.config import TableSpec
from service.errors import AdminOff
from service.loading.tables import TableLoader
from service.schemas.tables import TableInfo

router = APIRouter(
    prefix="/v1/admin",
    tags=["admin"],
    responses=error_responses(401, 404, 422),
)


async def get_loader(request: Request) -> TableLoader:
    """The app's table loader."""
    loader: TableLoader = request.app.state.loader
    return loader


LoaderDep = Annotated[TableLoader, Depends(get_loader)]


@router.post("/tables/{table}/reload")
async def reload_table(table_name: TableName, loader: LoaderDep) -> TableInfo:
    """Load a served table again from its files and swap it in; the old one serves meanwhile."""
    return describe(await run_in_threadpool(loader.reload, table_name))


@router.post(
    "/tables",
    status_code=201,
    dependencies=[Depends(require_json)],
    responses=error_responses(400, 409, 413, 415),
)
async def add_table(spec: TableSpec, loader: LoaderDep) -> TableInfo:
    """Load a new table from its files and start serving it under its name."""
    return describe(await run_in_threadpool(loader.add, spec))


@router.delete("/tables/{table}")
async def remove_table(table_name: TableName, loader: LoaderDep) -> TableInfo:
    """Stop serving a table: its facts as it was; requests answering from it finish on it."""
    return describe(await run_in_threadpool(loader.remove, table_name))


off = APIRouter(prefix="/v1/admin", include_in_schema=False)


@off.api_route("/{path:path}", methods=["GET", "POST", "PUT", "DELETE", "PATCH"])
async def admin_off(path: str) -> None:
    """Every admin path while no admin key is configured."""
    raise AdminOff()
