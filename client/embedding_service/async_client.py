"""AsyncClient: Client's methods, awaited, over one httpx.AsyncClient connection pool."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from embedding_service.base import BaseClient
from embedding_service.errors import TimedOut
from embedding_service.exchange import STALE_CONNECTION, Outcome, Step, Wait
from embedding_service.plans import Call, Plan, methods
from embedding_service.receiving import Body, body_failures, read_answer, request_failures

P = ParamSpec("P")
T = TypeVar("T")


def async_method(
    plan: Callable[P, Plan[T]],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    """The coroutine method that runs the plan function of the same name."""

    @functools.wraps(plan)
    async def method(self: AsyncClient, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(self._steps(plan(*args, **kwargs)), plan.__name__)

    return method


class AsyncClient(BaseClient):
    """Client's API for asyncio: `await AsyncClient(url).neighbors("minilm", "king")`."""

    def _connect(self, options: dict[str, Any]) -> None:
        self._http = httpx.AsyncClient(**options)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(self, steps: Generator[Step, Outcome, T], name: str) -> T:
        """The steps' result, within the call's timeout (its requests, retries and waits)."""
        outcome: Outcome = None
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    outcome = await self._perform(steps.send(outcome))
        except StopIteration as done:
            return done.value
        except TimeoutError:
            message = f"{self.url}: {name} did not end within the call's timeout ({self.timeout} s)"
            raise TimedOut(message) from None

    async def _perform(self, step: Step) -> Outcome:
        if isinstance(step, Wait):
            await asyncio.sleep(step.seconds)
            return None
        where = self._where(step.path)
        with request_failures(where):
            response = await self._send(step)
        try:
            body = Body(where, response, self.max_answer_bytes)
            with body_failures(where, response.status_code):
                async for raw in response.aiter_raw():
                    body.feed(raw)
        finally:
            await response.aclose()  # a body refused part way closes its connection
        return read_answer(where, response, body.finish())

    async def _send(self, call: Call) -> httpx.Response:
        """The answer's head, the body left to stream; a request a kept-alive connection lost
        is sent once more on a new one."""
        request = self._http.build_request(call.method, call.path, json=call.body)
        try:
            return await self._http.send(request, stream=True)
        except STALE_CONNECTION:  # once more, on a new connection
            return await self._http.send(request, stream=True)

    tables = async_method(methods.tables)
    table = async_method(methods.table)
    lookup = async_method(methods.lookup)
    neighbors = async_method(methods.neighbors)
    analogy = async_method(methods.analogy)
    similarity = async_method(methods.similarity)
    score = async_method(methods.score)
    cosines = async_method(methods.cosines)
    rank = async_method(methods.rank)
    tokenize = async_method(methods.tokenize)
    embed = async_method(methods.embed)
    detokenize = async_method(methods.detokenize)
    projection = async_method(methods.projection)
    project = async_method(methods.project)
    diagnostics = async_method(methods.diagnostics)
    evaluate = async_method(methods.evaluate)
    trajectory = async_method(methods.trajectory)
    drift = async_method(methods.drift)
