"""Request and response models of the search routes: neighbours and analogies, single or batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from service.schemas.batch import BatchRequest, BatchResponse, one_or_batch
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
    OneOf,
    Pieces,
    ProbeMargin,
    Restrict,
    RowId,
    Strict,
    Text,
    Token,
    Vector,
    Weight,
    exactly_one_of,
)

_QUERY_FIELDS = ("token", "id", "vector", "vector_b64", "text")
# The JSON Schema of "exactly one of the query fields", for models that add to it.
_QUERY_SCHEMA: dict[str, Any] = dict(exactly_one_of(*_QUERY_FIELDS)["json_schema_extra"])  # type: ignore[arg-type]


class QuerySource(OneOf):
    """One query: a token, an id, a raw vector or a text (the neighbours' and cosines')."""

    model_config = exactly_one_of(*_QUERY_FIELDS)

    token: Token | None = None
    id: RowId | None = None
    vector: Vector | None = None
    vector_b64: Base64Vector | None = None
    text: Text | None = None
    pieces: Pieces = "one"


class SearchFields(Strict):
    """What a neighbour query and an analogy ask of the search alike: how many, what to leave
    out, which rows, and the approximate index's per-query options (resolved once, by
    operations/resolving.py `Resolver.search_options`)."""

    k: K | None = None
    exclude: list[Token] = Field(default_factory=list, max_length=MAX_ITEMS, fail_fast=True)
    restrict: Restrict | None = None
    exact: Exact = False
    ef_search: EfSearch | None = None
    nprobe: Nprobe | None = None
    k_factor: KFactor | None = None
    probe_margin: ProbeMargin | None = None


# A neighbour query: its source and what it asks of the search (no docstring: it would become
# the schema's description).
class NeighborsRequest(SearchFields, QuerySource):
    pass


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


class NeighborsBatchRequest(BatchRequest[NeighborsRequest]):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"required": ["among"]},
            "then": {"properties": {"queries": {"items": {"not": {"required": ["restrict"]}}}}},
        },
    )

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


class NeighborsBatchResponse(BatchResponse[NeighborList]):
    pass


class WeightedTerm(OneOf):
    model_config = exactly_one_of("token", "vector", "vector_b64", "text")

    token: Token | None = None
    vector: Vector | None = None
    vector_b64: Base64Vector | None = None
    text: Text | None = None
    pieces: Pieces = "one"
    weight: Weight = 1.0


RequestTerm = Token | WeightedTerm


Terms = Annotated[list[RequestTerm], Field(max_length=MAX_ITEMS, fail_fast=True)]

# A term of a 3CosMul analogy that takes raw vectors as given: a token, or a term of weight 1.
_UNWEIGHTED: dict[str, Any] = {
    "anyOf": [
        {"type": "string"},
        {"not": {"required": ["weight"]}},
        {"properties": {"weight": {"const": 1}}},
    ]
}
# The JSON Schema of what check_terms checks, so that clients generated from it (and the
# fuzzer) never send an analogy that can only be refused.
TERMS_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"required": ["positive"], "properties": {"positive": {"minItems": 1}}},
        {
            "required": ["negative"],
            "properties": {"negative": {"minItems": 1}, "method": {"const": "add"}},
        },
    ],
    "if": {
        "required": ["method", "vector_terms"],
        "properties": {"method": {"const": "mul"}, "vector_terms": {"const": "as_given"}},
    },
    "then": {
        "properties": {"positive": {"items": _UNWEIGHTED}, "negative": {"items": _UNWEIGHTED}}
    },
}


class AnalogyTerms(Strict):
    """An analogy's terms and how they combine: what /analogy and /cosines share."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=TERMS_SCHEMA)

    positive: Terms = Field(
        default_factory=list,
        description="Terms added; may be empty for 3CosAdd when `negative` is not (gensim's "
        "direction is then minus the mean of the negative terms).",
    )
    negative: Terms = Field(default_factory=list, description="Terms subtracted.")
    method: Literal["add", "mul"] = Field("add", description="add: 3CosAdd; mul: 3CosMul.")
    vector_terms: Literal["unit", "as_given"] = Field(
        "unit",
        description="How 3CosMul scores a raw vector term: unit, its direction's shifted "
        "cosine (1 + cos) / 2; as_given, gensim's most_similar_cosmul: (1 + v . row / |row|) "
        "/ 2, which a norm above 1 can make negative (then no term may be weighted). 3CosAdd "
        "adds raw vectors as given either way (gensim's most_similar).",
    )

    @model_validator(mode="after")
    def _terms_that_combine(self) -> Self:
        check_terms(self)
        return self


def check_terms(terms: AnalogyTerms) -> None:
    """A positive term (3CosAdd may do with negative ones only); no weights on a 3CosMul whose
    raw vectors are taken as given."""
    if not terms.positive and not (terms.negative and terms.method == "add"):
        raise ValueError(
            "give a positive term (3CosAdd takes negative terms alone, 3CosMul does not)"
        )
    if terms.method == "mul" and terms.vector_terms == "as_given":
        weighted = [t for t in [*terms.positive, *terms.negative] if _weight(t) != 1]
        if weighted:
            raise ValueError(
                "3CosMul with vector_terms as_given takes no weights (as gensim's "
                "most_similar_cosmul): a raw vector's factor may be negative"
            )


def _weight(term: RequestTerm) -> float:
    return 1.0 if isinstance(term, str) else term.weight


# An analogy: its terms and what it asks of the search.
class AnalogyRequest(SearchFields, AnalogyTerms):
    pass


class SingleAnalogyRequest(AnalogyRequest):
    """One analogy, at a checkpoint if it names one (a batch names it once)."""

    checkpoint: CheckpointIndex | None = None


class AnalogyBatchRequest(BatchRequest[AnalogyRequest]):
    pass


NeighborsBody = one_or_batch(SingleNeighborsRequest, NeighborsBatchRequest)
AnalogyBody = one_or_batch(SingleAnalogyRequest, AnalogyBatchRequest)
# What /neighbors and /analogy answer: one list, or one per query of a batch.
NeighborsAnswer = NeighborsResponse | NeighborsBatchResponse
