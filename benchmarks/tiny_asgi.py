"""A trivial ASGI app for comparing HTTP servers, and a launcher for it under uvicorn.

    python -m benchmarks.tiny_asgi --port PORT --http httptools|h11|zttp|guarded

Every request reads its whole body and gets 200 "ok"; `/slow` answers after two seconds, so a
head can be pipelined behind a request in progress. The module imports nothing beyond the
standard library at the top, so other servers (Hypercorn, Granian) installed in their own
virtual environment can import `benchmarks.tiny_asgi:app` from this checkout.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """200 "ok" for every request once its whole body is read; /slow after two seconds."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": message["type"] + ".complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    while (message := await receive()).get("more_body"):
        pass
    if message["type"] == "http.disconnect":
        return  # the server gave up on the request (Granian does so on a framing error)
    if scope["path"] == "/slow":
        await asyncio.sleep(2)
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"ok"})


def guarded_protocol() -> Any:
    """The service's GuardedProtocol with the default settings' bounds."""
    from service.config import Settings
    from service.runtime.batching import InFlight
    from service.server.accepting import default_max_connections
    from service.server.guard import ConnectionGuard
    from service.server.protocol import protocol_for

    settings = Settings()
    guard = ConnectionGuard(
        max_header_bytes=settings.max_header_bytes,
        header_timeout_seconds=settings.header_timeout_seconds,
        body_timeout_seconds=settings.body_timeout_seconds,
        max_connections=default_max_connections(),
        send_timeout_seconds=settings.send_timeout_seconds,
        max_stalled_connections=settings.max_stalled_connections,
        in_flight=InFlight(settings.max_in_flight, settings.retry_after_seconds),
        templates=[],
    )
    return protocol_for(guard)


def main() -> None:
    """Serve `app` with one of uvicorn's protocols, or the service's guarded one."""
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    protocols = ["httptools", "h11", "zttp", "guarded"]
    parser.add_argument("--http", choices=protocols, default="httptools")
    args = parser.parse_args()
    http = guarded_protocol() if args.http == "guarded" else args.http
    uvicorn.run(app, host="127.0.0.1", port=args.port, http=http, log_level="error")


if __name__ == "__main__":
    main()
