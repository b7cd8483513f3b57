"""Neighbour and analogy queries: the inputs beyond plain tokens, and the answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from embedding_service.models.answers import Listed, Matched, Readable


@dataclass(frozen=True)
class Text:
    """A text in place of a token, split by the table's tokenizer.

    `pieces="one"` refuses a text that is several pieces (SeveralPieces); "mean" uses the mean
    of the pieces' rows.
    """

    text: str
    pieces: Literal["one", "mean"] = "one"


# A query names a row by token or id, gives a vector (1-D), or a text.
Query = str | int | np.ndarray | Text
# An analogy term: a token, vector or text, optionally with its weight as (term, weight).
Term = str | np.ndarray | Text | tuple[str | np.ndarray | Text, float]


@dataclass(frozen=True)
class Analogy:
    """One analogy of a batch: positive - negative terms (3CosAdd or 3CosMul)."""

    positive: Sequence[Term]
    negative: Sequence[Term] = ()
    exclude: Sequence[str] = ()


@dataclass(frozen=True)
class Neighbor(Readable):
    """A row near the query: its token, id and cosine (or 3CosMul objective)."""

    token: str
    id: int
    score: float


@dataclass(frozen=True)
class Neighbors(Matched, Listed[Neighbor]):
    """One query's neighbours, best first; also the tokens the case fallback matched."""

    neighbors: list[Neighbor]

    @property
    def listed(self) -> list[Neighbor]:
        return self.neighbors

    @property
    def tokens(self) -> list[str]:
        """The neighbours' tokens, best first."""
        return [neighbor.token for neighbor in self.neighbors]

    @property
    def ids(self) -> np.ndarray:
        """The neighbours' rows, best first."""
        return np.array([neighbor.id for neighbor in self.neighbors], dtype=np.int64)

    @property
    def scores(self) -> np.ndarray:
        """The neighbours' scores, best first."""
        return np.array([neighbor.score for neighbor in self.neighbors], dtype=np.float64)
