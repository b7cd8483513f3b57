"""The port while tables load: bound at once and served by the app, which answers 503 (healthz
200) for what is not loaded yet."""

from __future__ import annotations

import logging
import signal
import socket
import threading
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from harness.server import free_port
from service.api.app import create_app
from service.config import Settings, TableSpec
from service.loading.registry import Registry
from service.server.graceful import GracefulServer
from service.server.serve import listening_socket


def test_while_loading_the_app_answers_not_ready(tmp_path: Path) -> None:
    settings = Settings(tables=[TableSpec(name="t", path=tmp_path / "t.npy")])
    registry = Registry(expected=["t"])  # serve hands the app its registry before loading it
    with TestClient(create_app(settings, registry)) as client:
        assert client.get("/healthz").status_code == 200
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["error"]["type"] == "NotReady"
        query = client.post("/v1/tables/t/neighbors", json={"token": "a", "k": 1})
        assert query.status_code == 503 and query.json()["error"]["type"] == "TableNotReady"


def test_a_reload_asked_for_during_the_first_load_is_left_to_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # uvicorn serves while the tables load, so a SIGHUP reaches its handler then: it must not
    # start a second load of every table beside the first.
    settings = Settings(tables=[TableSpec(name="t", path=tmp_path / "t.npy")])
    registry = Registry(expected=["t"])
    app = create_app(settings, registry)
    config = uvicorn.Config(app, log_level="warning")
    server = GracefulServer(config, registry, app.state.loader, app.state.keys, 0)
    loading, release = threading.Event(), threading.Event()
    server.load = lambda: (loading.set(), release.wait())  # type: ignore[assignment]
    sock = listening_socket("127.0.0.1", free_port())
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    serving.start()
    try:
        assert loading.wait(30)
        with caplog.at_level(logging.INFO, logger="service.server.graceful"):
            server.handle_reload(signal.SIGHUP, None)
        assert "the tables are still loading" in caplog.text
        assert "reloading" not in caplog.text
    finally:
        release.set()
        server.should_exit = True
        serving.join(30)
        sock.close()


def probe(port: int, path: str) -> bytes:
    """GET `path` on a fresh connection: the whole answer, head and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        request = f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
        connection.sendall(request.encode())
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    return answer


def test_the_listening_socket_says_it_is_tcp() -> None:
    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP; a socket made with
    # proto 0 left Nagle's algorithm on and held every small answer ~40 ms.
    with listening_socket("127.0.0.1", free_port()) as sock:
        assert sock.proto == socket.IPPROTO_TCP
        twin = socket.socket(fileno=sock.fileno())  # as a worker opens the one it is handed
        assert twin.proto == socket.IPPROTO_TCP
        twin.detach()
