"""Client: every method of the service's HTTP API, synchronously, over one httpx connection pool."""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from embedding_service.base import BaseClient, run_steps
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


def sync_method(plan: Callable[P, Plan[T]]) -> Callable[Concatenate[Client, P], T]:
    """The client method that runs the plan function of the same name and returns its result."""

    @functools.wraps(plan)
    def method(self: Client, *args: P.args, **kwargs: P.kwargs) -> T:
        return run_steps(self._steps(plan(*args, **kwargs)), self._perform)

    return method


class Client(BaseClient):
    """The service's API: `Client("http://127.0.0.1:8000").neighbors("minilm", "king")`."""

    def _connect(self, options: dict[str, Any]) -> None:
        self._http = httpx.Client(**options)
        # A client dropped without close() (a notebook's, say) still closes its connections,
        # instead of leaving their sockets to the garbage collector's warnings.
        self._closer = weakref.finalize(self, self._http.close)

    def close(self) -> None:
        """Close the connections."""
        self._closer()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _perform(self, step: Step) -> Outcome:
        if isinstance(step, Wait):
            time.sleep(step.seconds)
            return None
        with unanswered_as_unreachable(self.url, step):
            try:
                response = self._http.request(step.method, step.path, json=step.body)
            except STALE_CONNECTION:  # once more, on a new connection
                response = self._http.request(step.method, step.path, json=step.body)
        return outcome_of(response)

    tables = sync_method(methods.tables)
    table = sync_method(methods.table)
    lookup = sync_method(methods.lookup)
    neighbors = sync_method(methods.neighbors)
    analogy = sync_method(methods.analogy)
    similarity = sync_method(methods.similarity)
    score = sync_method(methods.score)
    cosines = sync_method(methods.cosines)
    rank = sync_method(methods.rank)
    tokenize = sync_method(methods.tokenize)
    embed = sync_method(methods.embed)
    detokenize = sync_method(methods.detokenize)
    projection = sync_method(methods.projection)
    project = sync_method(methods.project)
    diagnostics = sync_method(methods.diagnostics)
    evaluate = sync_method(methods.evaluate)
    trajectory = sync_method(methods.trajectory)
    drift = sync_method(methods.drift)
