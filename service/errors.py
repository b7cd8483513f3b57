"""Errors the service raises around the engine: admission, the wire, access, table management.

They share the engine's base class, so the HTTP layer maps all of them in its one table.
"""

from __future__ import annotations

from service.engine.errors import EngineError


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
    """No valid key was presented; `invalid` tells a wrong key from a missing one."""

    def __init__(self, invalid: bool, admin: bool = False) -> None:
        needed = "an admin key" if admin else "an API key"
        problem = "the key presented is not valid" if invalid else "no key presented"
        super().__init__(f"{needed} is required as 'Authorization: Bearer <key>': {problem}")
        self.invalid = invalid


class TableExists(ServiceError):
    """A table with this name is already served; reload it instead."""

    def __init__(self, name: str) -> None:
        super().__init__(f"a table named {name!r} is already served; reload it", table=name)
