"""The query API's operations, and the one place a validated query is answered.

A request to POST /v1/tables/{table}/{operation} is answered here whichever way it came in (the
FastAPI route, or the direct path of direct.py): `respond` decides from the *validated* query
whether its answer may come from the cache, runs the operation, and stores what may be reused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from service.operations import diagnostics, projection, search, text, training, vectors
from service.operations.context import Context
from service.schemas.diagnostics import DiagnosticsRequest, EvaluateRequest
from service.schemas.projection import ProjectionRequest, ProjectRequest
from service.schemas.search import AnalogyBody, NeighborsBody
from service.schemas.text import TokenizeRequest
from service.schemas.training import DriftRequest, TrajectoryRequest
from service.schemas.vectors import LookupRequest, ScoreRequest, SimilarityRequest


def never(body: Any) -> bool:
    """For operations whose answers are never cached."""
    return False


@dataclass(frozen=True)
class Route:
    """What the metrics need of a route: its path template."""

    path: str


@dataclass(frozen=True)
class Operation:
    """One query of the table API: how its body is validated, answered and cached."""

    name: str
    body: TypeAdapter[Any]
    run: Callable[[Any, Context], Awaitable[bytes]]
    cacheable: Callable[[Any], bool] = never

    @property
    def route(self) -> Route:
        """The operation's route template, for requests answered without FastAPI's router."""
        return Route(f"/v1/tables/{{table}}/{self.name}")


NEIGHBORS = Operation("neighbors", TypeAdapter(NeighborsBody), search.search, search.names_only)
ANALOGY = Operation("analogy", TypeAdapter(AnalogyBody), search.search, search.names_only)
LOOKUP = Operation("lookup", TypeAdapter(LookupRequest), vectors.lookup)
SIMILARITY = Operation("similarity", TypeAdapter(SimilarityRequest), vectors.similarity)
SCORE = Operation("score", TypeAdapter(ScoreRequest), vectors.score)
PROJECTION = Operation("projection", TypeAdapter(ProjectionRequest), projection.projection)
PROJECT = Operation("project", TypeAdapter(ProjectRequest), projection.project)
DIAGNOSTICS = Operation("diagnostics", TypeAdapter(DiagnosticsRequest), diagnostics.diagnostics)
EVALUATE = Operation("evaluate", TypeAdapter(EvaluateRequest), diagnostics.evaluate)
TOKENIZE = Operation("tokenize", TypeAdapter(TokenizeRequest), text.tokenize)
TRAJECTORY = Operation("trajectory", TypeAdapter(TrajectoryRequest), training.trajectory)
DRIFT = Operation("drift", TypeAdapter(DriftRequest), training.drift)
OPERATIONS = {
    op.name: op
    for op in (
        NEIGHBORS,
        ANALOGY,
        LOOKUP,
        SIMILARITY,
        SCORE,
        PROJECTION,
        PROJECT,
        DIAGNOSTICS,
        EVALUATE,
        TOKENIZE,
        TRAJECTORY,
        DRIFT,
    )
}


async def respond(operation: Operation, body: Any, context: Context) -> bytes:
    """The JSON answer to one validated query: from the cache when it may be, else computed."""
    checkpoint = getattr(body, "checkpoint", None)
    if checkpoint is not None:
        context = await context.at_checkpoint(checkpoint)
    cache = context.runtime.cache
    key = (
        cache_key(operation, body, context) if cache.enabled and operation.cacheable(body) else None
    )
    if key is not None:
        cached = cache.get(operation.name, key)
        if cached is not None:
            return cached
    answer = await operation.run(body, context)
    if key is not None:
        cache.put(key, answer)
    return answer


def cache_key(operation: Operation, body: Any, context: Context) -> bytes:
    """A digest of the table's load, the operation and the validated query in canonical form.

    The canonical form is the validated model serialised with every field, defaults included,
    in declaration order: whitespace, key order and omitted defaults do not make a new entry.
    """
    digest = hashlib.blake2b(context.served.cache_prefix, digest_size=16)
    digest.update(operation.name.encode())
    digest.update(body.__pydantic_serializer__.to_json(body))
    return digest.digest()
