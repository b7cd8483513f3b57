"""A prototype of uvicorn's own worker manager in place of service/server/workers.py, to
measure side by side (benchmarks/server_machinery.py; the decision in docs/server-machinery.md).

    python -m harness.uvicorn_serving serve [serve's options] --workers 2

uvicorn's `uvicorn.supervisors.Multiprocess`: every worker started at once, pinged, replaced
when dead, the parent stopped when one exits with uvicorn's STARTUP_FAILURE. Each worker runs
the same `serve` a worker of ours runs (the bound socket, our protocol class, event loop and
GracefulServer), so only the manager differs. As `uvicorn.run` does, the parent exits 0
whatever its workers did. Multiprocess has no hook for the worker it starts: the prototype
swaps the module's `Process` for its own.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors import multiprocess

from service.cli.main import build_parser
from service.cli.main import main as service_main
from service.config import load_settings
from service.server.serve import listening_socket

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


if __name__ == "__main__":
    sys.exit(run_multiprocess(sys.argv[1:]))
