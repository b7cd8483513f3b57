"""What each client method sends and how it reads the answers, without doing any I/O.

A plan function (one per client method, one module per feature as the service has them)
validates its arguments, builds the request bodies and returns a `Plan`: the call, or the call
for each chunk of a batch, and the function that turns the answers into the typed result.
`Client` and `AsyncClient` run the same plans (exchange.py decides chunks and retries), so the
two can never disagree about a request or an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar
from urllib.parse import quote

T = TypeVar("T")
Answer = Any  # a decoded JSON answer


@dataclass(frozen=True)
class Call:
    """One HTTP request: its method, its path below the base URL and its JSON body."""

    method: str
    path: str
    body: dict[str, Any] | None = None


@dataclass(frozen=True)
class Plan(Generic[T]):
    """One method's requests and how their answers make its result.

    Without `items`, `request(())` is the one call. With them, `request(chunk)` is the call
    for a chunk of `items` (the exchange picks the chunks so each fits the server's limits) and
    `read` gets each chunk's answer in order.
    """

    request: Callable[[Sequence[Any]], Call]
    read: Callable[[list[Answer]], T]
    items: Sequence[Any] | None = None


def one_call(call: Call, read: Callable[[Answer], T]) -> Plan[T]:
    """A plan of a single request."""
    return Plan(request=lambda _: call, read=lambda answers: read(answers[0]))


def batched(
    call: Call, field: str, items: Sequence[Any], read: Callable[[list[Answer]], T]
) -> Plan[T]:
    """A plan that sends `items` in chunks, each chunk as the `field` of `call`'s body; `read`
    gets the chunks' answers in order."""
    if not items:
        raise ValueError("a batch needs at least one item")

    def request(chunk: Sequence[Any]) -> Call:
        return replace(call, body={**(call.body or {}), field: list(chunk)})

    return Plan(request=request, read=read, items=items)


def table_path(table: str, operation: str = "") -> str:
    """The path of a table, or of one of its operations."""
    path = f"/v1/tables/{quote(table, safe='')}"
    return f"{path}/{operation}" if operation else path


def post(table: str, operation: str, fields: dict[str, Any]) -> Call:
    """The call that posts `fields` to one of a table's operations."""
    return Call("POST", table_path(table, operation), fields)


def body(**fields: Any) -> dict[str, Any]:
    """A request body of the fields that are given (None means: the server's default)."""
    return {name: value for name, value in fields.items() if value is not None}


def merged_matched(answers: list[Answer]) -> dict[str, Any]:
    """The case-fallback and text matches of every chunk's answer together."""
    matched: dict[str, Any] = {}
    for answer in answers:
        matched.update(answer.get("matched") or {})
    return matched
