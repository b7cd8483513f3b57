"""FastAPI's side of the one error envelope: its exceptions answered through errors.encode.

The status mapping and the envelope itself live in service/errors.py, shared with the query
door, the connection guards and the responder while tables load. This module adds the
OpenAPI description of the envelope and the handlers for what FastAPI raises on its own
routes (path and admin-body validation, 404/405, and bugs).
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException

from service.engine.errors import EngineError
from service.errors import HTTPError, InternalError, MalformedJSON, encode, invalid_request

LOGGER = logging.getLogger("service.errors")


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


def error_response(error: EngineError) -> Response:
    """The envelope of `error` as a Starlette response."""
    encoded = encode(error)
    response = Response(encoded.body, encoded.status)
    response.raw_headers = encoded.headers
    return response


async def _engine_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, EngineError)
    return error_response(error)


async def _validation_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    problems = list(error.errors())
    for problem in problems:
        if problem.get("type") == "json_invalid":
            reason = (problem.get("ctx") or {}).get("error", "decode error")
            return error_response(MalformedJSON(reason))
    # A body parameter's location starts with "body": internal to FastAPI, not the client's.
    for problem in problems:
        loc = tuple(problem.get("loc", ()))
        if loc[:1] == ("body",):
            problem["loc"] = loc[1:]
    return error_response(invalid_request(problems))


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    headers = dict(error.headers) if error.headers else None
    return error_response(HTTPError(error.status_code, str(error.detail), headers))


async def _unexpected_error(request: Request, error: Exception) -> Response:
    """A bug: logged with its traceback, answered in the envelope without internals."""
    LOGGER.error("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    return error_response(InternalError())


def install_error_handlers(app: FastAPI) -> None:
    """Route every error the app can raise through the one envelope."""
    app.add_exception_handler(EngineError, _engine_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
