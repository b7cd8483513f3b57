"""HTTP metrics as plain ASGI middleware: latency and counts by route template."""

from __future__ import annotations

import time

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.metrics import IN_FLIGHT, REQUEST_SECONDS, REQUESTS

# Probes and scrapes would drown the latency of real traffic; they are not measured.
UNMEASURED_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class MetricsMiddleware:
    """Observe every request's latency under its route template (never the raw path)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNMEASURED_PATHS:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        IN_FLIGHT.inc()
        try:
            await self.app(scope, receive, send_with_status)
        finally:
            IN_FLIGHT.dec()
            labels = (_route_template(scope), scope["method"], f"{status // 100}xx")
            REQUEST_SECONDS.labels(*labels).observe(time.perf_counter() - started)
            REQUESTS.labels(*labels).inc()


def _route_template(scope: Scope) -> str:
    """The matched route's path template, e.g. /v1/tables/{table}/neighbors."""
    route = scope.get("route")
    if route is not None and hasattr(route, "path"):
        return str(route.path)
    for candidate in getattr(scope.get("app"), "routes", ()):
        if candidate.matches(scope)[0] == Match.FULL:
            return str(candidate.path)
    return "unmatched"
