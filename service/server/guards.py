"""The bounds every connection of one server shares (connections.py), and the sweep that holds
connections to their head and body deadlines."""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import time
from dataclasses import dataclass, field
from typing import Any

from service.api.middleware.admission import InFlight
from service.api.middleware.metrics import compiled_templates
from service.config import Settings

LOGGER = logging.getLogger("service.server.guards")
# Descriptors kept free beyond those open at start: room for connections being accepted and
# closed (event_loop.ACCEPT_BURST a turn, a few turns in flight) and files a reload opens.
RESERVED_DESCRIPTORS = 128
# How often deadlines are checked: a deadline may be overrun by up to this much.
SWEEP_SECONDS = 0.5


@dataclass
class ConnectionGuard:
    """The bounds every connection of one server shares, and the in-flight count it sheds by."""

    max_header_bytes: int
    header_timeout_seconds: float
    body_timeout_seconds: float
    max_connections: int
    send_timeout_seconds: float
    max_stalled_connections: int
    in_flight: InFlight
    templates: list[Any]
    stalled: dict[Any, float] = field(default_factory=dict)
    # Connections waiting for a head, oldest first (the first to close when room is needed).
    waiting: dict[Any, None] = field(default_factory=dict)
    sweeping: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, state: Any) -> ConnectionGuard:
        """The guard of an app created by service.api.app.create_app."""
        guard = cls(
            max_header_bytes=settings.max_header_bytes,
            header_timeout_seconds=settings.header_timeout_seconds,
            body_timeout_seconds=settings.body_timeout_seconds,
            max_connections=settings.max_connections or default_max_connections(),
            send_timeout_seconds=settings.send_timeout_seconds,
            max_stalled_connections=settings.max_stalled_connections,
            in_flight=state.in_flight,
            templates=compiled_templates(state.route_templates),
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


def default_max_connections() -> int:
    """The open-file limit less the descriptors open now and a reserve (at least 16)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 65_536
    return max(16, soft - open_descriptors() - RESERVED_DESCRIPTORS)


def open_descriptors() -> int:
    """Descriptors this process has open (thread pools, pipes, logs, the listening socket)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 64
