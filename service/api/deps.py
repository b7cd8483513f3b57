"""Typed dependency aliases: what a route needs, resolved from the app's state.

All are `async def`: FastAPI runs a plain `def` dependency in its thread pool, a thread hop
per dependency per request that showed up in the hot path's profile.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request

from service.engine.served import ServedTable
from service.errors import UnsupportedMediaType
from service.loading.registry import Registry
from service.operations.door import is_json


async def get_registry(request: Request) -> Registry:
    """The tables this process serves."""
    registry: Registry = request.app.state.registry
    return registry


RegistryDep = Annotated[Registry, Depends(get_registry)]
# A path's {table}: a table's name, as the URL calls it (in code, a `table` is the table itself).
TableName = Annotated[str, Path(alias="table")]


async def get_table(table_name: TableName, registry: RegistryDep) -> ServedTable:
    """The table named in the path; UnknownTable (404) or TableNotReady (503) otherwise."""
    return registry.get(table_name)


TableDep = Annotated[ServedTable, Depends(get_table)]


async def require_json(request: Request) -> None:
    """A dependency for a route that takes a JSON body: 415 for any other content type."""
    content_type = request.headers.get("content-type", "")
    if not is_json(content_type):
        raise UnsupportedMediaType(content_type)
