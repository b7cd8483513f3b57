"""Answers repeated token-keyed queries from the result cache before any routing or parsing.

A neighbour or analogy query that names only tokens has one answer per load of a table, so its
finished response can be replayed for the same body bytes. Looking it up here, below access
control and the admission limits but above FastAPI's routing, validation and dependencies,
makes a repeated query cost about as much as a health check.

The route decides what may be stored: it sets scope[CACHEABLE] for token-keyed queries, and
only their 200 answers are kept.
"""

from __future__ import annotations

from collections.abc import Hashable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.admission import is_json
from service.cache import ResultCache
from service.engine.errors import EngineError

CACHEABLE = "embedding_service.cacheable"
PREFIX = "/v1/tables/"
OPERATIONS = ("neighbors", "analogy")
JSON_HEADERS = [(b"content-type", b"application/json")]
VECTOR_FIELD = b'"vector"'


class ResponseCacheMiddleware:
    """Serve cached answers of POST /v1/tables/{table}/(neighbors|analogy); store new ones."""

    def __init__(self, app: ASGIApp, cache: ResultCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = target_of(scope) if self.cache.enabled else None
        if target is None:
            await self.app(scope, receive, send)
            return
        message = await receive()
        key = self._key(scope, target, message)
        if key is None:
            await self.app(scope, replay(message, receive), send)
            return
        cached = self.cache.get(target[1], key)
        if cached is not None:
            await answer_bytes(send, cached)
            return
        await self.app(scope, replay(message, receive), self._storing(scope, key, send))

    def _key(self, scope: Scope, target: tuple[str, str], message: Message) -> Hashable | None:
        """(table, its load time, operation, body), or None when this cannot be cached."""
        body = message.get("body", b"")
        # Raw vectors are never cached; skipping them here also keeps them out of the hit ratio.
        if message.get("more_body") or VECTOR_FIELD in body or not json_content(scope):
            return None
        table, operation = target
        try:
            served = scope["app"].state.registry.get(table)
        except EngineError:
            return None
        return (table, served.loaded_at, operation, body)

    def _storing(self, scope: Scope, key: Hashable, send: Send) -> Send:
        """A send that keeps a cacheable 200 answer's body."""
        status = 0

        async def store(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif status == 200 and scope.get(CACHEABLE) and not message.get("more_body"):
                self.cache.put(key, message.get("body", b""))
            await send(message)

        return store


def target_of(scope: Scope) -> tuple[str, str] | None:
    """(table, operation) for a POST to a cacheable query route."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    path: str = scope["path"]
    if not path.startswith(PREFIX):
        return None
    parts = path[len(PREFIX) :].split("/")
    if len(parts) != 2 or parts[1] not in OPERATIONS:
        return None
    return parts[0], parts[1]


def json_content(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return is_json(value.decode("latin-1"))
    return False


async def answer_bytes(send: Send, body: bytes) -> None:
    headers = [*JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def replay(message: Message, receive: Receive) -> Receive:
    """A receive that yields the message already taken, then whatever the client sends."""
    pending = True

    async def replay() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return message
        return await receive()

    return replay
