"""The query API's operations: each one's route, body and answer models, runner, cache rule
and the one line that documents it.

POST /v1/tables/{table}/{name} is answered by door.answer with the operation of that name; its
FastAPI route is registered from here (api/query.py `query_router`), so an operation is
declared once.
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
from service.schemas.batch import ONE_OR_BATCH
from service.schemas.diagnostics import (
    DiagnosticsRequest,
    DiagnosticsResponse,
    EvaluateRequest,
    EvaluateResponse,
)
from service.schemas.projection import (
    ProjectionRequest,
    ProjectionResponse,
    ProjectRequest,
    ProjectResponse,
)
from service.schemas.ranking import CosinesBody, CosinesResponse, RankRequest, RankResponse
from service.schemas.search import AnalogyBody, NeighborsAnswer, NeighborsBody
from service.schemas.text import TokenizeAnswer, TokenizeRequest
from service.schemas.training import (
    DriftRequest,
    DriftResponse,
    TrajectoryRequest,
    TrajectoryResponse,
)
from service.schemas.vectors import (
    LookupRequest,
    LookupResponse,
    ScoreRequest,
    ScoreResponse,
    SimilarityRequest,
    SimilarityResponse,
)


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
    """One query of the API: its route, how its body is validated, answered and cached."""

    name: str
    # Its feature: the OpenAPI tag, and the module's name in schemas/ and operations/.
    feature: str
    body: TypeAdapter[Any]
    # The answer's model, as the OpenAPI document shows it (run writes the JSON itself).
    response: Any
    run: Callable[[Any, Context], Awaitable[bytes]]
    # What it does, in one line: the route's description in the OpenAPI document.
    description: str
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
    # Its path, when it is not POST /v1/tables/{table}/{name}: one without {table}, whose body
    # names the table (the text embeddings).
    path: str = ""

    @cached_property
    def most_items(self) -> dict[str, int]:
        """The most items of each list at the body's top level, from its JSON Schema: checked
        before validation, so an overlong list is refused without validating its items."""
        return most_items(self.body.json_schema())

    @cached_property
    def route(self) -> Route:
        """The operation's route template (requests answered without FastAPI's router are
        labelled with it too)."""
        return Route(self.path or f"/v1/tables/{{table}}/{self.name}")


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


# A batch's queries, and each query's exclusions (the Limits checks are methods: (self, n)).
BATCH = (*_batches("queries"), ("exclude", Limits.check_exclusions))
TERMS = (("positive", Limits.check_terms), ("negative", Limits.check_terms))
NEIGHBORS = Operation(
    "neighbors",
    "search",
    TypeAdapter(NeighborsBody),
    NeighborsAnswer,
    search.search,
    "Top-k cosine neighbours of a token, an id, a raw vector or a text (or a batch of them).",
    search.names_only,
    ONE_OR_BATCH,
    configured=BATCH,
)
ANALOGY = Operation(
    "analogy",
    "search",
    TypeAdapter(AnalogyBody),
    NeighborsAnswer,
    search.search,
    "Analogies (gensim most_similar / most_similar_cosmul semantics); inputs never answer.",
    search.names_only,
    ONE_OR_BATCH,
    configured=(*BATCH, *TERMS),
)
LOOKUP = Operation(
    "lookup",
    "vectors",
    TypeAdapter(LookupRequest),
    LookupResponse,
    vectors.lookup,
    "Token -> id + raw vector, or id -> token + raw vector, for a batch of keys.",
    configured=_batches("tokens", "ids"),
)
SIMILARITY = Operation(
    "similarity",
    "vectors",
    TypeAdapter(SimilarityRequest),
    SimilarityResponse,
    vectors.similarity,
    "Cosine of token pairs, or the cosine matrix of a list of tokens.",
    configured=_batches("pairs", "tokens"),
)
SCORE = Operation(
    "score",
    "vectors",
    TypeAdapter(ScoreRequest),
    ScoreResponse,
    vectors.score,
    "Raw dot product of a vector with every row (a tied output layer): top-k and a target.",
)
COSINES = Operation(
    "cosines",
    "ranking",
    TypeAdapter(CosinesBody),
    CosinesResponse,
    ranking.cosines,
    "Every row's score against one query, in row order (gensim's most_similar(topn=None)).",
    tags=frozenset({"query", "terms"}),
    configured=TERMS,
)
RANK = Operation(
    "rank",
    "ranking",
    TypeAdapter(RankRequest),
    RankResponse,
    ranking.rank,
    "How many rows are closer to a token than each other token is (gensim's rank).",
    configured=_batches("others"),
)
PROJECTION = Operation(
    "projection",
    "projection",
    TypeAdapter(ProjectionRequest),
    ProjectionResponse,
    projection.projection,
    "PCA coordinates of the first N rows, N seeded random rows or the named tokens.",
    queue="projection",
)
PROJECT = Operation(
    "project",
    "projection",
    TypeAdapter(ProjectRequest),
    ProjectResponse,
    projection.project,
    "Coordinates of any tokens or raw vectors in the table's projection basis.",
    configured=_batches("tokens", "vectors", "vectors_b64"),
    queue="projection",
)
DIAGNOSTICS = Operation(
    "diagnostics",
    "diagnostics",
    TypeAdapter(DiagnosticsRequest),
    DiagnosticsResponse,
    diagnostics.diagnostics,
    "Suspect (possibly under-trained) rows, named rows' standing, norms and count figures.",
    configured=_batches("tokens"),
    queue="analysis",
)
EVALUATE = Operation(
    "evaluate",
    "diagnostics",
    TypeAdapter(EvaluateRequest),
    EvaluateResponse,
    diagnostics.evaluate,
    "gensim's analogy accuracy or word-pair correlations for a set sent or built in.",
    queue="analysis",
)
TOKENIZE = Operation(
    "tokenize",
    "text",
    TypeAdapter(TokenizeRequest),
    TokenizeAnswer,
    text.tokenize,
    "Text -> pieces (row ids, character offsets, words; one row or several), or ids -> text.",
    configured=(*_batches("texts"), ("detokenize", Limits.check_detokenize)),
)
TRAJECTORY = Operation(
    "trajectory",
    "training",
    TypeAdapter(TrajectoryRequest),
    TrajectoryResponse,
    training.trajectory,
    "Rows at every checkpoint in the explorer's PCA basis, with norm and movement from init.",
    queue="projection",
)
DRIFT = Operation(
    "drift",
    "training",
    TypeAdapter(DriftRequest),
    DriftResponse,
    training.drift,
    "How rows moved between two checkpoints or two tables; named tokens' neighbour lists.",
    queue="analysis",
)
# In the order of the OpenAPI document: by feature.
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
