"""Prototypes of uvicorn's own machinery in place of two parts we wrote, to measure side by side
(benchmarks/server_machinery.py; the decision in docs/server-machinery.md).

    python -m harness.uvicorn_serving multiprocess serve [serve's options] --workers 2
    python -m harness.uvicorn_serving app-503 serve [serve's options]

`multiprocess`: uvicorn's worker manager (`uvicorn.supervisors.Multiprocess`: every worker
started at once, pinged, replaced when dead, the parent stopped when one exits with uvicorn's
STARTUP_FAILURE) in place of service/server/workers.py. Each worker runs the same `serve` a
worker of ours runs (the bound socket, our protocol class, event loop and GracefulServer), so
only the manager differs. As `uvicorn.run` does, the parent exits 0 whatever its workers did.

`app-503`: uvicorn starts at once on the bound socket and the tables load on a thread beside
it; until they are in the registry the app answers 503 itself (`TableNotReady`, /readyz's
`NotReady`), in place of service/server/starting.py's raw-socket responder.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors import multiprocess

from service.cli.main import PROGRAM, build_parser
from service.cli.main import main as service_main
from service.config import load_settings
from service.engine.errors import EngineError
from service.loading.registry import Registry
from service.loading.tables import load_all
from service.runtime.heap import limit_arenas
from service.server import serve as serving
from service.server.starting import listening_socket

# What our `serve` exits with when a table is bad.
BAD_TABLE = 2


class ServiceProcess(multiprocess.Process):
    """uvicorn's worker process, running our `serve` on the socket it was handed."""

    def target(self, sockets: list[Any] | None = None) -> None:  # runs in the worker
        threading.Thread(target=self.always_pong, daemon=True).start()
        fd = str(sockets[0].fileno()) if sockets else ""
        code = service_main([*self.config.service_argv, "--listen-fd", fd])
        # Our bad-table code as uvicorn's, so its manager stops rather than restarting forever.
        sys.exit(STARTUP_FAILURE if code == BAD_TABLE else code)


def run_multiprocess(argv: list[str]) -> int:
    """Bind as our serve binds, then let uvicorn's Multiprocess start and keep the workers."""
    args = build_parser().parse_args(argv)
    settings = load_settings(args.config, host=args.host, port=args.port, workers=args.workers)
    sock = listening_socket(settings.host, settings.port)
    config = Config("service.api.app:create_app", workers=settings.workers)
    # The workers' command as ours: `--workers` stays, so each takes its share of the cache.
    config.service_argv = argv  # type: ignore[attr-defined]
    multiprocess.Process = ServiceProcess  # type: ignore[misc]
    multiprocess.Multiprocess(config, sockets=[sock]).run()
    return 0


def run_app_503(argv: list[str]) -> int:
    """One server that serves at once and loads its tables on a thread beside uvicorn."""
    args = build_parser().parse_args(argv)
    settings = load_settings(
        args.config, host=args.host, port=args.port, log_level=args.log_level, tables=args.table
    )
    serving.configure_logging(settings.log_level)
    limit_arenas(settings.heap_arenas)
    sock = listening_socket(settings.host, settings.port)
    registry = Registry(expected=[spec.name for spec in settings.served_tables()])
    threading.Thread(target=_load_or_exit, args=(registry, settings), daemon=True).start()
    return serving._run_server(settings, registry, sock, announce=True)


def _load_or_exit(registry: Registry, settings: Any) -> None:
    try:
        load_all(registry, settings)
    except (EngineError, FileNotFoundError, ValueError) as error:
        message = error.message if isinstance(error, EngineError) else str(error)
        print(f"{PROGRAM}: error: {message}", file=sys.stderr, flush=True)
        # The server is already running on the main thread: end the whole process, now.
        os._exit(BAD_TABLE)


if __name__ == "__main__":
    variant, *rest = sys.argv[1:]
    sys.exit({"multiprocess": run_multiprocess, "app-503": run_app_503}[variant](rest))
