"""Answering text embeddings: OpenAI's POST /v1/embeddings and TEI's POST /embed.

The table is named in the body (OpenAI's `model`), or is the configured one (TEI names none:
`embed_table`, else the first static embedding model served), so these requests come through
`answer` here rather than the door (operations/door.py, whose table is the path's); it parses,
validates and answers them with the door's own steps and writes errors in the one envelope.
Every bound is checked before a text is split: the inputs (max_embedding_inputs) and each
text's characters or ids (max_embedding_text_length) on the parsed JSON, before validation,
then the table, the ids and the width asked for. The texts are split and pooled on the
embedding batcher's worker (runtime/runtime.py), with other requests' texts.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import orjson
from pydantic import TypeAdapter

from service.engine.errors import EngineError, InvalidQuery, TableNotReady
from service.engine.served import ServedTable
from service.engine.tables.embedding import TextItem, check_dimensions, static_of
from service.errors import JSON, Encoded, encode
from service.operations.catalog import Operation
from service.operations.context import Context
from service.operations.door import ON_LOOP_BYTES, Services, parse_json, validate
from service.operations.limits import Limits, within
from service.schemas.embedding import EmbeddingsRequest, EmbeddingsResponse, EmbedRequest


async def embeddings(body: EmbeddingsRequest, context: Context) -> bytes:
    """OpenAI's embeddings answer: one vector per input, as floats or base64, and the usage."""
    table = context.served.table
    check_dimensions(static_of(table), table.width, body.dimensions)
    texts, ids = inputs_of(body)
    table.check_ids([i for one in ids for i in one])  # UnknownId (404) outside the rows
    item = TextItem(table, texts, ids, dimensions=body.dimensions)
    embedded = await context.runtime.embed.submit(item)
    data = [
        {"object": "embedding", "index": index, "embedding": _encoded(vector, body.encoding_format)}
        for index, vector in enumerate(embedded.vectors)
    ]
    tokens = sum(embedded.pieces)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    answer = {"object": "list", "data": data, "model": context.served.name, "usage": usage}
    return orjson.dumps(answer, option=orjson.OPT_SERIALIZE_NUMPY)


def inputs_of(body: EmbeddingsRequest) -> tuple[list[str], list[list[int]]]:
    """The request's texts, or its lists of token ids (one list alone is one input)."""
    given = body.input
    if isinstance(given, str):
        return [given], []
    texts = [one for one in given if isinstance(one, str)]
    lists = [one for one in given if isinstance(one, list)]
    numbers = [one for one in given if isinstance(one, int)]
    return texts, [numbers] if numbers else lists


def _encoded(vector: np.ndarray, encoding: str) -> np.ndarray | str:
    """A vector as floats (orjson writes float32s as they are) or base64 of float32s."""
    if encoding == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode()
    return vector


async def embed(body: EmbedRequest, context: Context) -> bytes:
    """TEI's embed answer: a list of vectors, one per input."""
    table = context.served.table
    check_dimensions(static_of(table), table.width, body.dimensions)
    texts = body.inputs if isinstance(body.inputs, list) else [body.inputs]
    item = TextItem(table, texts, (), body.normalize, body.dimensions)
    embedded = await context.runtime.embed.submit(item)
    if not body.truncate:
        _check_uncut(context.served, embedded.cut)
    return orjson.dumps(embedded.vectors, option=orjson.OPT_SERIALIZE_NUMPY)


def _check_uncut(served: ServedTable, cut: list[bool]) -> None:
    """TEI's truncate=false: a text the model would not read whole is refused."""
    refused = [index for index, one in enumerate(cut) if one]
    if refused:
        static = static_of(served.table)
        raise InvalidQuery(
            f"input {refused[0]} is longer than table {served.name!r} reads (at most "
            f"{static.max_tokens} pieces and {static.max_characters} characters): send "
            '"truncate": true to embed what the model reads of it',
            inputs=refused[:64],
        )


def check_inputs(limits: Limits, inputs: object) -> None:
    """LimitExceeded for more inputs, or a longer text or list of ids, than the settings allow,
    on the parsed JSON before validation (so before any text is split)."""
    settings = limits.settings
    listed = inputs if isinstance(inputs, list) else [inputs]
    if listed and not isinstance(listed[0], list | str):
        listed = [listed]  # one list of ids
    within("embedding inputs", len(listed), settings.max_embedding_inputs)
    longest = max((len(one) for one in listed if isinstance(one, list | str)), default=0)
    within(
        "characters (or token ids) of one embedding input",
        longest,
        settings.max_embedding_text_length,
    )


EMBEDDINGS = Operation(
    "embeddings",
    "embeddings",
    TypeAdapter(EmbeddingsRequest),
    EmbeddingsResponse,
    embeddings,
    "OpenAI's embeddings: texts or token ids -> one vector each, from a static model.",
    path="/v1/embeddings",
)
EMBED = Operation(
    "embed",
    "embeddings",
    TypeAdapter(EmbedRequest),
    list[list[float]],
    embed,
    "TEI's embed: texts -> one vector each, from the configured static model (embed_table).",
    path="/embed",
)
# Each operation's list of inputs, by field.
INPUTS = {EMBEDDINGS.name: "input", EMBED.name: "inputs"}
# The operation of each path (POST), and the route metrics label its requests with.
PATHS = {operation.route.path: operation for operation in (EMBEDDINGS, EMBED)}
ROUTES = {path: operation.route for path, operation in PATHS.items()}


def read_request(
    operation: Operation, body: bytes, content_type: str, services: Services
) -> tuple[Context, Any]:
    """The table's context and the validated request: 415, 400, 413, 422, then the table."""
    limits = services.limits
    data = parse_json(body, content_type, limits.settings.max_body_values)
    if isinstance(data, dict):
        check_inputs(limits, data.get(INPUTS[operation.name]))
    query = validate(operation, data, limits)
    name = query.model if isinstance(query, EmbeddingsRequest) else embed_table(services)
    return services.context(name), query


def embed_table(services: Services) -> str:
    """The table /embed embeds with: embed_table, else the first static model served (in
    configuration order); TableNotReady while a table that may be one still loads."""
    named = services.limits.settings.embed_table
    if named is not None:
        return named
    registry = services.registry
    names = registry.names()
    for name in names:
        served = registry.serving.get(name)
        if served is not None and served.table.static is not None:
            return name
    pending = [name for name in names if name not in registry.serving]
    if pending:
        raise TableNotReady(pending[0], "loading: it may be the static model /embed uses")
    raise InvalidQuery(
        "no static embedding model is served, so /embed has none to embed with: serve a "
        "Model2Vec folder or WordLlama's weights (docs/embeddings.md)"
    )


async def answer(
    operation: Operation, body: bytes, content_type: str, services: Services
) -> Encoded:
    """The whole answer to one embedding request, an error envelope included."""
    try:
        if len(body) > ON_LOOP_BYTES:
            reading = (operation, body, content_type, services)
            context, query = await services.runtime.in_thread(read_request, *reading)
        else:
            context, query = read_request(operation, body, content_type, services)
        answered = await operation.run(query, context)
    except EngineError as error:
        return encode(error)
    return Encoded(
        200, [(b"content-type", JSON), (b"content-length", b"%d" % len(answered))], answered
    )
