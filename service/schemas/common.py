"""What every request model shares: strict models, bounded tokens, texts, vectors and numbers.

Hard ceilings live here (no setting lifts them); the configurable limits are checked as a request
is resolved (service/operations/limits.py).
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

MAX_TOKEN_LENGTH = 256


MAX_ITEMS = 10_000


MAX_WIDTH = 65_536


MAX_K = 100_000


# Text is bounded by the max_text_length setting; this is the ceiling no setting can lift.
MAX_TEXT_LENGTH = 1_000_000


# Far above any real embedding component, and small enough that no dot product of such a
# vector with a table row can overflow float32 into infinity.
MAX_COMPONENT = 1e15


# A token may be empty: a row's token can be "" (a word2vec line that begins with a space, a
# token whose bytes unicode_errors="ignore" drops), and gensim finds that row by its key.
Token = Annotated[str, Field(max_length=MAX_TOKEN_LENGTH)]


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


Vector = Annotated[list[FiniteFloat], Field(min_length=1, max_length=MAX_WIDTH, fail_fast=True)]


# Base64 of little-endian float32s: whole 16-character groups (12 bytes, three floats), then
# the padded tail of one or two more floats. Every string the pattern admits decodes to a whole
# number of float32s; the width, NaN/Infinity and the component bound are checked on decoding
# (operations/resolving.py `vector_of`), as the schema cannot state them.
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


# The schema's ceiling on a candidate set; the configured max_among (default 20,000) is lower.
MAX_AMONG = 1_000_000


AmongIds = Annotated[
    list[RowId],
    Field(
        min_length=1,
        max_length=MAX_AMONG,
        description="Search only these rows (ids; repeats count once): each query's exact top "
        "k among exactly them, whatever index the table has (at most max_among ids; not with "
        "restrict). The query's own rows and exclusions are still left out, zero rows never "
        "answer.",
    ),
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
        description="IVF, IVF-PQ and fast-scan tables: lists searched for this query, at most "
        "the table's max_nprobe "
        "(422 beyond).",
    ),
    NUMBER_ONLY,
]


ProbeMargin = Annotated[
    float,
    Field(
        ge=0,
        le=2,
        strict=True,
        allow_inf_nan=False,
        description="IVF, IVF-PQ and fast-scan tables: of the nprobe lists nearest the query, "
        "skip those whose centroid's cosine to it is more than this below the nearest list's "
        "(default the table's probe_margin; 2 probes all nprobe).",
    ),
]


KFactor = Annotated[
    int,
    Field(
        ge=1,
        le=4096,
        description="IVF-PQ and fast-scan tables: candidates proposed per result, each "
        "rescored exactly, at most the table's max_k_factor (422 beyond); a larger one finds "
        "more true neighbours, slower.",
    ),
    NUMBER_ONLY,
]


Weight = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]


class Strict(BaseModel):
    """Unknown fields are an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


def exactly_one_of(*fields: str) -> ConfigDict:
    """A model config whose JSON Schema says that exactly one of `fields` is given, not null;
    a OneOf model checks just what it says.

    Without it the published schema calls {} a valid request, and clients (and fuzzers)
    generated from it send requests that can only be refused.
    """
    branches = [{"required": [f], "properties": {f: {"not": {"type": "null"}}}} for f in fields]
    return ConfigDict(extra="forbid", json_schema_extra={"oneOf": branches})  # type: ignore[dict-item]


class OneOf(Strict):
    """A request that takes exactly one of some fields: those its config's JSON Schema names
    (exactly_one_of), so the schema and the check cannot disagree."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        one_of(cls)  # a model that names no fields fails as it is defined, not on a request

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        fields = one_of(type(self))
        given = [name for name in fields if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(fields)} (got {len(given)})")
        return self


@cache
def one_of(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of which a OneOf model takes exactly one, from its JSON Schema's oneOf."""
    extra = model.model_config.get("json_schema_extra")
    branches: Any = extra.get("oneOf") if isinstance(extra, dict) else None
    fields = tuple(str(branch["required"][0]) for branch in branches or ())
    if not fields:
        raise TypeError(f"{model.__name__} names no fields to take one of (exactly_one_of)")
    return fields


READABLE = (
    "A language model's byte-level or SentencePiece token as the text it stands for "
    '("Ġrunning" is " running"); absent for other tables.'
)
INCOMPLETE = "True when the token is only part of a character's UTF-8 bytes (written <0xNN>)."


class Neighbor(Strict):
    token: str
    id: int
    score: float
    text: str | None = Field(None, description=READABLE)
    incomplete: bool | None = Field(None, description=INCOMPLETE)


# A query's name -> what it matched: a token found only through the case-insensitive fallback
# -> the stored token; a text -> the one token it is (when not the text itself), or its pieces.
MatchedNames = dict[str, str | list[str]]


class Matched(Strict):
    """Tokens that matched only through the case-insensitive fallback (query -> stored token),
    and texts: the one token they are, when it is not the text itself, or their pieces."""

    matched: MatchedNames = Field(default_factory=dict)


class TextKey(Strict):
    """A text in place of a token: split by the table's tokenizer."""

    text: Text
    pieces: Pieces = "one"


# A token, or {"text": ..., "pieces": ...}: a string and an object, never ambiguous.
Key = Token | TextKey
