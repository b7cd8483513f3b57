"""Every row's score against one query (a page of them), and ranks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from embedding_service.models.answers import Listed, Matched, Readable
from embedding_service.models.search import Neighbor


@dataclass(frozen=True)
class Cosines(Matched):
    """The scores of rows offset .. offset + count - 1, in row order, of a table of `rows`:
    cosines (or 3CosMul objectives) as float32, NaN for a zero row."""

    rows: int
    offset: int
    scores: np.ndarray

    @property
    def count(self) -> int:
        """Rows scored in this page."""
        return int(self.scores.size)

    @property
    def end(self) -> int:
        """The row after this page's last: where the next page starts."""
        return self.offset + self.count


@dataclass(frozen=True)
class Rank(Readable):
    """A row's cosine with the query (None for a zero row), how many rows score strictly
    above it (the query's own row and zero rows never count) and its rank, closer + 1."""

    token: str
    id: int
    score: float | None
    closer: int
    rank: int


@dataclass(frozen=True)
class Ranks(Matched, Listed[Rank]):
    """The rank of each of the others, in order; with closer_rows, a page of the rows closer
    than the one other, in row order."""

    token: str
    id: int
    ranks: list[Rank]
    closer_rows: list[Neighbor] | None = None

    @property
    def listed(self) -> list[Rank]:
        return self.ranks
