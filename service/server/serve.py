"""`embedding-service serve`: bind the port, run uvicorn on it at once (the guarded protocol, the
bounded-accept loop, the graceful signals) and load the tables beside it; until they are loaded
the app itself answers 503 (docs/server-machinery.md).
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
from collections.abc import Callable

import uvicorn

from service.api.app import create_app
from service.config import Settings, load_settings
from service.loading.registry import Registry
from service.loading.tables import load_all, start_diagnoses
from service.runtime.heap import limit_arenas
from service.server.accepting import FACTORIES
from service.server.graceful import GracefulServer
from service.server.guard import ConnectionGuard
from service.server.protocol import protocol_for
from service.server.workers import report_ready, run_workers

LOGGER = logging.getLogger("service.server")


def serve(args: argparse.Namespace) -> int:
    """Bind the port, load every table (answering 503 meanwhile; a bad file stops start-up),
    then serve until stopped; with `workers`, as several processes on the one port."""

    settings = load_settings(
        args.config,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        tables=args.table,
        workers=args.workers,
    )
    configure_logging(settings.log_level)
    # Before any thread of the server starts (uvicorn's, the tables' loading thread).
    limit_arenas(settings.heap_arenas)
    if args.listen_fd is not None:
        sock = socket.socket(fileno=args.listen_fd)
        # A worker: its share of the answer cache (the memory bound holds for the whole server).
        settings = settings.model_copy(
            update={"cache_bytes": settings.cache_bytes // settings.workers}
        )
    else:
        sock = _listen(settings.host, settings.port)
        names = ", ".join(spec.name for spec in settings.served_tables())
        LOGGER.info("listening on %s; loading %s (503 until ready)", base_url(sock), names)
        if settings.workers > 1:
            return run_workers(args.argv, sock, settings.workers, ready_line(base_url(sock)))

    registry = Registry(expected=[spec.name for spec in settings.served_tables()])
    announce = args.worker is None
    # A reload or key re-read asked for before the server's handlers are in would kill the
    # process (the signals' default): the tables and keys being loaded are the files as they
    # are now anyway.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    if args.quiet_load:  # a later worker takes no connection before it can answer
        load_all(registry, settings)
        report_ready(args.ready_fd)
        return _run_server(settings, registry, sock, announce)
    return _run_server(settings, registry, sock, announce, loading(registry, settings, args))


def loading(registry: Registry, settings: Settings, args: argparse.Namespace) -> Callable[[], None]:
    """What the server runs on a thread once it serves: load every table (a bad file stops it),
    tell the supervisor, start the diagnostics the lifespan had no table for."""

    def load() -> None:
        load_all(registry, settings)
        report_ready(args.ready_fd)
        if settings.diagnostics_at_load:
            start_diagnoses(registry)

    return load


def ready_line(url: str) -> str:
    """What a started server says: where it answers, and where a person looks."""
    return f"ready on {url}: explorer {url}/explorer, API docs {url}/docs"


def base_url(sock: socket.socket) -> str:
    """http://host:port of a listening socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to host:port and listening (SO_REUSEADDR, as uvicorn binds)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it Nagle's algorithm held every small answer ~40 ms (700 against 2,900 /healthz
    # a second, measured).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket on host:port; ValueError (one line) when it cannot be had."""
    try:
        return listening_socket(host, port)
    except OSError as error:
        raise ValueError(f"cannot listen on {host}:{port}: {error.strerror}") from None


def _run_server(
    settings: Settings,
    registry: Registry,
    sock: socket.socket,
    announce: bool,
    load: Callable[[], None] | None = None,
) -> int:
    """uvicorn with the service's protocol, loop and signals, on the bound socket; `load`
    (the tables) runs on a thread once it serves, and a table that failed ends it."""

    app = create_app(settings, registry)
    guard = ConnectionGuard.from_settings(settings, app.state)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol_for(guard),
        log_level=settings.log_level,
        access_log=settings.access_log,
        timeout_graceful_shutdown=settings.shutdown_timeout_seconds,
        loop=FACTORIES[settings.event_loop],
    )
    state = app.state
    server = GracefulServer(
        config, registry, state.loader, state.keys, settings.drain_seconds, state.runtime
    )
    server.load = load
    if announce:  # one line per server, not one per worker
        server.ready_line = ready_line(base_url(sock))
    server.run(sockets=[sock])
    if server.load_error is not None:  # the CLI says it in one line, exit code 2
        raise server.load_error
    return 0


def configure_logging(level: str) -> None:
    """The service's own log lines (loading, access, guards) on stderr, like uvicorn's."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
    logger = logging.getLogger("service")
    logger.handlers = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
