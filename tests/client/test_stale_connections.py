"""A kept-alive connection the server closes just as a request goes out on it (its idle
deadline, header_timeout_seconds) is reset with the request unread. The client sends such a
request once more, on a new connection; a second failure is still ConnectionLost."""

from __future__ import annotations

import asyncio

import pytest

from embedding_service import AsyncClient, Client
from embedding_service.errors import ConnectionLost, Unreachable
from tests.client.misbehaving import Behaviour, Request, answer, misbehaving, reset

ANSWER = b'{"tables": []}'


def answering(per_connection: int, connections: int) -> Behaviour:
    """Answer `per_connection` requests on a connection, then reset it at the next one; only
    the first `connections` connections answer at all."""

    def behaviour(request: Request) -> bool:
        if request.connection > connections or request.on_connection > per_connection:
            return reset(request)
        return answer(request, ANSWER)

    return behaviour


def test_a_request_reset_on_a_kept_alive_connection_is_sent_again_on_a_new_one() -> None:
    with misbehaving(answering(per_connection=1, connections=2)) as server:
        with Client(server.url) as client:
            assert client.tables() == []
            assert client.tables() == []  # its kept-alive connection is reset: sent again
        assert server.per_connection == [2, 1]


def test_the_async_client_sends_it_again_too() -> None:
    async def twice(url: str) -> list[object]:
        async with AsyncClient(url) as client:
            return [await client.tables(), await client.tables()]

    with misbehaving(answering(per_connection=1, connections=2)) as server:
        assert asyncio.run(twice(server.url)) == [[], []]
        assert server.per_connection == [2, 1]


def test_a_second_reset_is_connection_lost() -> None:
    with misbehaving(answering(per_connection=1, connections=1)) as server:
        with Client(server.url) as client:
            assert client.tables() == []
            with pytest.raises(ConnectionLost, match=r"reset|disconnected") as lost:
                client.tables()
        assert server.per_connection == [2, 1]
    assert isinstance(lost.value, Unreachable)
