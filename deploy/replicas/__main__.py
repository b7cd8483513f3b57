"""scripts/replicas --replicas N --port PORT [serve options...]: N servers behind HAProxy.

Every option it does not know goes to each replica's `serve` (--table, --config, --workers...):
give them one prepared table (`embedding-service prepare`) and its pages are held once for all.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from deploy.replicas.proxy import Proxy
from deploy.replicas.replica import Replica, free_port
from deploy.replicas.supervisor import Supervisor, say


def parser() -> argparse.ArgumentParser:
    """The options of scripts/replicas (the rest go to `serve`)."""
    options = argparse.ArgumentParser(
        prog="scripts/replicas",
        description="N replicas of this checkout's server behind HAProxy, in the foreground: "
        "a replica that dies is started again; SIGHUP reloads the tables one replica at a "
        "time; SIGTERM or Ctrl-C stops everything. Other options go to each replica's serve.",
    )
    options.add_argument("--replicas", type=int, default=2, help="server processes (default 2)")
    options.add_argument("--host", default="127.0.0.1", help="the proxy's interface (127.0.0.1)")
    options.add_argument("--port", type=int, default=8000, help="the proxy's port (default 8000)")
    options.add_argument(
        "--metrics-port", type=int, default=8404, help="the proxy's own /metrics (default 8404)"
    )
    options.add_argument(
        "--reload-timeout",
        type=float,
        default=600.0,
        help="seconds a replica may take to reload its tables on SIGHUP before the rolling "
        "reload stops there (default 600)",
    )
    return options


def main(argv: list[str] | None = None) -> int:
    """Run the replicas and the proxy until SIGTERM or SIGINT."""
    options, serve_args = parser().parse_known_args(argv)
    if options.replicas < 1:
        parser().error("--replicas must be at least 1")
    if any(arg == "--port" or arg.startswith(("--port=", "--host")) for arg in serve_args):
        parser().error("each replica's port and interface are chosen here: 127.0.0.1, free ports")
    replicas = [Replica(n, free_port(), serve_args) for n in range(1, options.replicas + 1)]
    for replica in replicas:
        say(f"replica {replica.number} on {replica.base}")
    with tempfile.TemporaryDirectory(prefix="replicas-") as folder:
        proxy = Proxy(options.host, options.port, options.metrics_port, Path(folder))
        return Supervisor(replicas, proxy, options.reload_timeout).run()


if __name__ == "__main__":
    raise SystemExit(main())
