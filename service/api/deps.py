"""Typed dependency aliases: what a route needs, resolved from the app's state.

All are `async def`: FastAPI runs a plain `def` dependency in its thread pool, a thread hop
per dependency per request that showed up in the hot path's profile.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from service.engine.served import ServedTable
from service.loading.registry import Registry
from service.operations.context import Context


async def get_registry(request: Request) -> Registry:
    """The tables this process serves."""
    registry: Registry = request.app.state.registry
    return registry


RegistryDep = Annotated[Registry, Depends(get_registry)]


async def get_table(table: str, registry: RegistryDep) -> ServedTable:
    """The table named in the path; UnknownTable (404) or TableNotReady (503) otherwise."""
    return registry.get(table)


TableDep = Annotated[ServedTable, Depends(get_table)]


async def get_context(served: TableDep, request: Request) -> Context:
    """The table named in the path, with the app's limits, runtime and other tables."""
    state = request.app.state
    return Context(served, state.limits, state.runtime, state.registry)


ContextDep = Annotated[Context, Depends(get_context)]
