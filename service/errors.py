"""Errors the service raises around the engine, the one mapping from error to HTTP status, and
the one encoder of the error envelope.

Every error answer, whoever writes it (the query door, FastAPI's handlers, the connection
guards, the responder while tables load), is `encode(error)`:
{"error": {"type": ..., "message": ..., <details>}}, with its status and headers from
STATUS_BY_ERROR and headers_of, and counted in errors_total by type.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus

import orjson

from service.engine import errors
from service.engine.errors import EngineError
from service.metrics import ERRORS

# Realm named in WWW-Authenticate challenges (RFC 6750).
REALM = "embedding-service"


class ServiceError(EngineError):
    """Base of the errors raised by the service itself rather than by a query."""


class Overloaded(ServiceError):
    """Too much work is queued or in flight; the caller should retry after a pause."""

    def __init__(self, what: str, limit: int, retry_after: int) -> None:
        super().__init__(
            f"overloaded: {what} is at its limit of {limit}; retry after {retry_after} s",
            limit=limit,
            retry_after=retry_after,
        )
        self.retry_after = retry_after


class AnalysisTimeout(ServiceError):
    """An analysis did not finish within its deadline; its work was abandoned."""

    def __init__(self, seconds: float, retry_after: int) -> None:
        super().__init__(
            f"the analysis did not finish within {seconds:g} s (analysis_timeout_seconds) and "
            "was abandoned: ask for less, or retry when the server is less busy",
            seconds=seconds,
            retry_after=retry_after,
        )
        self.retry_after = retry_after


class BodyTooLarge(ServiceError):
    """The request body is longer than the configured limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is larger than the limit of {limit} bytes", limit=limit)


class BodyTimeout(ServiceError):
    """The request body did not arrive within the deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the request body did not arrive within {seconds:g} s; the connection is closed",
            seconds=seconds,
        )


class BodyTooSlow(BodyTimeout):
    """The request body arrives slower than the minimum rate."""

    def __init__(self, rate: int) -> None:
        ServiceError.__init__(
            self,
            f"the request body arrived slower than {rate} bytes/s; the connection is closed",
            rate=rate,
        )


class TooManyValues(ServiceError):
    """The JSON body holds more values than the server parses (max_body_values)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"request body holds more than {limit} JSON values (numbers, strings, objects, "
            "arrays); split it, or send vectors as vectors_b64",
            limit=limit,
        )


class HeadersTooLarge(ServiceError):
    """The request head (request line and headers) is longer than the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request headers are larger than the limit of {limit} bytes", limit=limit)


class FramingTooLarge(ServiceError):
    """A chunked body's size lines and extensions outgrow the body itself."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the chunked body's size lines and extensions are larger than the body plus "
            f"{limit} bytes; the connection is closed",
            limit=limit,
        )


class TrailersRefused(ServiceError):
    """A chunked request sent header fields after its body (trailers)."""

    def __init__(self) -> None:
        super().__init__(
            "request trailers are not accepted: send every header field before the body; the "
            "connection is closed"
        )


class HeadTimeout(ServiceError):
    """The request head did not arrive within the deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the request headers did not arrive within {seconds:g} s; the connection is closed",
            seconds=seconds,
        )


class UnsupportedMediaType(ServiceError):
    """The body is not declared as JSON."""

    def __init__(self, content_type: str) -> None:
        super().__init__(
            f"request body must be application/json, got {content_type or 'no content type'!r}",
            content_type=content_type,
        )


class Unauthorized(ServiceError):
    """No valid key was presented: none, or a wrong one (the challenge header says which)."""

    def __init__(self, invalid: bool, admin: bool = False) -> None:
        needed = "an admin key" if admin else "an API key"
        problem = "the key presented is not valid" if invalid else "no key presented"
        super().__init__(f"{needed} is required as 'Authorization: Bearer <key>': {problem}")
        self.invalid = invalid


class TableExists(ServiceError):
    """A table with this name is already served; reload it instead."""

    def __init__(self, name: str) -> None:
        super().__init__(f"a table named {name!r} is already served; reload it", table=name)


class AdminOff(ServiceError):
    """The admin routes are not mounted: no admin key is configured."""

    def __init__(self) -> None:
        super().__init__(
            "the admin routes are off: they are on when an admin key is configured "
            "(admin_key or admin_key_file) with admin_tables_dir, the only folder tables may be "
            "added from (docs/settings.md)"
        )


class NotReady(ServiceError):
    """The process is not ready to serve (tables loading, or shutting down)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)


class MalformedJSON(ServiceError):
    """The body is not valid JSON."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"request body is not valid JSON: {reason}")


class InvalidRequest(ServiceError):
    """The body is JSON but not a valid request; `errors` says where and what (no input)."""

    def __init__(self, summary: str, problems: list[dict[str, object]]) -> None:
        super().__init__(summary, errors=problems)

    @property
    def type(self) -> str:
        """Named as clients have always seen it."""
        return "ValidationError"


class HTTPError(ServiceError):
    """A plain HTTP error (404 Not Found, 405 Method Not Allowed, ...) in the envelope."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers

    @property
    def type(self) -> str:
        """The status phrase without spaces: NotFound, MethodNotAllowed."""
        return HTTPStatus(self.status).phrase.replace(" ", "").replace("-", "")


class InternalError(ServiceError):
    """A bug: logged with its traceback where it happened, answered without internals."""

    def __init__(self) -> None:
        super().__init__("internal error; it has been logged")


STATUS_BY_ERROR: dict[type[EngineError], int] = {
    errors.UnknownToken: 404,
    errors.UnknownId: 404,
    errors.UnknownCheckpoint: 404,
    errors.UnknownTable: 404,
    errors.TableNotReady: 503,
    errors.DimensionMismatch: 422,
    errors.ZeroVector: 422,
    errors.InvalidQuery: 422,
    errors.InvalidVector: 422,
    errors.LimitExceeded: 422,
    errors.SeveralPieces: 422,
    errors.EmptyText: 422,
    errors.TableLoadError: 422,
    Unauthorized: 401,
    TableExists: 409,
    BodyTooLarge: 413,
    TooManyValues: 413,
    BodyTimeout: 408,
    BodyTooSlow: 408,
    HeadTimeout: 408,
    HeadersTooLarge: 431,
    FramingTooLarge: 400,
    TrailersRefused: 400,
    UnsupportedMediaType: 415,
    MalformedJSON: 400,
    InvalidRequest: 422,
    NotReady: 503,
    AnalysisTimeout: 503,
    InternalError: 500,
    AdminOff: 404,
    # 429, not 503: shedding load is the service working as designed, and callers retry it.
    Overloaded: 429,
}
JSON = b"application/json"


@dataclass(frozen=True)
class Encoded:
    """An answer ready for the wire: status, headers (content-type first) and body."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


def status_of(error: EngineError) -> int:
    """The status for an error: its own class's entry, else its nearest base's."""
    if isinstance(error, HTTPError):
        return error.status
    for cls in type(error).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 422


def headers_of(error: EngineError) -> dict[str, str]:
    """Headers a status needs: Retry-After when shedding load or not ready, a challenge when
    unauthorised, what a plain HTTP error carries."""
    if isinstance(error, Overloaded | AnalysisTimeout):
        return {"Retry-After": str(error.retry_after)}
    if isinstance(error, errors.TableNotReady | NotReady):
        return {"Retry-After": "1"}
    if isinstance(error, Unauthorized):
        challenge = f'Bearer realm="{REALM}"'
        if error.invalid:
            challenge += ', error="invalid_token"'
        return {"WWW-Authenticate": challenge}
    if isinstance(error, HTTPError) and error.headers:
        return dict(error.headers)
    return {}


def encode(error: EngineError) -> Encoded:
    """The envelope of `error` with its status and headers, counted in errors_total."""
    ERRORS.labels(error.type).inc()
    body = orjson.dumps({"error": {"type": error.type, "message": error.message, **error.details}})
    headers = [(b"content-type", JSON), (b"content-length", str(len(body)).encode())]
    headers += [
        (name.lower().encode(), value.encode()) for name, value in headers_of(error).items()
    ]
    return Encoded(status_of(error), headers, body)


# Problems listed in a ValidationError answer, at most: the summary names the first few.
LISTED_PROBLEMS = 100
SUMMARISED_PROBLEMS = 5


def invalid_request(problems: list[dict[str, object]], total: int | None = None) -> InvalidRequest:
    """The 422 for pydantic's error dicts: where and what, never the input itself."""
    shown = [_described(problem) for problem in problems[:LISTED_PROBLEMS]]
    summary = "; ".join(_located(problem) for problem in shown[:SUMMARISED_PROBLEMS])
    total = len(problems) if total is None else total
    if total > SUMMARISED_PROBLEMS:
        summary += f"; and {total - SUMMARISED_PROBLEMS} more"
    return InvalidRequest(summary, shown)


def _described(problem: dict[str, object]) -> dict[str, object]:
    message = str(problem.get("msg", ""))
    # pydantic prefixes a validator's own ValueError message; the message says enough.
    message = message.removeprefix("Value error, ")
    return {"loc": list(problem.get("loc", ())), "msg": message, "type": problem.get("type")}  # type: ignore[call-overload]


def _located(problem: dict[str, object]) -> str:
    where = ".".join(map(str, problem["loc"]))  # type: ignore[call-overload]
    return f"{where}: {problem['msg']}" if where else str(problem["msg"])
