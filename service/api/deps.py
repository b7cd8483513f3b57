"""Typed dependency aliases: what a route needs, resolved from the app's state.

All are `async def`: FastAPI runs a plain `def` dependency in its thread pool, a thread hop
per dependency per request that showed up in the hot path's profile.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from service.config import Settings
from service.engine.registry import Registry, ServedTable
from service.runtime import Runtime


async def get_registry(request: Request) -> Registry:
    """The tables this process serves."""
    registry: Registry = request.app.state.registry
    return registry


async def get_settings(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


async def get_runtime(request: Request) -> Runtime:
    """The batchers and the result cache."""
    runtime: Runtime = request.app.state.runtime
    return runtime


RegistryDep = Annotated[Registry, Depends(get_registry)]
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


async def get_table(table: str, registry: RegistryDep) -> ServedTable:
    """The table named in the path; UnknownTable (404) or TableNotReady (503) otherwise."""
    return registry.get(table)


TableDep = Annotated[ServedTable, Depends(get_table)]
