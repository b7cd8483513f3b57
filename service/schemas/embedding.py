"""Request and response models of text embeddings: OpenAI's /v1/embeddings and TEI's /embed.

Both are the standard APIs' own shapes, so their clients work unchanged (OpenAI's Python SDK
with `base_url`); errors keep the service's one envelope, whose `error.message` OpenAI's SDK
reads. Hard ceilings live here; the configured limits (max_embedding_inputs,
max_embedding_text_length) are checked before any text is split (operations/embedding.py).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, Tag

from service.schemas.common import MAX_ITEMS, MAX_TEXT_LENGTH, NUMBER_ONLY, Flag, Strict, Text

TableName = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
        description="The served table to embed with: a static embedding model (Model2Vec, "
        "WordLlama), e.g. 'wordllama'.",
    ),
]
TokenId = Annotated[int, Field(ge=0, le=2**31 - 1), NUMBER_ONLY]
TokenIds = Annotated[list[TokenId], Field(min_length=1, max_length=MAX_TEXT_LENGTH, fail_fast=True)]
Dimensions = Annotated[
    int,
    Field(
        ge=1,
        le=65_536,
        description="Cut each embedding to its first this many components, where the model "
        "was trained so (WordLlama's Matryoshka widths: 64, 128 or 256); any other model "
        "answers only in its full width (422 otherwise).",
    ),
    NUMBER_ONLY,
]


def input_form(value: object) -> str:
    """Which form an input takes, from its first item: so a bad input is told what is wrong
    with the form it has, not with each of the four."""
    if isinstance(value, str):
        return "text"
    first = value[0] if isinstance(value, list) and value else None
    if isinstance(first, list):
        return "token lists"
    if isinstance(first, int | float) and not isinstance(first, bool):
        return "token ids"  # JSON's 2.0 is an integer too
    return "texts"


Texts = Annotated[list[Text], Field(min_length=1, max_length=MAX_ITEMS, fail_fast=True)]
Input = Annotated[
    Annotated[Text, Tag("text")]
    | Annotated[Texts, Tag("texts")]
    | Annotated[TokenIds, Tag("token ids")]
    | Annotated[
        list[TokenIds],
        Field(min_length=1, max_length=MAX_ITEMS, fail_fast=True),
        Tag("token lists"),
    ],
    Discriminator(input_form),
]


class EmbeddingsRequest(Strict):
    """OpenAI's embeddings request: texts or token ids in, one vector each out."""

    input: Input = Field(
        description="A text, a list of texts, a list of token ids (one input: the model's "
        "pieces, as its tokenizer numbers them) or a list of such lists."
    )
    model: TableName
    encoding_format: Literal["float", "base64"] = Field(
        "float",
        description="'float': JSON numbers; 'base64': the little-endian float32s, base64 "
        "encoded (what OpenAI's Python SDK asks for and decodes).",
    )
    dimensions: Dimensions | None = None
    user: str | None = Field(None, max_length=256, description="Accepted and ignored.")


class Embedding(Strict):
    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str = Field(description="Floats, or base64 of float32s.")


class Usage(Strict):
    prompt_tokens: int = Field(description="The pieces pooled, summed over the inputs.")
    total_tokens: int


class EmbeddingsResponse(Strict):
    object: Literal["list"] = "list"
    data: list[Embedding]
    model: str
    usage: Usage


class EmbedRequest(Strict):
    """Text Embeddings Inference's embed request; the table is the configured one
    (embed_table: by default the first static embedding model served)."""

    inputs: Annotated[
        Annotated[Text, Tag("text")] | Annotated[Texts, Tag("texts")],
        Discriminator(input_form),
    ]
    normalize: Flag = Field(True, description="Answer unit vectors (TEI's default).")
    truncate: Flag = Field(
        False,
        description="A text past the model's maximum length (Model2Vec's max_length pieces) "
        "is refused with 422 unless this is true; then it is cut as the model's library cuts "
        "it. A model without a maximum (WordLlama) reads every piece either way.",
    )
    dimensions: Dimensions | None = None


class StaticEmbeddingInfo(Strict):
    """How a static embedding model turns a text into its vector, from its own files."""

    library: Literal["model2vec", "wordllama"] = Field(
        description="Whose recipe: Model2Vec's StaticModel.encode or WordLlama's embed."
    )
    pooling: Literal["mean"]
    normalize: bool = Field(description="Whether /v1/embeddings answers unit vectors.")
    max_tokens: int | None = Field(description="Pieces read at most (the first ones).")
    max_characters: int | None = Field(
        description="Characters read at most, before splitting (Model2Vec: max_length x the "
        "median token length)."
    )
    unknown_id: int | None = Field(description="The piece dropped from every split.")
    dimensions: list[int] = Field(description="The widths `dimensions` may ask for.")
    token_weights: bool = Field(description="Whether each piece's row is weighted.")
