"""Request and response models of the ranking routes: every row's score, and ranks."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import ConfigDict, Discriminator, Field, Tag, model_validator

from service.schemas.common import (
    INCOMPLETE,
    MAX_ITEMS,
    NUMBER_ONLY,
    READABLE,
    CheckpointIndex,
    Matched,
    Neighbor,
    OneOf,
    RowId,
    Strict,
    Token,
    exactly_one_of,
)
from service.schemas.search import AnalogyTerms, QuerySource

Offset = Annotated[
    int, Field(ge=0, le=2**53, description="Where the page starts (0: the first)."), NUMBER_ONLY
]
PageSize = Annotated[int, Field(ge=1, le=2**53), NUMBER_ONLY]


class CosinesPage(Strict):
    """Which rows a /cosines answer scores: `limit` rows from `offset`, in row order."""

    offset: Offset = 0
    limit: PageSize | None = Field(
        None,
        description="Rows in this answer; default: every row from offset, as many as "
        "max_cosine_rows allows (it counts rows times the query's directions).",
    )
    checkpoint: CheckpointIndex | None = None


class CosinesQueryRequest(CosinesPage, QuerySource):
    """The cosine of every row with a token, an id, a raw vector or a text."""


class CosinesTermsRequest(CosinesPage, AnalogyTerms):
    """Every row's analogy score: the cosine with the weighted mean of the terms (`add`, as
    /analogy's), or the 3CosMul objective (`mul`); the terms' own rows are scored too."""


TERM_FIELDS = ("positive", "negative", "method", "vector_terms")


def _query_or_terms(value: object) -> str:
    """A JSON object (or, when serialising, a model) with analogy terms is the terms form."""
    if isinstance(value, dict):
        return "terms" if any(field in value for field in TERM_FIELDS) else "query"
    return "terms" if isinstance(value, CosinesTermsRequest) else "query"


CosinesBody = Annotated[
    Annotated[CosinesQueryRequest, Tag("query")] | Annotated[CosinesTermsRequest, Tag("terms")],
    Discriminator(_query_or_terms),
]


class CosinesResponse(Matched):
    rows: int = Field(description="Rows in the table (a page past them is empty).")
    offset: int
    count: int = Field(description="Rows scored in this answer, from offset.")
    scores_b64: str = Field(
        description="One score per row from offset, in row order: base64 of little-endian "
        "float32s. Each is the row's float64 score, within about 1e-16 of what /neighbors "
        "(or /analogy) reports for it, rounded to float32; NaN for a zero row (0/0, as "
        "gensim's arrays have it).",
        json_schema_extra={"contentEncoding": "base64"},
    )


class CloserRows(Strict):
    """Which of the closer rows to list, in row order."""

    offset: Offset = 0
    limit: PageSize | None = Field(
        None, description="Rows listed; default and at most max_results."
    )


class RankRequest(OneOf):
    """How many rows are closer to a token than each of `others` is."""

    # The schema says what _one_key and _one_listed check, so clients generated from it (and
    # the fuzzer) never send what is refused.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            **exactly_one_of("token", "id")["json_schema_extra"],  # type: ignore[dict-item]
            "if": {
                "required": ["closer_rows"],
                "properties": {"closer_rows": {"type": "object"}},
            },
            "then": {"properties": {"others": {"maxItems": 1}}},
        },
    )

    token: Token | None = None
    id: RowId | None = None
    others: list[Token] = Field(min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    closer_rows: CloserRows | None = Field(
        None,
        description="List the rows closer than the one token of `others` (gensim's "
        "closer_than), a page of them in row order.",
    )
    checkpoint: CheckpointIndex | None = None

    @model_validator(mode="after")
    def _one_listed(self) -> Self:
        if self.closer_rows is not None and len(self.others) > 1:
            raise ValueError("closer_rows lists the rows closer than one token: give one other")
        return self


class RankItem(Strict):
    token: str
    id: int
    score: float | None = Field(
        description="The cosine of this row with the query's; null for a zero row, which has "
        "no direction (nothing is closer than it)."
    )
    closer: int = Field(
        description="Rows whose cosine with the query is strictly above score, the query's "
        "own row and zero rows never counted."
    )
    rank: int = Field(description="closer + 1 (gensim's rank).")
    text: str | None = Field(None, description=READABLE)
    incomplete: bool | None = Field(None, description=INCOMPLETE)


class RankResponse(Matched):
    token: str
    id: int
    ranks: list[RankItem]
    closer_rows: list[Neighbor] | None = Field(
        None, description="The page of closer rows asked for, in row order, with their scores."
    )
