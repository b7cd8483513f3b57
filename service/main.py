"""create_app(settings): the FastAPI app, with tables loaded once in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from service import metrics
from service.api import routes_ops, routes_search, routes_tables, routes_vectors
from service.api.errors import install_error_handlers
from service.api.middleware import MetricsMiddleware
from service.config import Settings, TableSpec
from service.engine.index import SearchKernel
from service.engine.loaders import load_table
from service.engine.registry import Registry, ServedTable
from service.runtime import Runtime


def load_spec(registry: Registry, spec: TableSpec, kernel: SearchKernel = "blas") -> ServedTable:
    """Load, index and register one configured table; TableLoadError if its file is bad."""
    loader = partial(
        load_table,
        spec.path,
        spec.format,
        vocab=spec.vocab,
        labels=spec.labels,
        tensor=spec.tensor,
        width=spec.width,
    )
    served = registry.load(spec.name, loader, spec.case_insensitive, kernel)
    metrics.record_table(spec.name, served.table.rows, served.table.width, served.index.nbytes)
    return served


def load_registry(settings: Settings) -> Registry:
    """A registry with every configured table loaded; stops at the first bad file."""
    specs = settings.served_tables()
    registry = Registry(expected=[spec.name for spec in specs])
    for spec in specs:
        load_spec(registry, spec, settings.search_kernel)
    return registry


def create_app(settings: Settings | None = None, registry: Registry | None = None) -> FastAPI:
    """The app; tables are loaded at start-up unless a loaded `registry` is handed in."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if registry is None:
            app.state.registry = Registry(expected=[s.name for s in settings.served_tables()])
            for spec in settings.served_tables():
                await run_in_threadpool(load_spec, app.state.registry, spec, settings.search_kernel)
        app.state.runtime.start()
        try:
            yield
        finally:
            await app.state.runtime.close()

    app = FastAPI(
        title="Embedding similarity service",
        version="0.1.0",
        summary="Lookups, cosine neighbours, analogies, similarity and output scoring over HTTP.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.runtime = Runtime(settings)
    app.state.registry = registry or Registry(expected=[s.name for s in settings.served_tables()])
    install_error_handlers(app)
    app.add_middleware(MetricsMiddleware)
    for module in (routes_ops, routes_tables, routes_search, routes_vectors):
        app.include_router(module.router)
    return app
