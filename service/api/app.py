"""create_app(settings): the FastAPI app, with tables loaded once in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig
from starlette.concurrency import run_in_threadpool
from starlette.middleware.cors import CORSMiddleware

from service.api.edge import BodyRules, Edge
from service.api.errors import error_responses, install_error_handlers
from service.api.keys import KeyRing, document_security
from service.api.openapi import DESCRIPTION, document_bodies
from service.api.query import query_router
from service.api.routes import admin as routes_admin
from service.api.routes import embedding as routes_embedding
from service.api.routes import explorer as routes_explorer
from service.api.routes import health as routes_ops
from service.api.routes import tables as routes_tables
from service.config import Settings
from service.loading.registry import Registry
from service.loading.tables import TableLoader, load_all, load_registry, load_spec, start_diagnoses
from service.operations.catalog import OPERATIONS
from service.operations.door import Services
from service.operations.limits import Limits
from service.runtime.runtime import Runtime

__all__ = ["create_app", "load_registry", "load_spec"]

# Every table route can be refused before it runs (a query's errors: api/query.py).
TABLE_ERRORS = error_responses(401, 404, 422, 429, 503)
# POST /v1/tables/{table}/{operation}, one route per operation of the catalogue.
QUERY_ROUTER = query_router(OPERATIONS.values())


def create_app(settings: Settings | None = None, registry: Registry | None = None) -> FastAPI:
    """The app; tables are loaded at start-up unless a `registry` is handed in (its owner
    loads it: `serve` does while the app answers 503 for what is not loaded yet)."""
    settings = settings or Settings()
    preloaded = registry is not None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not preloaded:
            await run_in_threadpool(load_all, app.state.registry, settings)
        app.state.runtime.start()
        if settings.diagnostics_at_load:
            start_diagnoses(app.state.registry)
        try:
            yield
        finally:
            await app.state.runtime.close()

    app = FastAPI(
        title="Embedding similarity service",
        version="0.1.0",
        summary="Lookups, cosine neighbours, analogies, similarity and output scoring over HTTP.",
        description=DESCRIPTION,
        lifespan=lifespan,
        # /docs is the package's own Swagger UI (api/routes/explorer.py): FastAPI's loads its
        # scripts and styles from a CDN, a blank page offline. No ReDoc: it would too.
        docs_url=None,
        redoc_url=None,
        telemetry=TelemetryConfig(
            tracing=settings.opentelemetry,
            metrics=settings.opentelemetry,
            logs=settings.opentelemetry,
        ),
    )
    app.state.settings = settings
    app.state.limits = Limits(settings)
    app.state.runtime = Runtime(settings)
    app.state.registry = registry or Registry(expected=[s.name for s in settings.served_tables()])
    app.state.loader = TableLoader(app.state.registry, settings)
    app.state.in_flight = app.state.runtime.in_flight
    app.state.keys = keys = KeyRing.from_settings(settings)
    app.state.services = Services(app.state.registry, app.state.limits, app.state.runtime)
    install_error_handlers(app)
    _include_routers(app, keys)
    app.state.routes = route_methods(app)
    document_security(app, keys, settings.metrics_require_key)
    document_bodies(app)
    _add_middleware(app, settings, keys)
    return app


def _include_routers(app: FastAPI, keys: KeyRing) -> None:
    app.include_router(routes_ops.router)
    app.include_router(routes_explorer.router)
    app.include_router(routes_tables.router, responses=TABLE_ERRORS)
    app.include_router(QUERY_ROUTER)
    app.include_router(routes_embedding.router)
    app.include_router(routes_admin.router if keys.admin else routes_admin.off)


def route_methods(app: FastAPI) -> dict[str, frozenset[str]]:
    """Every route's path template (admin ones too, mounted or not) and the methods it takes,
    for metrics labels and for which requests may have a body read.

    The routers' own routes are read as well: FastAPI adds included routes to app.routes
    lazily, so at this point app.routes may hold only the documentation routes.
    """
    routes = list(app.routes)
    for module in (routes_ops, routes_explorer, routes_tables, routes_embedding, routes_admin):
        routes += module.router.routes
    routes += QUERY_ROUTER.routes
    methods: dict[str, frozenset[str]] = {}
    for route in routes:
        path, taken = getattr(route, "path", ""), getattr(route, "methods", None) or set()
        if path:
            methods[path] = methods.get(path, frozenset()) | taken
    return methods


def _add_middleware(app: FastAPI, settings: Settings, keys: KeyRing) -> None:
    """The edge (metrics, access, body, in flight, the direct path), and CORS around it."""
    rules = BodyRules(
        limit=settings.max_body_bytes,
        budget=settings.max_body_bytes_in_flight,
        retry_after=settings.retry_after_seconds,
    )
    app.add_middleware(
        Edge,
        keys=keys,
        metrics_require_key=settings.metrics_require_key,
        rules=rules,
        in_flight=app.state.in_flight,
        routes=app.state.routes,
        services=app.state.services if settings.direct_queries else None,
        queues=app.state.runtime.queues,
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
