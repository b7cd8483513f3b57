"""HTTP metrics as plain ASGI middleware: latency and counts by route template."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from typing import Any

from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.metrics import IN_FLIGHT, REQUEST_SECONDS, REQUESTS

# Probes and scrapes would drown the latency of real traffic; they are not measured.
UNMEASURED_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class MetricsMiddleware:
    """Observe every request's latency under its route template (never the raw path)."""

    def __init__(self, app: ASGIApp, templates: Iterable[str] = ()) -> None:
        self.app = app
        # For requests answered before routing (refused, or 404/405), which carry no route.
        self.templates = compiled_templates(templates)
        # (template, method, status class) -> the labelled histogram and counter: labels()
        # costs microseconds per call, on every request.
        self.children: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNMEASURED_PATHS:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        # Stays 499 (nginx's "client closed request") only if the client left before an answer.
        status = 499

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
            labels = (self.route_template(scope), scope["method"], f"{status // 100}xx")
            children = self.children.get(labels)
            if children is None:
                children = REQUEST_SECONDS.labels(*labels), REQUESTS.labels(*labels)
                self.children[labels] = children
            children[0].observe(time.perf_counter() - started)
            children[1].inc()

    def route_template(self, scope: Scope) -> str:
        """The route's path template, e.g. /v1/tables/{table}/neighbors; never the raw path."""
        route = scope.get("route")
        if route is not None and hasattr(route, "path"):
            return str(route.path)
        return template_of(scope["path"], self.templates)


def compiled_templates(templates: Iterable[str]) -> list[tuple[re.Pattern[str], str]]:
    """Route templates with the regular expressions that match their paths."""
    return [(compile_path(path)[0], path) for path in templates]


def template_of(path: str, templates: list[tuple[re.Pattern[str], str]]) -> str:
    """The first template matching `path`, or 'unmatched'."""
    for pattern, template in templates:
        if pattern.match(path):
            return template
    return "unmatched"
