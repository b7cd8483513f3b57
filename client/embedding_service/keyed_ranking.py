"""gensim's methods that need every row's score or a rank, over POST .../cosines and .../rank:
the arrays of most_similar(topn=None) and distances(key), and rank and closer_than.

Scores come a page at a time (the server's max_cosine_rows bounds a page) and are float32, as
gensim's arrays are. Where gensim's arithmetic meets a zero row it answers NaN, and so do these
methods: a zero row scores NaN, nothing is closer than it, and a zero row or vector as the
query makes every distance NaN (the server refuses it as a direction: ZeroVector).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from embedding_service import vector_math
from embedding_service.errors import LimitExceeded, UnknownToken, ZeroVector
from embedding_service.keyed_rows import KeyedRows, refuse_fallback
from embedding_service.models.ranking import Cosines, Ranks
from embedding_service.models.search import Analogy, Query


class KeyedRanking(KeyedRows):
    """Scores of every row and ranks, as gensim's KeyedVectors computes them in memory."""

    def every_score(
        self,
        query: Query | Analogy,
        method: Literal["add", "mul"] | None = None,
        start: int = 0,
        stop: int | None = None,
        vector_terms: Literal["unit", "as_given"] | None = None,
    ) -> np.ndarray:
        """Rows start..stop's scores against a query (an Analogy: 3CosAdd or 3CosMul), float32
        in row order, fetched a page at a time."""
        stop = len(self) if stop is None else stop
        pages: list[np.ndarray] = []
        offset, size = start, None
        options = {"method": method, "vector_terms": vector_terms}
        while offset < stop:
            limit = stop - offset if size is None else min(stop - offset, size)
            page, refused = self._page(query, options, offset, limit)
            if refused:  # the server's largest page: ask for no more from here on
                size = page.count
            if not page.count:
                break
            pages.append(page.scores[: stop - offset])
            offset = page.end
        return np.concatenate(pages) if pages else np.empty(0, dtype=np.float32)

    def _page(
        self, query: Query | Analogy, options: dict[str, Any], offset: int, limit: int
    ) -> tuple[Cosines, bool]:
        """One page from `offset` of `limit` rows, or of as many as the server allows when it
        refuses that many (and whether it did); `options`: the analogy's method and
        vector_terms."""
        cosines = self.client.cosines
        refused = False
        try:
            page = cosines(self.table, query, offset=offset, limit=limit, **options)
        except LimitExceeded:
            page, refused = cosines(self.table, query, offset=offset, **options), True
        except UnknownToken as error:
            raise KeyError(f"Key '{error.tokens[0]}' not present in vocabulary") from None
        refuse_fallback(page.matched)
        return page, refused

    def all_distances(self, word_or_vector: Any) -> np.ndarray:
        """gensim's distances(word_or_vector): 1 - the cosine of every row, float32."""
        query: Query
        dtype = np.dtype(np.float32)
        if isinstance(word_or_vector, str):
            query = word_or_vector
        elif isinstance(word_or_vector, int | np.integer):
            query = self.get_index(word_or_vector)
        else:
            query = np.asarray(word_or_vector)
            dtype = vector_math.distances_dtype(query.dtype)
        try:
            return (1 - self.every_score(query)).astype(dtype, copy=False)
        except ZeroVector:  # gensim's cosines from a zero vector: 0 / 0
            return np.full(len(self), np.nan, dtype=dtype)

    def closer_than(self, key1: Any, key2: Any) -> list[str]:
        """Every key closer to key1 than key2 is, in row order."""
        second = self._key(key2)
        listed: list[str] = []
        while True:
            try:
                answer = self._rank(key1, second, closer_rows=True, offset=len(listed))
            except ZeroVector:  # every distance from a zero row is NaN: none is smaller
                return []
            page = answer.closer_rows or []
            listed += [row.token for row in page]
            if not page or len(listed) >= answer[0].closer:
                return listed

    def rank(self, key1: Any, key2: Any) -> int:
        """1 + the number of keys closer to key1 than key2 is."""
        try:
            return self._rank(key1, self._key(key2))[0].rank
        except ZeroVector:
            return 1

    def _rank(self, key1: Any, key2: str, **page: Any) -> Ranks:
        first = key1 if isinstance(key1, str) else self.get_index(key1)
        try:
            answer = self.client.rank(self.table, first, [key2], **page)
        except UnknownToken as error:
            raise KeyError(f"Key '{error.tokens[0]}' not present") from None
        refuse_fallback(answer.matched)
        return answer
