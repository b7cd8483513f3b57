"""The private parts of uvicorn's HttpToolsProtocol that service/server/protocol.py relies on.

GuardedProtocol subclasses a class uvicorn does not document (docs/protocol.md says why). Its
guards are correct only while uvicorn keeps the attributes, callbacks and call order listed
here; an upgrade that moves one must fail here, by name, before test_framing.py and its
neighbours fail in a way that points nowhere. When this file fails after an upgrade: read the
diff of uvicorn/protocols/http/httptools_impl.py, adapt protocol.py, rerun tests/robustness,
then record the new sources' digest below.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections import deque
from typing import Any

import httptools
import pytest
import uvicorn
from uvicorn.config import Config
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from service.server.protocol import GuardedProtocol

# What GuardedProtocol overrides and calls through super(), or calls on itself.
METHODS = [
    "connection_made",
    "connection_lost",
    "data_received",
    "on_message_begin",
    "on_url",
    "on_header",
    "on_headers_complete",
    "on_body",
    "on_message_complete",
    "on_response_complete",
    "pause_writing",
    "resume_writing",
    "_start_asgi_task",
]
# Per-connection state it reads or writes (set by __init__ or connection_made).
CONNECTION_STATE = ["loop", "connections", "transport", "flow", "pipeline", "cycle", "parser"]
# State of a request cycle it reads or writes.
CYCLE_STATE = ["scope", "response_started", "response_complete", "disconnected", "message_event"]
# The uvicorn the locks pin (deploy/requirements*.lock), and the sha256 of the source of
# HttpToolsProtocol's METHODS and __init__ and of RequestResponseCycle.__init__ in it.
TESTED_UVICORN = "0.54.0"
TESTED_SOURCE_DIGEST = "14215606f15313788a8fbf14bf39522d480fad4c08082f7121389726f6ca4089"


class Transport(asyncio.Transport):
    """A socket's transport that keeps what is written (the boundary this test stands at)."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closing = False
        self.reading = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 9000)}.get(name)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


async def app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


class Recording(HttpToolsProtocol):
    """uvicorn's protocol, noting each request it starts and every parser callback."""

    started: list[Any]
    calls: list[str]

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        self.started.append(cycle)

    def on_header(self, name: bytes, value: bytes) -> None:
        self.calls.append("header:" + name.decode())
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.calls.append("headers_complete")
        super().on_headers_complete()


def connection(loop: asyncio.AbstractEventLoop) -> tuple[Recording, Transport]:
    config = Config(app, http="httptools", lifespan="off", log_level="error")
    protocol = Recording(config, ServerState(), {}, _loop=loop)
    protocol.started, protocol.calls = [], []
    transport = Transport()
    protocol.connection_made(transport)
    return protocol, transport


@pytest.fixture
def loop() -> Any:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_uvicorn_is_the_version_the_guards_were_checked_against() -> None:
    assert uvicorn.__version__ == TESTED_UVICORN, (
        f"uvicorn {uvicorn.__version__}, but GuardedProtocol was checked against "
        f"{TESTED_UVICORN}: see this file's docstring and docs/protocol.md"
    )


def test_the_methods_relied_on_are_unchanged() -> None:
    sources = [inspect.getsource(getattr(HttpToolsProtocol, name)) for name in METHODS]
    sources += [
        inspect.getsource(HttpToolsProtocol.__init__),
        inspect.getsource(RequestResponseCycle.__init__),
    ]
    digest = hashlib.sha256("".join(sources).encode()).hexdigest()
    assert digest == TESTED_SOURCE_DIGEST, (
        "uvicorn's HttpToolsProtocol changed in the methods GuardedProtocol relies on: "
        "see this file's docstring and docs/protocol.md"
    )


def test_every_method_overridden_is_uvicorns_with_the_same_parameters() -> None:
    for name in METHODS:
        assert name in vars(HttpToolsProtocol), f"uvicorn no longer defines {name}"
        ours, theirs = getattr(GuardedProtocol, name), getattr(HttpToolsProtocol, name)
        assert list(inspect.signature(ours).parameters) == list(
            inspect.signature(theirs).parameters
        ), name


def test_the_state_relied_on_is_where_the_guards_look(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = connection(loop)
    for name in CONNECTION_STATE:
        assert hasattr(protocol, name), name
    assert protocol.transport is transport and isinstance(protocol.flow, FlowControl)
    assert protocol in protocol.connections and isinstance(protocol.pipeline, deque)
    assert isinstance(protocol.parser, httptools.HttpRequestParser)
    protocol.data_received(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    [cycle] = protocol.started
    assert cycle is protocol.cycle and isinstance(cycle, RequestResponseCycle)
    for name in CYCLE_STATE:
        assert hasattr(cycle, name), name
    assert isinstance(cycle.message_event, asyncio.Event)
    assert cycle.scope["path"] == "/a" and not cycle.response_complete
    assert hasattr(protocol.flow, "write_paused")


def test_a_pipelined_request_waits_in_the_pipeline_and_starts_on_the_answer(
    loop: asyncio.AbstractEventLoop,
) -> None:
    protocol, transport = connection(loop)
    protocol.data_received(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
    assert len(protocol.started) == 1 and len(protocol.pipeline) == 1
    assert not transport.reading  # uvicorn stops reading behind a pipelined request
    first = protocol.started[0]
    first.response_complete = True
    protocol.on_response_complete()
    assert [cycle.scope["path"] for cycle in protocol.started] == ["/a", "/b"]
    assert not protocol.pipeline and transport.reading


def test_trailers_reach_on_header_after_the_head(loop: asyncio.AbstractEventLoop) -> None:
    """httptools reports trailer fields through on_header: how GuardedProtocol sees them."""
    protocol, _ = connection(loop)
    protocol.data_received(
        b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"1\r\na\r\n0\r\nt1: v\r\n\r\n"
    )
    assert protocol.calls == [
        "header:Host",
        "header:Transfer-Encoding",
        "headers_complete",
        "header:t1",
    ]
