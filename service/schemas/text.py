"""Request and response models of /tokenize: text -> pieces (ids, offsets, words), and back.

Hard ceilings live here; the configured limits (max_text_length, max_batch) are checked by the
runner and answered with 422 LimitExceeded.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.schemas.batch import BatchResponse
from service.schemas.common import (
    INCOMPLETE,
    MAX_ITEMS,
    MAX_TEXT_LENGTH,
    READABLE,
    Flag,
    Matched,
    OneOf,
    RowId,
    Strict,
    Text,
    exactly_one_of,
)

TokenizerKind = Literal["huggingface", "vocabulary"]
TOKENIZER = Field(
    description="What split the text: the model's own tokenizer.json ('huggingface'), or the "
    "table's vocabulary, one whitespace-separated word a row ('vocabulary')."
)


class TokenizeRequest(OneOf):
    model_config = exactly_one_of("text", "texts", "detokenize")

    text: Text | None = None
    texts: list[Text] | None = Field(None, min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    # fail_fast: the first bad item ends validation. Up to a million items, every bad one
    # built its own error (838,837 booleans: 7.3 s of event loop and 1.5 GB).
    detokenize: list[RowId] | None = Field(
        None,
        min_length=1,
        max_length=MAX_TEXT_LENGTH,
        fail_fast=True,
        description="The other way: ids (rows) -> text, through the model's decoder.",
    )
    add_special_tokens: Flag = Field(
        False, description="Add the model's special tokens ([CLS] ... [SEP] for MiniLM)."
    )
    word_initial: Flag = Field(
        True,
        description="The text's first word starts a word, as a word typed alone does (a "
        "byte-level model's 'king' is the row of ' king'); false: it starts a document, as the "
        "model reads a prompt.",
    )
    skip_special_tokens: Flag = Field(True, description="detokenize: leave special tokens out.")
    include_vector: Flag = Field(False, description="Each piece's raw row too.")
    encoding: Literal["float", "base64"] = Field(
        "float", description="How rows are answered, as in lookup."
    )


class Piece(Strict):
    """One piece of a text: the row it is, and where it comes from in the text."""

    token: str
    id: int
    start: int = Field(
        description="Character offset of the piece in the text (Unicode code points)."
    )
    end: int = Field(description="End offset, exclusive: text[start:end] is what became the piece.")
    word: int | None = Field(
        None, description="Which word of the text; absent for the special tokens a model adds."
    )
    text: str | None = Field(None, description=READABLE)
    incomplete: bool | None = Field(None, description=INCOMPLETE)
    vector: list[float] | None = None
    vector_b64: str | None = None


class TokenizedWord(Strict):
    """A word of the text and whether it has a row of its own."""

    word: int
    text: str
    start: int
    end: int
    pieces: int
    one_row: bool = Field(description="True when the word is exactly one row of the table.")


class TokenizedText(Strict):
    text: str
    pieces: list[Piece]
    words: list[TokenizedWord]


class TokenizeResponse(TokenizedText, Matched):
    tokenizer: TokenizerKind = TOKENIZER


class TokenizeBatchResponse(BatchResponse[TokenizedText]):
    tokenizer: TokenizerKind = TOKENIZER


class DetokenizeResponse(Strict):
    tokenizer: TokenizerKind = TOKENIZER
    ids: list[int]
    text: str


TokenizeAnswer = TokenizeResponse | TokenizeBatchResponse | DetokenizeResponse
