"""Request and response models of lookup, similarity and output scoring."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
)

from service.schemas.common import (
    INCOMPLETE,
    MAX_ITEMS,
    CheckpointIndex,
    Flag,
    K,
    Key,
    Matched,
    OneOf,
    RowId,
    Strict,
    Token,
    exactly_one_of,
)
from service.schemas.search import QuerySource


class LookupRequest(OneOf):
    model_config = exactly_one_of("tokens", "ids")

    tokens: list[Key] | None = Field(None, min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    ids: list[RowId] | None = Field(None, min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    include_vector: Flag = True
    checkpoint: CheckpointIndex | None = None
    encoding: Literal["float", "base64"] = Field(
        "float",
        description="How vectors are answered: JSON floats in 'vector', or base64 of "
        "little-endian float32s in 'vector_b64' (as OpenAI's encoding_format).",
    )


class LookupItem(Strict):
    token: str
    id: int | None = Field(None, description="The row; absent for the mean of a text's pieces.")
    norm: float
    vector: list[float] | None = None
    vector_b64: str | None = None
    metadata: dict[str, int | float | str] = Field(default_factory=dict)


class LookupResponse(Matched):
    items: list[LookupItem]


class SimilarityRequest(OneOf):
    model_config = exactly_one_of("pairs", "tokens")

    # fail_fast: a key is one of several forms, so a bad one is an error per form; 10,000 bad
    # pairs built 20,000 errors (190 ms, 52 MB). The first bad item ends validation.
    pairs: list[tuple[Key, Key]] | None = Field(
        None, min_length=1, max_length=MAX_ITEMS, fail_fast=True
    )
    tokens: list[Key] | None = Field(None, min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    checkpoint: CheckpointIndex | None = None


class PairScore(Strict):
    tokens: tuple[str, str]
    score: float


class SimilarityResponse(Matched):
    pairs: list[PairScore] | None = None
    tokens: list[str] | None = None
    matrix: list[list[float]] | None = None


# The query of /neighbors and /cosines (a token, an id, a vector or a text), scored by its raw
# row (a text of several pieces: the mean of their raw rows), with the scoring's own fields.
class ScoreRequest(QuerySource):
    k: K | None = None
    softmax: Flag = False
    temperature: float = Field(1.0, gt=0, le=1e6, allow_inf_nan=False)
    target: Token | None = None


class ScoredToken(Strict):
    token: str
    id: int
    logit: float
    probability: float | None = None
    text: str | None = Field(
        None,
        description="The row decoded to text (text queries), or a language model's token as "
        "the text it stands for.",
    )
    incomplete: bool | None = Field(None, description=INCOMPLETE)


class TargetScore(ScoredToken):
    rank: int = Field(description="1 + the number of rows with a strictly higher logit.")


class ScoreResponse(Matched):
    head: str | None = Field(
        description='The rows scored: a language model\'s output tensor, or "tied" (its '
        "input rows); null: the table is no model's and its own rows were scored (GET "
        "/v1/tables/{table} says the same)."
    )
    top: list[ScoredToken]
    target: TargetScore | None = None
    log_partition: float | None = Field(
        None, description="log of the softmax normaliser, when softmax is asked for."
    )
