"""AsyncClient: Client's methods, awaited, over one httpx.AsyncClient connection pool."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from embedding_service.base import BaseClient
from embedding_service.exchange import (
    STALE_CONNECTION,
    Outcome,
    Step,
    Wait,
    outcome_of,
    unanswered_as_unreachable,
)
from embedding_service.plans import Plan, methods

P = ParamSpec("P")
T = TypeVar("T")


def async_method(
    plan: Callable[P, Plan[T]],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    """The coroutine method that runs the plan function of the same name."""

    @functools.wraps(plan)
    async def method(self: AsyncClient, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(self._steps(plan(*args, **kwargs)))

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

    async def _run(self, steps: Generator[Step, Outcome, T]) -> T:
        outcome: Outcome = None
        try:
            while True:
                outcome = await self._perform(steps.send(outcome))
        except StopIteration as done:
            return done.value

    async def _perform(self, step: Step) -> Outcome:
        if isinstance(step, Wait):
            await asyncio.sleep(step.seconds)
            return None
        with unanswered_as_unreachable(self.url, step):
            try:
                response = await self._http.request(step.method, step.path, json=step.body)
            except STALE_CONNECTION:  # once more, on a new connection
                response = await self._http.request(step.method, step.path, json=step.body)
        return outcome_of(response)

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
