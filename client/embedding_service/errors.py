"""The service's error envelope as exceptions: one class per error type the server answers.

Every error answer is {"error": {"type", "message", ...details}}; `error_from_answer` turns it
into the class named by its type (or, for a type this client does not know, the class its status
implies), with the details as attributes. Nothing here retries: that is `retrying.py`'s call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ServiceError(Exception):
    """An error the service answered (or a failure to reach it): status, type, message, details."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        kind: str | None = None,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = kind or type(self).__name__
        self.details = details or {}
        self.retry_after = retry_after

    def __str__(self) -> str:
        status = f"{self.status} " if self.status else ""
        return f"{status}{self.type}: {self.message}"


class Detail(Generic[T]):
    """One detail of the error envelope, read as an attribute (`error.tokens`)."""

    def __init__(self, convert: Callable[[Any], T], missing: Any) -> None:
        self.convert = convert
        self.missing = missing

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, error: ServiceError | None, owner: type | None = None) -> T:
        if error is None:
            raise AttributeError(f"{self.name} is a detail of an error, not of its class")
        try:
            return self.convert(error.details.get(self.name, self.missing))
        except (TypeError, ValueError):  # a detail of another type than the API's
            return self.convert(self.missing)


class Unreachable(ServiceError):
    """The request got no answer: the connection was refused, or failed before one began."""


class ConnectionLost(Unreachable):
    """The connection was reset or closed before an answer began (after one resend on a new
    connection: exchange.STALE_CONNECTION)."""


class TimedOut(Unreachable):
    """The call did not end within the client's `timeout` (connecting, sending, waiting for the
    answer or reading it, its retries and their waits included)."""


class BadAnswer(ServiceError):
    """An answer came that is not one of the API's; `status` is its HTTP status."""


class AnswerTooLarge(BadAnswer):
    """The answer's body, decompressed, is longer than the client's `max_answer_bytes`: `limit`.
    The client stopped reading there."""

    limit: Detail[int] = Detail(int, 0)


class TruncatedAnswer(BadAnswer):
    """The connection was closed or reset before the answer's end."""


class InvalidHTTP(BadAnswer):
    """What the server sent is not HTTP/1.1: a status line, header or chunk that does not parse."""


class NotJSONAnswer(BadAnswer):
    """A success whose content type is not JSON (a proxy's HTML page, say)."""


class MalformedAnswer(BadAnswer):
    """An answer that does not parse: invalid JSON or UTF-8, or a compressed body that does not
    decompress (or in an encoding the client did not ask for)."""


class AnswerTooDeep(BadAnswer):
    """JSON nested deeper than Python's parser recurses (no answer of the API nests so)."""


class UnexpectedAnswer(BadAnswer):
    """Valid JSON of a shape the API does not answer: a field missing or of another type."""


class NotFound(ServiceError):
    """The request names something the service does not have."""


class UnknownToken(NotFound):
    """Tokens not in the table; `tokens` names every one of them."""

    tokens: Detail[list[str]] = Detail(list, [])


class UnknownId(NotFound):
    """Ids outside the table's rows: `ids`."""

    ids: Detail[list[int]] = Detail(list, [])


class UnknownTable(NotFound):
    """No table is served under this name; `available` lists the served ones."""

    available: Detail[list[str]] = Detail(list, [])


class UnknownCheckpoint(NotFound):
    """A checkpoint index outside the table's checkpoint set."""


class InvalidRequest(ServiceError):
    """The request is well formed HTTP but the service refuses what it asks."""


class ValidationError(InvalidRequest):
    """The body does not match the endpoint's schema; `errors` says where (loc, msg, type)."""

    errors: Detail[list[dict[str, Any]]] = Detail(list, [])


class LimitExceeded(InvalidRequest):
    """The request asks for more than a configured limit: the `limit`, and what it asked, `got`."""

    limit: Detail[int] = Detail(int, 0)
    got: Detail[int] = Detail(int, 0)


class BodyTooLarge(InvalidRequest):
    """The request body is longer than the server accepts: `limit`, in bytes."""

    limit: Detail[int] = Detail(int, 0)


class TooManyValues(BodyTooLarge):
    """The body holds more JSON values than the server parses (its max_body_values): `limit`.
    A batch splits, as for BodyTooLarge."""


class DimensionMismatch(InvalidRequest):
    """A vector's length differs from the table's width."""


class ZeroVector(InvalidRequest):
    """A query has no direction (a zero row, or terms that cancel out)."""


class InvalidVector(InvalidRequest):
    """A vector component is NaN, infinite or too large."""


class InvalidQuery(InvalidRequest):
    """A well-formed query that cannot be answered as asked."""


class SeveralPieces(InvalidRequest):
    """A text stands for one token but is several `pieces` (at most the first 64 are named)."""

    pieces: Detail[list[str]] = Detail(list, [])


class EmptyText(InvalidRequest):
    """A text with no pieces at all."""


class MalformedJSON(InvalidRequest):
    """The body is not valid JSON."""


class Unauthorized(ServiceError):
    """No valid API key was presented."""


class Retryable(ServiceError):
    """The service cannot answer now but may soon; `retry_after` is its advice in seconds."""


class Overloaded(Retryable):
    """Load is shed (429): too much is queued or in flight."""


class NotReady(Retryable):
    """The service is not ready (503): tables are still loading."""


class TableNotReady(NotReady):
    """This table is not loaded and indexed yet (503)."""


class InternalError(ServiceError):
    """The service failed (5xx); it has logged why."""


ERRORS_BY_TYPE: dict[str, type[ServiceError]] = {
    cls.__name__: cls
    for cls in (
        UnknownToken,
        UnknownId,
        UnknownTable,
        UnknownCheckpoint,
        ValidationError,
        LimitExceeded,
        BodyTooLarge,
        TooManyValues,
        DimensionMismatch,
        ZeroVector,
        InvalidVector,
        InvalidQuery,
        SeveralPieces,
        EmptyText,
        MalformedJSON,
        Unauthorized,
        Overloaded,
        NotReady,
        TableNotReady,
        InternalError,
    )
}


ERRORS_BY_STATUS: dict[int, type[ServiceError]] = {
    401: Unauthorized,
    404: NotFound,
    429: Overloaded,
    503: NotReady,
}


def class_of_status(status: int) -> type[ServiceError]:
    """The most specific class a status alone implies (for answers without a known type)."""
    if status in ERRORS_BY_STATUS:
        return ERRORS_BY_STATUS[status]
    if status >= 500:
        return InternalError
    return InvalidRequest if status >= 400 else ServiceError


def error_from_answer(status: int, body: Any, retry_after: str | None) -> ServiceError:
    """The exception for an error answer: its envelope's type, or its status when it has none."""
    envelope = body.get("error") if isinstance(body, dict) else None
    if not isinstance(envelope, dict):
        # Never repr() a parsed body: one nested a few hundred deep exceeds the recursion limit.
        text = body if isinstance(body, str) else f"an answer without the error envelope ({status})"
        cls = class_of_status(status)
        return cls(
            text[:200], status=status, kind=f"HTTP{status}", retry_after=seconds(retry_after)
        )
    details = {key: value for key, value in envelope.items() if key not in ("type", "message")}
    kind = _text(envelope.get("type")) or f"HTTP{status}"
    cls = ERRORS_BY_TYPE.get(kind) or class_of_status(status)
    message = _text(envelope.get("message"))
    return cls(message, status=status, kind=kind, details=details, retry_after=seconds(retry_after))


def _text(value: Any) -> str:
    """A field the envelope gives as a string; anything else is left out (never str() of a
    parsed value, which may nest deeper than the recursion limit)."""
    return value if isinstance(value, str) else ""


def seconds(retry_after: str | None) -> float | None:
    """A Retry-After header in seconds: a number of seconds, or an HTTP date from now."""
    if retry_after is None:
        return None
    text = retry_after.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": a UTC time of unknown origin (RFC 5322)
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
