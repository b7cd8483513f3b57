"""The one door of a query: the request's bytes in, the answer's bytes (or the envelope) out.

POST /v1/tables/{table}/{operation} is answered by `answer` whichever way it came in: FastAPI's
route (service/api/query.py) or the direct path (service/api/edge.py); the CLI calls it too.
It checks the content type, parses the JSON, resolves the table, validates the body once,
decides from the validated query whether the answer may come from the cache, runs the
operation, and writes the answer or the error. `direct_queries` chooses the path to the door,
never an implementation, so both answer byte for byte alike.

The order of refusals is the routes' of old: 415, 400 (not JSON), 404/503 (the table), 422.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from pydantic import ValidationError

from service.engine.errors import EngineError
from service.errors import (
    JSON,
    Encoded,
    MalformedJSON,
    TooManyValues,
    UnsupportedMediaType,
    encode,
    invalid_request,
)
from service.loading.registry import Registry
from service.operations.catalog import Operation
from service.operations.context import Context
from service.operations.limits import Limits
from service.runtime.runtime import Runtime


@dataclass(frozen=True)
class Services:
    """What the door needs besides the request: the tables, the limits, the runtime."""

    registry: Registry
    limits: Limits
    runtime: Runtime

    def context(self, table_name: str) -> Context:
        """The context of a query on the table of that name (UnknownTable or TableNotReady
        otherwise)."""
        served = self.registry.serving.get(table_name)
        if served is None:
            served = self.registry.get(
                table_name
            )  # the error that says why (or a table just loaded)
        return Context(served, self.limits, self.runtime, self.registry)


# Bodies larger than this are parsed and validated on a worker thread. A body at the limits
# costs tens of milliseconds to parse and validate (an analogy batch of 256 x 16 terms and
# 1,000 exclusions each, 2.7 MB: 20 ms of orjson, 13 ms of pydantic), which the event loop
# would give no other connection; on a thread, it takes the loop only for its longest single
# call, as the GIL changes hands every switch_interval_ms between Python lines.
ON_LOOP_BYTES = 64 * 1024


def read_query(
    operation: Operation, table_name: str, body: bytes, content_type: str, services: Services
) -> tuple[Context, Any]:
    """The table's context and the validated query, refused in the routes' order."""
    data = parse_json(body, content_type, services.limits.settings.max_body_values)
    context = services.context(table_name)
    return context, validate(operation, data, services.limits)


async def answer(
    operation: Operation, table_name: str, body: bytes, content_type: str, services: Services
) -> Encoded:
    """The whole answer to one query request on the table of that name, an error envelope
    included."""
    try:
        if len(body) > ON_LOOP_BYTES:
            reading = (operation, table_name, body, content_type, services)
            context, query = await services.runtime.in_thread(read_query, *reading)
        else:
            context, query = read_query(operation, table_name, body, content_type, services)
        answered = await respond(operation, query, context)
    except EngineError as error:
        return encode(error)
    headers = [
        (b"content-type", JSON),
        (b"content-length", b"%d" % len(answered)),
        # Which content answered: behind a proxy, replicas may serve two versions of a table
        # while it is updated one replica at a time (docs/operations.md, "Updating a table").
        (b"table-version", context.served.version.encode()),
    ]
    return Encoded(200, headers, answered)


def parse_json(body: bytes, content_type: str, most_values: int) -> Any:
    """The body's JSON; UnsupportedMediaType, TooManyValues or MalformedJSON otherwise."""
    if not is_json(content_type):
        raise UnsupportedMediaType(content_type)
    if not body:
        return None  # no body at all: a request that is missing, as validation says
    # Every value takes at least a byte: a body shorter than the limit is within it uncounted.
    if len(body) >= most_values and values(body, most_values) > most_values:
        raise TooManyValues(most_values)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise MalformedJSON(str(error)) from None


# The bytes after which a JSON value can begin: every value but a document's first follows a
# comma or an opening bracket.
_VALUE_MARKS = (b",", b"[", b"{")


def values(body: bytes, most: int) -> int:
    """An upper bound on the JSON values `body` holds: one plus its commas and opening brackets
    outside strings. Parsing is the one cost paid before any check (a 4 MiB body of a million
    one-letter strings: 130 ms and 106 MB of orjson), so the bound is read from the bytes.

    First a count of every mark, in C (~3 ms for 4 MiB); only when that is over `most`, the
    count outside strings: escaped backslashes, then escaped quotes, are dropped (valid JSON
    has no backslash elsewhere) and a running parity of the quotes says which bytes are inside
    one (numpy, ~26 ms and 12 MB for 4 MiB of quotes, where splitting it took 180 ms, 105 MB).
    """
    count = 1 + sum(body.count(mark) for mark in _VALUE_MARKS)
    if count <= most:
        return count
    text = np.frombuffer(body.replace(b"\\\\", b"").replace(b'\\"', b""), dtype=np.uint8)
    inside = np.cumsum(text == ord('"'), dtype=np.uint8)  # wraps at 256: parity is kept
    inside &= 1
    marks = (text == ord(",")) | (text == ord("[")) | (text == ord("{"))
    return 1 + int(np.count_nonzero(marks)) - int(np.count_nonzero(marks & inside.view(bool)))


def validate(operation: Operation, data: Any, limits: Limits) -> Any:
    """The operation's request model of `data`; InvalidRequest (422) naming where and what,
    or LimitExceeded for a list over its setting, both found before any item is validated."""
    check_lengths(operation, data)
    check_configured(operation, data, limits)
    try:
        return operation.body.validate_python(data)
    except ValidationError as error:
        problems = error.errors(include_url=False, include_input=False, include_context=False)
        for problem in problems:
            loc = problem["loc"]
            if loc and loc[0] in operation.tags:
                problem["loc"] = loc[1:]
        raise invalid_request(
            [dict(problem) for problem in problems], error.error_count()
        ) from None


def check_lengths(operation: Operation, data: Any) -> None:
    """InvalidRequest for a top-level list longer than the schema allows, as pydantic words it,
    before any item is validated: a 4 MiB body of a million invalid items would otherwise cost
    seconds of validators and a million error dicts on the event loop."""
    if not isinstance(data, dict):
        return
    for name, most in operation.most_items.items():
        value = data.get(name)
        if isinstance(value, list) and len(value) > most:
            message = f"List should have at most {most} items after validation, not {len(value)}"
            raise invalid_request([{"type": "too_long", "loc": (name,), "msg": message}])


def check_configured(operation: Operation, data: Any, limits: Limits) -> None:
    """LimitExceeded for a list over the setting that bounds it, at the top level and in each
    query of a batch, before any item is validated: the same error the operation gives after
    validation, paid without it."""
    if not isinstance(data, dict):
        return
    queries = data.get("queries")
    for query in [data, *(queries if isinstance(queries, list) else ())]:
        if not isinstance(query, dict):
            continue
        for name, check in operation.configured:
            value = query.get(name)
            if isinstance(value, list):
                check(limits, len(value))


def is_json(content_type: str) -> bool:
    """application/json or application/<anything>+json, parameters ignored."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


async def respond(operation: Operation, query: Any, context: Context) -> bytes:
    """The JSON answer to one validated query: from the cache when it may be, else computed."""
    checkpoint = getattr(query, "checkpoint", None)
    if checkpoint is not None:
        context = await context.at_checkpoint(checkpoint)
    cache = context.runtime.cache
    cacheable = cache.enabled and operation.cacheable(query)
    key = cache_key(operation, query, context) if cacheable else None
    if key is not None:
        cached = cache.get(operation.name, key)
        if cached is not None:
            return cached
    answered = await operation.run(query, context)
    if key is not None:
        cache.put(key, answered)
    return answered


def cache_key(operation: Operation, query: Any, context: Context) -> bytes:
    """A digest of the table's load and index, the operation and the validated query in
    canonical form.

    The canonical form is the validated model serialised with every field, defaults included,
    in declaration order: whitespace, key order and omitted defaults do not make a new entry.
    """
    served = context.served
    digest = hashlib.blake2b(served.cache_prefix, digest_size=16)
    # An index attached after the load answers differently from the exhaustive pass before it.
    digest.update(b"%d\0" % served.indexing.attached)
    digest.update(operation.name.encode())
    digest.update(query.__pydantic_serializer__.to_json(query))
    return digest.digest()
