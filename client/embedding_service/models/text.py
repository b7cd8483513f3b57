"""/tokenize answers: a text's pieces (rows), words and offsets, and the way back."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from embedding_service.models.answers import Matched, Readable


@dataclass(frozen=True)
class Piece(Readable):
    """One piece of a text: its row, and text[start:end] is what became it."""

    token: str
    id: int
    start: int
    end: int
    word: int | None = None


@dataclass(frozen=True)
class TokenizedWord:
    """A word of the text, its pieces and whether it is one row of the table."""

    word: int
    text: str
    start: int
    end: int
    pieces: int
    one_row: bool


@dataclass(frozen=True)
class Tokenized(Matched):
    """A text split as the table's tokenizer splits it; `vectors` the pieces' rows if asked."""

    text: str
    pieces: list[Piece]
    words: list[TokenizedWord]
    tokenizer: str
    vectors: np.ndarray | None = None

    @property
    def ids(self) -> list[int]:
        """The pieces' rows, in order."""
        return [piece.id for piece in self.pieces]


@dataclass(frozen=True)
class Detokenized:
    """Ids decoded back to text by the model's decoder."""

    tokenizer: str
    ids: list[int]
    text: str
