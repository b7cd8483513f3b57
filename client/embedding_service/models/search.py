"""Neighbour and analogy queries: the inputs beyond plain tokens, and the answers."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np


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
class Neighbor:
    """A row near the query: its token, id and cosine (or 3CosMul objective)."""

    token: str
    id: int
    score: float


@dataclass(frozen=True)
class Neighbors(Sequence[Neighbor]):
    """One query's neighbours, best first; also the tokens the case fallback matched."""

    neighbors: list[Neighbor]
    matched: dict[str, str | list[str]] = field(default_factory=dict)

    @overload
    def __getitem__(self, index: int) -> Neighbor: ...
    @overload
    def __getitem__(self, index: slice) -> list[Neighbor]: ...
    def __getitem__(self, index: int | slice) -> Neighbor | list[Neighbor]:
        return self.neighbors[index]

    def __len__(self) -> int:
        return len(self.neighbors)

    def __iter__(self) -> Iterator[Neighbor]:
        return iter(self.neighbors)

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
