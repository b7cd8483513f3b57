"""The one mapping from error type to HTTP status, and the one error envelope.

Every error response is {"error": {"type": ..., "message": ..., <details>}}.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException

from service import errors as service_errors
from service.engine import errors
from service.metrics import ERRORS

LOGGER = logging.getLogger("service.errors")

STATUS_BY_ERROR: dict[type[errors.EngineError], int] = {
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
    service_errors.Unauthorized: 401,
    service_errors.TableExists: 409,
    service_errors.BodyTooLarge: 413,
    service_errors.BodyTimeout: 408,
    service_errors.HeadTimeout: 408,
    service_errors.HeadersTooLarge: 431,
    service_errors.FramingTooLarge: 400,
    service_errors.TrailersRefused: 400,
    service_errors.UnsupportedMediaType: 415,
    # 429, not 503: shedding load is the service working as designed, and callers retry it.
    service_errors.Overloaded: 429,
}

# Realm named in WWW-Authenticate challenges (RFC 6750).
REALM = "embedding-service"


class ErrorDetail(BaseModel):
    """What went wrong: a type to branch on, a sentence to read, and type-specific details."""

    model_config = ConfigDict(extra="allow")

    type: str
    message: str


class ErrorResponse(BaseModel):
    """The one error envelope."""

    error: ErrorDetail


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries documenting the envelope for each status."""
    return {
        status: {"model": ErrorResponse, "description": HTTPStatus(status).phrase}
        for status in statuses
    }


def error_response(
    status: int,
    error_type: str,
    message: str,
    headers: dict[str, str] | None = None,
    **details: Any,
) -> JSONResponse:
    """The error envelope, counted by type."""
    ERRORS.labels(error_type).inc()
    body = {"error": {"type": error_type, "message": message, **details}}
    return JSONResponse(body, status_code=status, headers=headers)


def status_of(error: errors.EngineError) -> int:
    """The status for a domain error: its own class's entry, else its nearest base's."""
    for cls in type(error).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 422


def headers_of(error: errors.EngineError) -> dict[str, str] | None:
    """Headers a status needs: Retry-After when shedding load, a challenge when unauthorised."""
    if isinstance(error, service_errors.Overloaded):
        return {"Retry-After": str(error.retry_after)}
    if isinstance(error, service_errors.Unauthorized):
        challenge = f'Bearer realm="{REALM}"'
        if error.invalid:
            challenge += ', error="invalid_token"'
        return {"WWW-Authenticate": challenge}
    return None


def engine_error_response(error: errors.EngineError) -> JSONResponse:
    """The envelope for a domain error, with its status and headers from the one mapping."""
    return error_response(
        status_of(error), error.type, error.message, headers_of(error), **error.details
    )


async def _engine_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, errors.EngineError)
    return engine_error_response(error)


async def _validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    for problem in error.errors():
        if problem.get("type") == "json_invalid":
            reason = (problem.get("ctx") or {}).get("error", "decode error")
            return error_response(400, "MalformedJSON", f"request body is not valid JSON: {reason}")
    problems = [_describe(problem) for problem in error.errors()]
    summary = "; ".join(f"{'.'.join(map(str, p['loc']))}: {p['msg']}" for p in problems[:5])
    return error_response(422, "ValidationError", summary, errors=problems)


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    name = HTTPStatus(error.status_code).phrase.replace(" ", "").replace("-", "")
    headers = dict(error.headers) if error.headers else None
    return error_response(error.status_code, name, str(error.detail), headers=headers)


async def _unexpected_error(request: Request, error: Exception) -> JSONResponse:
    """A bug: logged with its traceback, answered in the envelope without internals."""
    LOGGER.error("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    return error_response(500, "InternalError", "internal error; it has been logged")


def _describe(problem: Any) -> dict[str, Any]:
    """Where and what, without echoing the (possibly huge) input back."""
    return {
        "loc": list(problem.get("loc", ())),
        "msg": problem.get("msg"),
        "type": problem.get("type"),
    }


def install_error_handlers(app: FastAPI) -> None:
    """Route every error the app can raise through the one envelope."""
    app.add_exception_handler(errors.EngineError, _engine_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
