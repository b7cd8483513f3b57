"""Request and response models. Hard ceilings live here; configurable limits in api/limits.py."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    model_validator,
)

from service.schemas.indexes import IndexInfo

MAX_TOKEN_LENGTH = 256
MAX_ITEMS = 10_000
MAX_WIDTH = 65_536
MAX_K = 100_000
# Text is bounded by the max_text_length setting; this is the ceiling no setting can lift.
MAX_TEXT_LENGTH = 1_000_000
# Far above any real embedding component, and small enough that no dot product of such a
# vector with a table row can overflow float32 into infinity.
MAX_COMPONENT = 1e15

Token = Annotated[str, Field(min_length=1, max_length=MAX_TOKEN_LENGTH)]


def _unicode(text: str) -> str:
    """JSON's \\ud800 escapes decode to lone surrogates, which no tokenizer can read."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (it has a lone surrogate)") from None
    return text


Text = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_TEXT_LENGTH,
        description="Text, split into the table's tokens by its tokenizer (or, for a word "
        "table, on whitespace into its words).",
    ),
    AfterValidator(_unicode),
]
Pieces = Annotated[
    Literal["one", "mean"],
    Field(
        description="A text that is split into several pieces: 'one' (the default) refuses it "
        "with 422 SeveralPieces, which shows the split; 'mean' uses the mean of the pieces' raw "
        "rows (how a new vocabulary row is often initialised; not a sentence embedding)."
    ),
]


def _json_number(value: object) -> object:
    """JSON true and "2" are not integers (JSON Schema agrees; 2.0 is one there)."""
    if isinstance(value, bool | str):
        raise ValueError(f"Input should be a valid integer, not a {type(value).__name__}")
    return value


# The validator comes after the constraints, so they still reach the JSON Schema.
NUMBER_ONLY = BeforeValidator(_json_number)
# 2**53: every integer up to it survives a trip through a JSON float exactly.
RowId = Annotated[int, Field(ge=0, le=2**53), NUMBER_ONLY]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_COMPONENT, le=MAX_COMPONENT)]
Vector = Annotated[list[FiniteFloat], Field(min_length=1, max_length=MAX_WIDTH)]
# Base64 of little-endian float32s: whole 16-character groups (12 bytes, three floats), then
# the padded tail of one or two more floats. Every string the pattern admits decodes to a whole
# number of float32s; the width, NaN/Infinity and the component bound are checked on decoding
# (api/resolve.py), as the schema cannot state them.
BASE64_FLOAT32 = r"^(?:[A-Za-z0-9+/]{16})*(?:[A-Za-z0-9+/]{6}==|[A-Za-z0-9+/]{11}=)?$"
Base64Vector = Annotated[
    str,
    Field(
        min_length=8,
        max_length=4 * (4 * MAX_WIDTH + 2) // 3 + 4,
        pattern=BASE64_FLOAT32,
        description="The vector as base64 of little-endian float32s (4 bytes per component): "
        "a quarter of the JSON floats' size, and parsed without a float per component.",
        json_schema_extra={"contentEncoding": "base64"},
    ),
]
K = Annotated[
    int,
    Field(ge=1, le=MAX_K, description="How many results; default from settings."),
    NUMBER_ONLY,
]
Restrict = Annotated[
    int,
    Field(ge=1, le=2**53, description="Search only the first N rows (gensim's restrict_vocab)."),
    NUMBER_ONLY,
]
# Checkpoints of one set; far above any real training run's snapshots.
MAX_CHECKPOINT = 1_000_000
CheckpointIndex = Annotated[
    int,
    Field(
        ge=0,
        le=MAX_CHECKPOINT,
        description="Which checkpoint of the table's checkpoint set to query (0: the first, "
        "e.g. the initial rows); default: the last, the served one. A plain table has one, 0.",
    ),
    NUMBER_ONLY,
]
# A flag is JSON true or false, never "yes" or 1.
Flag = Annotated[bool, Field(strict=True)]
Exact = Annotated[
    bool,
    Field(
        strict=True,
        description="Search every row (the exhaustive path) even when the table has an "
        "approximate index.",
    ),
]
EfSearch = Annotated[
    int,
    Field(
        ge=1,
        le=65_536,
        description="HNSW tables: efSearch for this query, at most the table's max_ef_search "
        "(422 beyond); a larger one finds more true neighbours, slower.",
    ),
    NUMBER_ONLY,
]
Nprobe = Annotated[
    int,
    Field(
        ge=1,
        le=1 << 20,
        description="IVF tables: lists searched for this query, at most the table's max_nprobe "
        "(422 beyond).",
    ),
    NUMBER_ONLY,
]
Weight = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]


class Strict(BaseModel):
    """Unknown fields are an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


def _exactly_one(model: BaseModel, fields: tuple[str, ...]) -> None:
    given = [name for name in fields if getattr(model, name) is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one of {', '.join(fields)} (got {len(given)})")


def exactly_one_of(*fields: str) -> ConfigDict:
    """A model config whose JSON Schema says what _exactly_one checks: one field, not null.

    Without it the published schema calls {} a valid request, and clients (and fuzzers)
    generated from it send requests that can only be refused.
    """
    branches = [{"required": [f], "properties": {f: {"not": {"type": "null"}}}} for f in fields]
    return ConfigDict(extra="forbid", json_schema_extra={"oneOf": branches})  # type: ignore[dict-item]


class Neighbor(Strict):
    token: str
    id: int
    score: float


class Matched(Strict):
    """Tokens that matched only through the case-insensitive fallback (query -> stored token),
    and texts: the one token they are, when it is not the text itself, or their pieces."""

    matched: dict[str, str | list[str]] = Field(default_factory=dict)


class TextKey(Strict):
    """A text in place of a token: split by the table's tokenizer."""

    text: Text
    pieces: Pieces = "one"


# A token, or {"text": ..., "pieces": ...}: a string and an object, never ambiguous.
Key = Token | TextKey


class LookupRequest(Strict):
    model_config = exactly_one_of("tokens", "ids")

    tokens: list[Key] | None = Field(None, min_length=1, max_length=MAX_ITEMS)
    ids: list[RowId] | None = Field(None, min_length=1, max_length=MAX_ITEMS)
    include_vector: Flag = True
    checkpoint: CheckpointIndex | None = None
    encoding: Literal["float", "base64"] = Field(
        "float",
        description="How vectors are answered: JSON floats in 'vector', or base64 of "
        "little-endian float32s in 'vector_b64' (as OpenAI's encoding_format).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        _exactly_one(self, ("tokens", "ids"))
        return self


class LookupItem(Strict):
    token: str
    id: int | None = Field(None, description="The row; absent for the mean of a text's pieces.")
    norm: float
    vector: list[float] | None = None
    vector_b64: str | None = None
    metadata: dict[str, int | float | str] = Field(default_factory=dict)


class LookupResponse(Matched):
    items: list[LookupItem]


class NeighborsRequest(Strict):
    model_config = exactly_one_of("token", "id", "vector", "vector_b64", "text")

    token: Token | None = None
    id: RowId | None = None
    vector: Vector | None = None
    vector_b64: Base64Vector | None = None
    text: Text | None = None
    pieces: Pieces = "one"
    k: K | None = None
    exclude: list[Token] = Field(default_factory=list, max_length=MAX_ITEMS)
    restrict: Restrict | None = None
    exact: Exact = False
    ef_search: EfSearch | None = None
    nprobe: Nprobe | None = None

    @model_validator(mode="after")
    def _one_query(self) -> Self:
        _exactly_one(self, ("token", "id", "vector", "vector_b64", "text"))
        return self


class SingleNeighborsRequest(NeighborsRequest):
    """One neighbour query, at a checkpoint if it names one (a batch names it once)."""

    checkpoint: CheckpointIndex | None = None


class NeighborsBatchRequest(Strict):
    queries: list[NeighborsRequest] = Field(min_length=1, max_length=MAX_ITEMS)
    checkpoint: CheckpointIndex | None = None


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
        _exactly_one(self, ("token", "vector", "vector_b64", "text"))
        return self


Term = Token | WeightedTerm
Terms = Annotated[list[Term], Field(max_length=MAX_ITEMS)]


class AnalogyRequest(Strict):
    positive: Terms = Field(min_length=1)
    negative: Terms = Field(default_factory=list)
    k: K | None = None
    method: Literal["add", "mul"] = Field("add", description="add: 3CosAdd; mul: 3CosMul.")
    exclude: list[Token] = Field(default_factory=list, max_length=MAX_ITEMS)
    restrict: Restrict | None = None
    exact: Exact = False
    ef_search: EfSearch | None = None
    nprobe: Nprobe | None = None


class SingleAnalogyRequest(AnalogyRequest):
    """One analogy, at a checkpoint if it names one (a batch names it once)."""

    checkpoint: CheckpointIndex | None = None


class AnalogyBatchRequest(Strict):
    queries: list[AnalogyRequest] = Field(min_length=1, max_length=MAX_ITEMS)
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


class SimilarityRequest(Strict):
    model_config = exactly_one_of("pairs", "tokens")

    pairs: list[tuple[Key, Key]] | None = Field(None, min_length=1, max_length=MAX_ITEMS)
    tokens: list[Key] | None = Field(None, min_length=1, max_length=MAX_ITEMS)
    checkpoint: CheckpointIndex | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        _exactly_one(self, ("pairs", "tokens"))
        return self


class PairScore(Strict):
    tokens: tuple[str, str]
    score: float


class SimilarityResponse(Matched):
    pairs: list[PairScore] | None = None
    tokens: list[str] | None = None
    matrix: list[list[float]] | None = None


class ScoreRequest(Strict):
    model_config = exactly_one_of("vector", "vector_b64", "text")

    vector: Vector | None = None
    vector_b64: Base64Vector | None = None
    text: Text | None = Field(
        None, description="Score this text's raw row (or the mean of its pieces' rows)."
    )
    pieces: Pieces = "one"
    k: K | None = None
    softmax: Flag = False
    temperature: float = Field(1.0, gt=0, le=1e6, allow_inf_nan=False)
    target: Token | None = None

    @model_validator(mode="after")
    def _one_vector(self) -> Self:
        _exactly_one(self, ("vector", "vector_b64", "text"))
        return self


class ScoredToken(Strict):
    token: str
    id: int
    logit: float
    probability: float | None = None
    text: str | None = Field(None, description="The row decoded to text (text queries).")


class TargetScore(ScoredToken):
    rank: int = Field(description="1 + the number of rows with a strictly higher logit.")


class ScoreResponse(Matched):
    top: list[ScoredToken]
    target: TargetScore | None = None
    log_partition: float | None = Field(
        None, description="log of the softmax normaliser, when softmax is asked for."
    )


class CheckpointInfo(Strict):
    """One version of a table's rows: its place in the set, its name and its file."""

    index: int
    label: str = Field(description="The file name without its format's suffixes.")
    source: str = Field(description="The file's name (no directories).")


class TableInfo(Strict):
    name: str
    rows: int
    width: int
    parameters: int
    bytes: int = Field(
        description="Bytes held: the float32 rows (one copy, memory-mapped when prepared), "
        "their norms, the vocabulary and any approximate index."
    )
    index_type: str
    index: IndexInfo
    zero_rows: int
    source: str
    loaded_at: datetime
    load_seconds: float
    metadata_columns: list[str]
    case_insensitive: bool
    checkpoints: list[CheckpointInfo] = Field(
        description="The table's versions, first to last (the served one); one for a plain table."
    )


class TableList(Strict):
    tables: list[TableInfo]


class Health(Strict):
    status: Literal["ok"]


class Readiness(Strict):
    status: Literal["ready"]
    tables: list[str]
