"""uvicorn's server with signals of its own: SIGTERM drains, SIGHUP reloads, SIGUSR1 re-reads keys.

SIGTERM: readiness turns 503 at once while requests are still served for `drain_seconds`, so
load balancers stop routing here; then uvicorn stops accepting connections, lets in-flight
requests finish within its `timeout_graceful_shutdown`, and the process exits. Analyses are
not waited for: when the drain ends, those queued are answered 503 and those running stopped
at their next safe point (runtime/analyses.py), so they cannot hold the exit. SIGINT (Ctrl-C)
skips the drain. SIGHUP re-reads the key files and reloads every table in the background, each
swapped in atomically. SIGUSR1 re-reads the key files only (key rotation without paying a
reload of every table, or its memory).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
import time
from collections.abc import Callable, Generator
from types import FrameType

import uvicorn

from service.api.keys import KeyRing
from service.loading.registry import Registry
from service.loading.tables import TableLoader
from service.runtime.runtime import Runtime

LOGGER = logging.getLogger("service.server.graceful")


class GracefulServer(uvicorn.Server):
    """A uvicorn.Server that drains on SIGTERM, reloads on SIGHUP, re-reads keys on SIGUSR1."""

    def __init__(
        self,
        config: uvicorn.Config,
        registry: Registry,
        loader: TableLoader,
        keys: KeyRing,
        drain_seconds: float,
        runtime: Runtime | None = None,
    ) -> None:
        super().__init__(config)
        self.registry = registry
        self.loader = loader
        self.keys = keys
        self.runtime = runtime
        self.drain_seconds = drain_seconds
        self.exit_at: float | None = None
        # Logged once the socket is served and the tables loaded (serve.ready_line).
        self.ready_line: str | None = None
        # The tables' load, run on a thread once the socket is served (the app answers 503
        # meanwhile); an error it raised stops the server, and serve raises it again.
        self.load: Callable[[], None] | None = None
        self.load_error: Exception | None = None
        self._loading: threading.Thread | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start, then the tables' load if there is one, then the ready line."""
        await super().startup(sockets)
        if not self.started:
            return
        if self.load is None:
            self._say_ready()
            return
        self._loading = threading.Thread(target=self._load, name="loading", daemon=True)
        self._loading.start()

    def _load(self) -> None:
        assert self.load is not None
        try:
            self.load()
        except Exception as error:  # whatever it was, serve raises it again on the main thread
            self.load_error = error
            self.should_exit = True
            return
        self._say_ready()

    def _say_ready(self) -> None:
        if self.ready_line is not None:
            LOGGER.info("%s", self.ready_line)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Answer the analyses queued and stop those running, then uvicorn's shutdown."""
        if self.runtime is not None:
            self.runtime.stop_analyses()
        await super().shutdown(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """First SIGTERM: unready, then stop after the drain; anything else: uvicorn's way."""
        self.registry.drain()
        if sig == signal.SIGTERM and self.exit_at is None and not self.should_exit:
            LOGGER.info("SIGTERM: readiness is 503; stopping in %.1f s", self.drain_seconds)
            self.exit_at = time.monotonic() + self.drain_seconds
            return
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        """uvicorn's tick (every 0.1 s), which also ends the drain when its time is up."""
        if self.exit_at is not None and time.monotonic() >= self.exit_at:
            self.should_exit = True
        return await super().on_tick(counter)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """uvicorn's SIGINT/SIGTERM handlers, plus SIGHUP (reload) and SIGUSR1 (keys)."""
        with super().capture_signals():
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {
                signal.SIGHUP: signal.signal(signal.SIGHUP, self.handle_reload),
                signal.SIGUSR1: signal.signal(signal.SIGUSR1, self.handle_keys),
            }
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    def handle_reload(self, sig: int, frame: FrameType | None) -> None:
        """Re-read the key files, then reload every table on a background thread; serving goes
        on meanwhile. Not while the tables load the first time: they are the files as they
        are now anyway."""
        if self._loading is not None and self._loading.is_alive():
            LOGGER.info("SIGHUP: the tables are still loading; nothing to reload")
            return
        LOGGER.info("SIGHUP: reloading the key files and every table")
        threading.Thread(target=self._reload, name="reload", daemon=True).start()

    def handle_keys(self, sig: int, frame: FrameType | None) -> None:
        """Re-read the key files only, on a background thread (a slow file system never holds
        the event loop); the tables are left as they are."""
        LOGGER.info("SIGUSR1: re-reading the key files")
        threading.Thread(target=self.keys.reload, name="keys", daemon=True).start()

    def _reload(self) -> None:
        self.keys.reload()
        self.loader.reload_all()
