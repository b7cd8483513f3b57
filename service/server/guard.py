"""The bounds every connection of one server shares (ConnectionGuard), and the one sweep that
checks every connection's deadlines: a request costs no timer of its own."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from service.api.edge import Route, compiled_routes
from service.config import Settings
from service.runtime.batching import InFlight
from service.server.accepting import default_max_connections

LOGGER = logging.getLogger("service.server.guard")
# How often deadlines are checked: a deadline may be overrun by up to this much.
SWEEP_SECONDS = 0.5


@dataclass
class ConnectionGuard:
    """The bounds every connection of one server shares, and the in-flight count it sheds by."""

    max_header_bytes: int
    header_timeout_seconds: float
    body_timeout_seconds: float
    min_body_rate: int
    max_connections: int
    send_timeout_seconds: float
    max_stalled_connections: int
    max_pipelined: int
    max_body_bytes: int
    in_flight: InFlight
    routes: list[Route]
    stalled: dict[Any, float] = field(default_factory=dict)
    # Connections waiting for a head, oldest first (the first to close when room is needed).
    waiting: dict[Any, None] = field(default_factory=dict)
    # Connections whose request body is arriving, oldest first (the next to close).
    arriving: dict[Any, None] = field(default_factory=dict)
    # Connections holding pipelined requests past max_pipelined unparsed, oldest first.
    holding: dict[Any, None] = field(default_factory=dict)
    sweeping: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, state: Any) -> ConnectionGuard:
        """The guard of an app created by service.api.app.create_app."""
        guard = cls(
            max_header_bytes=settings.max_header_bytes,
            header_timeout_seconds=settings.header_timeout_seconds,
            body_timeout_seconds=settings.body_timeout_seconds,
            min_body_rate=settings.min_body_bytes_per_second,
            max_connections=settings.max_connections or default_max_connections(),
            send_timeout_seconds=settings.send_timeout_seconds,
            max_stalled_connections=settings.max_stalled_connections,
            max_pipelined=settings.max_pipelined_requests,
            max_body_bytes=settings.max_body_bytes,
            in_flight=state.in_flight,
            routes=compiled_routes(state.routes),
        )
        LOGGER.info("at most %d connections open at once", guard.max_connections)
        return guard

    def watch(self, connections: set[Any], loop: asyncio.AbstractEventLoop) -> None:
        """Start the deadline sweep over `connections` (once; later calls do nothing)."""
        if not self.sweeping:
            self.sweeping = True
            loop.call_later(SWEEP_SECONDS, self._sweep, connections, loop)

    def _sweep(self, connections: set[Any], loop: asyncio.AbstractEventLoop) -> None:
        now = time.monotonic()
        for connection in list(connections):
            check = getattr(connection, "check_deadlines", None)
            if check is not None:
                check(now)
        loop.call_later(SWEEP_SECONDS, self._sweep, connections, loop)
