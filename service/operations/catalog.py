"""The query API's operations: each one's name, body type, runner and cache rule.

POST /v1/tables/{table}/{name} is answered by door.answer with the operation of that name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import TypeAdapter

from service.operations import diagnostics, projection, ranking, search, text, training, vectors
from service.operations.context import Context
from service.operations.limits import Limits
from service.schemas.diagnostics import DiagnosticsRequest, EvaluateRequest
from service.schemas.projection import ProjectionRequest, ProjectRequest
from service.schemas.ranking import CosinesBody, RankRequest
from service.schemas.search import AnalogyBody, NeighborsBody
from service.schemas.text import TokenizeRequest
from service.schemas.training import DriftRequest, TrajectoryRequest
from service.schemas.vectors import LookupRequest, ScoreRequest, SimilarityRequest


def never(body: Any) -> bool:
    """For operations whose answers are never cached."""
    return False


@dataclass(frozen=True)
class Route:
    """What the metrics need of a route: its path template and the methods it takes."""

    path: str
    methods: frozenset[str] = frozenset({"POST"})


@dataclass(frozen=True)
class Operation:
    """One query of the table API: how its body is validated, answered and cached."""

    name: str
    body: TypeAdapter[Any]
    run: Callable[[Any, Context], Awaitable[bytes]]
    cacheable: Callable[[Any], bool] = never
    # The tags of a body that is one of several models (a query or a batch): pydantic puts the
    # tag first in an error's location, where a client would not look for it.
    tags: frozenset[str] = frozenset()
    # Top-level lists a setting bounds (field, the Limits check the operation applies to its
    # length): checked on the parsed JSON before validation too, so a list over its setting
    # costs no validator per item (10,000 analogy terms: 91 ms of the event loop).
    configured: tuple[tuple[str, Callable[[Limits, int], None]], ...] = ()
    # An analysis: the kind of queue it waits in (Runtime.queues), admitted there by the edge
    # instead of taking a slot of max_in_flight. None: a query.
    queue: str | None = None

    @cached_property
    def most_items(self) -> dict[str, int]:
        """The most items of each list at the body's top level, from its JSON Schema: checked
        before validation, so an overlong list is refused without validating its items."""
        return most_items(self.body.json_schema())

    @cached_property
    def route(self) -> Route:
        """The operation's route template, for requests answered without FastAPI's router."""
        return Route(f"/v1/tables/{{table}}/{self.name}")


def most_items(schema: dict[str, Any]) -> dict[str, int]:
    """Per top-level property that is a list in every body the schema admits, its maxItems
    (the largest over the alternatives; none for a property some alternative leaves unbounded)."""
    definitions = schema.get("$defs", {})

    def resolved(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = definitions[node["$ref"].rsplit("/", 1)[1]]
        return node

    def objects(node: dict[str, Any]) -> list[dict[str, Any]]:
        node = resolved(node)
        alternatives = node.get("anyOf") or node.get("oneOf")
        if "properties" in node or not alternatives:
            return [node]
        return [found for alternative in alternatives for found in objects(alternative)]

    bounds: dict[str, int] = {}
    unbounded: set[str] = set()
    for body in objects(schema):
        for name, value in body.get("properties", {}).items():
            value = resolved(value)
            arrays = [resolved(a) for a in value.get("anyOf", [value])]
            for array in (a for a in arrays if a.get("type") == "array"):
                if "maxItems" in array:
                    bounds[name] = max(bounds.get(name, 0), int(array["maxItems"]))
                else:
                    unbounded.add(name)
    return {name: most for name, most in bounds.items() if name not in unbounded}


def _batches(*fields: str) -> tuple[tuple[str, Callable[[Limits, int], None]], ...]:
    """Fields whose length is a batch size (max_batch)."""
    return tuple((field, Limits.check_batch) for field in fields)


ONE_OR_BATCH = frozenset({"query", "batch"})
# A batch's queries, and each query's exclusions (the Limits checks are methods: (self, n)).
BATCH = (*_batches("queries"), ("exclude", Limits.check_exclusions))
NEIGHBORS = Operation(
    "neighbors",
    TypeAdapter(NeighborsBody),
    search.search,
    search.names_only,
    ONE_OR_BATCH,
    configured=BATCH,
)
ANALOGY = Operation(
    "analogy",
    TypeAdapter(AnalogyBody),
    search.search,
    search.names_only,
    ONE_OR_BATCH,
    configured=(*BATCH, ("positive", Limits.check_terms), ("negative", Limits.check_terms)),
)
LOOKUP = Operation(
    "lookup", TypeAdapter(LookupRequest), vectors.lookup, configured=_batches("tokens", "ids")
)
SIMILARITY = Operation(
    "similarity",
    TypeAdapter(SimilarityRequest),
    vectors.similarity,
    configured=_batches("pairs", "tokens"),
)
SCORE = Operation("score", TypeAdapter(ScoreRequest), vectors.score)
PROJECTION = Operation(
    "projection", TypeAdapter(ProjectionRequest), projection.projection, queue="projection"
)
PROJECT = Operation(
    "project",
    TypeAdapter(ProjectRequest),
    projection.project,
    configured=_batches("tokens", "vectors", "vectors_b64"),
    queue="projection",
)
DIAGNOSTICS = Operation(
    "diagnostics",
    TypeAdapter(DiagnosticsRequest),
    diagnostics.diagnostics,
    configured=_batches("tokens"),
    queue="analysis",
)
EVALUATE = Operation(
    "evaluate", TypeAdapter(EvaluateRequest), diagnostics.evaluate, queue="analysis"
)
TOKENIZE = Operation(
    "tokenize",
    TypeAdapter(TokenizeRequest),
    text.tokenize,
    configured=(*_batches("texts"), ("detokenize", Limits.check_detokenize)),
)
COSINES = Operation(
    "cosines",
    TypeAdapter(CosinesBody),
    ranking.cosines,
    tags=frozenset({"query", "terms"}),
    configured=(("positive", Limits.check_terms), ("negative", Limits.check_terms)),
)
RANK = Operation("rank", TypeAdapter(RankRequest), ranking.rank, configured=_batches("others"))
TRAJECTORY = Operation(
    "trajectory", TypeAdapter(TrajectoryRequest), training.trajectory, queue="projection"
)
DRIFT = Operation("drift", TypeAdapter(DriftRequest), training.drift, queue="analysis")
OPERATIONS = {
    op.name: op
    for op in (
        NEIGHBORS,
        ANALOGY,
        LOOKUP,
        SIMILARITY,
        SCORE,
        COSINES,
        RANK,
        PROJECTION,
        PROJECT,
        DIAGNOSTICS,
        EVALUATE,
        TOKENIZE,
        TRAJECTORY,
        DRIFT,
    )
}
