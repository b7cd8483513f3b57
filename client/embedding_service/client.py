"""Client: every method of the service's HTTP API, synchronously, over one httpx connection pool."""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from embedding_service.base import BaseClient, run_steps
from embedding_service.deadline import call_deadline, keep_call_deadlines, remaining
from embedding_service.errors import TimedOut
from embedding_service.exchange import STALE_CONNECTION, Outcome, Step, Wait
from embedding_service.plans import Call, Plan, methods
from embedding_service.receiving import Body, body_failures, read_answer, request_failures

P = ParamSpec("P")
T = TypeVar("T")


def sync_method(plan: Callable[P, Plan[T]]) -> Callable[Concatenate[Client, P], T]:
    """The client method that runs the plan function of the same name and returns its result."""

    @functools.wraps(plan)
    def method(self: Client, *args: P.args, **kwargs: P.kwargs) -> T:
        steps = self._steps(plan(*args, **kwargs))
        with call_deadline(self.timeout):
            return run_steps(steps, self._perform)

    return method


class Client(BaseClient):
    """The service's API: `Client("http://127.0.0.1:8000").neighbors("minilm", "king")`."""

    def _connect(self, options: dict[str, Any]) -> None:
        self._http = httpx.Client(**options)
        keep_call_deadlines(self._http)
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
        where = self._where(step.path)
        with request_failures(where):
            response = self._send(step)
        try:
            body = Body(where, response, self.max_answer_bytes)
            with body_failures(where, response.status_code):
                for raw in response.iter_raw():
                    body.feed(raw)
        finally:
            response.close()  # a body refused part way closes its connection
        return read_answer(where, response, body.finish())

    def _send(self, call: Call) -> httpx.Response:
        """The answer's head, the body left to stream; a request a kept-alive connection lost
        is sent once more on a new one."""
        left = remaining()
        if left is not None and left <= 0:
            raise TimedOut(f"{self._where(call.path)}: the call's timeout passed before it")
        timeout: Any = httpx.USE_CLIENT_DEFAULT if left is None else left
        request = self._http.build_request(call.method, call.path, json=call.body, timeout=timeout)
        try:
            return self._http.send(request, stream=True)
        except STALE_CONNECTION:  # once more, on a new connection
            return self._http.send(request, stream=True)

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
