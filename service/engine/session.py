"""A gensim-like facade over one table and its index, for notebooks, the CLI and tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.errors import UnknownToken
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import (
    AnalogyMethod,
    AnalogyQuery,
    NeighborQuery,
    Neighbors,
    Term,
)
from service.engine.search.ranking import Ranks, ranks, scores_of
from service.engine.tables.table import EmbeddingTable

Key = str | np.ndarray
TokenScore = tuple[str, float]


class Session:
    """Token-level queries with gensim KeyedVectors names and semantics."""

    def __init__(self, table: EmbeddingTable, search: CosineSearch | None = None) -> None:
        self.table = table
        self.search = search or CosineSearch(table)

    def most_similar(
        self,
        positive: Sequence[Key],
        negative: Sequence[Key] = (),
        topn: int = 10,
        restrict_vocab: int | None = None,
    ) -> list[TokenScore]:
        """gensim's most_similar: cosine to the normalised mean; inputs are never answers."""
        return self._analogy(positive, negative, topn, restrict_vocab, "add")

    def most_similar_cosmul(
        self, positive: Sequence[Key], negative: Sequence[Key] = (), topn: int = 10
    ) -> list[TokenScore]:
        """gensim's most_similar_cosmul (3CosMul)."""
        return self._analogy(positive, negative, topn, None, "mul")

    def similar_by_vector(self, vector: np.ndarray, topn: int = 10) -> list[TokenScore]:
        """Top-n cosine neighbours of a raw vector."""
        [result] = self.search.neighbors([NeighborQuery(vector, topn)])
        return self.pairs(result)

    def similarity(self, first: str, second: str) -> float:
        """Cosine of two tokens' rows."""
        rows = self.rows([first, second])
        return float(self.search.similarity(rows[:1], rows[1:])[0])

    def distances(self, token: str) -> np.ndarray:
        """gensim's distances(token): 1 - the cosine of every row (NaN for zero rows)."""
        row = self.rows([token])
        plan = self.search.plan(NeighborQuery(self.table.vectors[row[0]], 1, row=int(row[0])))
        return 1 - scores_of(self.search.store, plan, 0, self.table.rows)

    def closer_than(self, first: str, second: str) -> list[str]:
        """gensim's closer_than: the tokens closer to `first` than `second` is, in row order."""
        found = self._ranks(first, second, listed=True)
        assert found.listed is not None
        return [self.table.tokens[row] for row in found.listed.tolist()]

    def rank(self, first: str, second: str) -> int:
        """gensim's rank: 1 + the number of tokens closer to `first` than `second` is."""
        return int(self._ranks(first, second).closer[0]) + 1

    def _ranks(self, first: str, second: str, listed: bool = False) -> Ranks:
        rows = self.rows([first, second])
        store = self.search.store
        direction = store.directions(rows[:1])[0]
        return ranks(store, self.search.kernel, direction, rows[1:], int(rows[0]), listed)

    def rows(self, tokens: Sequence[str]) -> np.ndarray:
        """Row numbers of tokens; UnknownToken names every missing one."""
        return self.table.resolve(tokens)

    def pairs(self, result: Neighbors) -> list[TokenScore]:
        """Engine rows and scores as (token, score) pairs."""
        tokens = self.table.tokens
        return [
            (tokens[i], s) for i, s in zip(result.ids.tolist(), result.scores.tolist(), strict=True)
        ]

    def _analogy(
        self,
        positive: Sequence[Key],
        negative: Sequence[Key],
        topn: int,
        restrict: int | None,
        method: AnalogyMethod,
    ) -> list[TokenScore]:
        query = AnalogyQuery(
            positive=self._terms(positive),
            negative=self._terms(negative),
            k=topn,
            method=method,
            restrict=restrict,
        )
        [result] = self.search.analogies([query])
        return self.pairs(result)

    def _terms(self, keys: Sequence[Key]) -> tuple[Term, ...]:
        tokens = [k for k in keys if isinstance(k, str)]
        missing = [t for t in tokens if self.table.find(t) is None]
        if missing:
            raise UnknownToken(missing)
        return tuple(
            Term(row=self.table.token_to_id[k]) if isinstance(k, str) else Term(vector=k)
            for k in keys
        )
