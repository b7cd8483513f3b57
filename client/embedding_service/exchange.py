"""A plan's requests, one after another: chunks cut by batching.py, refusals retried by retrying.py.

`exchange` is a generator so that Client and AsyncClient share every decision and differ only
in how they carry out a step: it yields a Call to send (and is sent back the answer, or the
ServiceError the answer is) or a Wait to sleep through (and is sent None). It returns the
plan's result, or raises the error the exchange ends with.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import TypeVar

import httpx

from embedding_service.batching import Chunks, Limits
from embedding_service.errors import BodyTooLarge, LimitExceeded, ServiceError, UnexpectedAnswer
from embedding_service.plans import Answer, Call, Plan
from embedding_service.retrying import RetryPolicy

T = TypeVar("T")


@dataclass(frozen=True)
class Wait:
    """Sleep this long before the next step."""

    seconds: float


Step = Call | Wait
Outcome = Answer | ServiceError | None
# Asked once per client before its first batch: the server's configured limits.
LIMITS = Call("GET", "/v1/limits")
# A kept-alive connection the server closes while idle (header_timeout_seconds after its last
# answer) can take a request in the moment it closes: the request is then reset or left without
# an answer. No answer began, and every call of this client only reads, so such a request is
# sent once more, on a new connection (RFC 9112, 9.3.1, allows it for idempotent requests);
# a second failure is raised (ConnectionLost). The retry policy (429 and 503) is separate.
STALE_CONNECTION = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def exchange(plan: Plan[T], limits: Limits, policy: RetryPolicy) -> Generator[Step, Outcome, T]:
    """The steps that answer `plan`; returns its result."""
    started = time.monotonic()
    if plan.items is None:
        outcome = yield from _attempts(plan.request(()), policy, started)
        return _read(plan, [_answer(outcome)])
    if limits.unknown:
        published = yield from _attempts(LIMITS, policy, started)
        limits.published(None if isinstance(published, ServiceError) else published)
    chunks = Chunks(plan.items, limits)
    answers: list[Answer] = []
    while (chunk := chunks.next()) is not None:
        outcome = yield from _attempts(plan.request(chunk), policy, started)
        if isinstance(outcome, LimitExceeded | BodyTooLarge):
            chunks.refused(outcome, len(chunk))
            continue
        answers.append(_answer(outcome))
        chunks.answered(len(chunk))
    return _read(plan, answers)


def _attempts(
    call: Call, policy: RetryPolicy, started: float
) -> Generator[Step, Outcome, Answer | ServiceError]:
    """The call's answer, or the error it still ends with once no retry is left."""
    attempt = 0
    while True:
        outcome = yield call
        if not isinstance(outcome, ServiceError):
            return outcome
        delay = policy.delay(outcome, attempt, time.monotonic() - started)
        if delay is None:
            return outcome
        yield Wait(delay)
        attempt += 1


def _read(plan: Plan[T], answers: list[Answer]) -> T:
    """The plan's result from its answers; an answer of another shape than the API's (a field
    missing or of another type, a vector that is not base64) is UnexpectedAnswer."""
    try:
        return plan.read(answers)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as error:
        path = plan.request(plan.items[:1] if plan.items else ()).path
        raise UnexpectedAnswer(f"{path}: an answer the API does not give ({error!r})") from None


def _answer(outcome: Answer | ServiceError) -> Answer:
    if isinstance(outcome, ServiceError):
        raise outcome
    return outcome
