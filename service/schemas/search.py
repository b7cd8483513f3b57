"""Request and response models of the search routes: neighbours and analogies, single or batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    model_validator,
)

from service.schemas.common import (
    MAX_ITEMS,
    AmongIds,
    Base64Vector,
    CheckpointIndex,
    EfSearch,
    Exact,
    K,
    KFactor,
    Matched,
    Neighbor,
    Nprobe,
    Pieces,
    Restrict,
    RowId,
    Strict,
    Text,
    Token,
    Vector,
    Weight,
    check_exactly_one,
    exactly_one_of,
)

_QUERY_FIELDS = ("token", "id", "vector", "vector_b64", "text")
# The JSON Schema of "exactly one of the query fields", for models that add to it.
_QUERY_SCHEMA: dict[str, Any] = dict(exactly_one_of(*_QUERY_FIELDS)["json_schema_extra"])  # type: ignore[arg-type]


class QuerySource(Strict):
    """One query: a token, an id, a raw vector or a text (the neighbours' and cosines')."""

    model_config = exactly_one_of(*_QUERY_FIELDS)

    token: Token | None = None
    id: RowId | None = None
    vector: Vector | None = None
    vector_b64: Base64Vector | None = None
    text: Text | None = None
    pieces: Pieces = "one"

    @model_validator(mode="after")
    def _one_query(self) -> Self:
        check_exactly_one(self, _QUERY_FIELDS)
        return self


class NeighborsRequest(QuerySource):
    k: K | None = None
    exclude: list[Token] = Field(default_factory=list, max_length=MAX_ITEMS, fail_fast=True)
    restrict: Restrict | None = None
    exact: Exact = False
    ef_search: EfSearch | None = None
    nprobe: Nprobe | None = None
    k_factor: KFactor | None = None


class SingleNeighborsRequest(NeighborsRequest):
    """One neighbour query, at a checkpoint and among a candidate set if it names them (a batch
    names them once)."""

    # The schema says what _among_or_restrict checks, so clients generated from it (and the
    # fuzzer) never send both.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            **_QUERY_SCHEMA,
            "not": {"required": ["among", "restrict"]},
        },
    )

    checkpoint: CheckpointIndex | None = None
    among: AmongIds | None = None

    @model_validator(mode="after")
    def _among_or_restrict(self) -> Self:
        check_among([self], self.among)
        return self


class NeighborsBatchRequest(Strict):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"required": ["among"]},
            "then": {"properties": {"queries": {"items": {"not": {"required": ["restrict"]}}}}},
        },
    )

    queries: list[NeighborsRequest] = Field(min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    checkpoint: CheckpointIndex | None = None
    among: AmongIds | None = None

    @model_validator(mode="after")
    def _among_or_restrict(self) -> Self:
        check_among(self.queries, self.among)
        return self


def check_among(queries: Sequence[NeighborsRequest], among: list[int] | None) -> None:
    """A candidate set is the whole search space: a `restrict` beside it is refused."""
    if among is not None and any(query.restrict is not None for query in queries):
        raise ValueError("give among or restrict, not both: among names every row to search")


class NeighborList(Strict):
    neighbors: list[Neighbor]


class NeighborsResponse(NeighborList, Matched):
    pass


class NeighborsBatchResponse(Matched):
    results: list[NeighborList]


def _batch_or_single(value: object) -> str:
    """A JSON object (or, when serialising, a model) with "queries" is a batch."""
    batch = "queries" in value if isinstance(value, dict) else hasattr(value, "queries")
    return "batch" if batch else "query"


class WeightedTerm(Strict):
    model_config = exactly_one_of("token", "vector", "vector_b64", "text")

    token: Token | None = None
    vector: Vector | None = None
    vector_b64: Base64Vector | None = None
    text: Text | None = None
    pieces: Pieces = "one"
    weight: Weight = 1.0

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        check_exactly_one(self, ("token", "vector", "vector_b64", "text"))
        return self


RequestTerm = Token | WeightedTerm


Terms = Annotated[list[RequestTerm], Field(max_length=MAX_ITEMS, fail_fast=True)]


class AnalogyRequest(Strict):
    positive: Terms = Field(min_length=1)
    negative: Terms = Field(default_factory=list)
    k: K | None = None
    method: Literal["add", "mul"] = Field("add", description="add: 3CosAdd; mul: 3CosMul.")
    exclude: list[Token] = Field(default_factory=list, max_length=MAX_ITEMS, fail_fast=True)
    restrict: Restrict | None = None
    exact: Exact = False
    ef_search: EfSearch | None = None
    nprobe: Nprobe | None = None
    k_factor: KFactor | None = None


class SingleAnalogyRequest(AnalogyRequest):
    """One analogy, at a checkpoint if it names one (a batch names it once)."""

    checkpoint: CheckpointIndex | None = None


class AnalogyBatchRequest(Strict):
    queries: list[AnalogyRequest] = Field(min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    checkpoint: CheckpointIndex | None = None


# One query, or {"queries": [...]}: the presence of "queries" picks the model to validate with.
NeighborsBody = Annotated[
    Annotated[SingleNeighborsRequest, Tag("query")]
    | Annotated[NeighborsBatchRequest, Tag("batch")],
    Discriminator(_batch_or_single),
]


AnalogyBody = Annotated[
    Annotated[SingleAnalogyRequest, Tag("query")] | Annotated[AnalogyBatchRequest, Tag("batch")],
    Discriminator(_batch_or_single),
]
