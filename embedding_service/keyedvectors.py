"""RemoteKeyedVectors: gensim's KeyedVectors API over HTTP, for scripts that switch one line.

    kv = KeyedVectors.load_word2vec_format("vectors.bin", binary=True)   # before
    kv = RemoteKeyedVectors("http://127.0.0.1:8000", "w2v")              # after

Same method names, signatures, return shapes and exceptions (KeyError for an unknown key).
The searches run on the server (exhaustively by default, as gensim's do); the methods that
need only a few rows (distances, n_similarity, doesnt_match) look those rows up and compute
with gensim's own arithmetic (vector_math.py). What today's endpoints cannot answer exactly
raises NotImplementedError naming what is missing (docs/client.md, "What needs the server").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from numbers import Integral
from typing import Any, Literal

import numpy as np

from embedding_service import vector_math, word_evaluation
from embedding_service.client import Client
from embedding_service.errors import LimitExceeded, UnknownToken
from embedding_service.keyed_rows import KeyedRows
from embedding_service.models.search import Neighbors
from embedding_service.terms import (
    Weighted,
    ensure_list,
    first_unknown,
    restrict_of,
    service_term,
    weighted_terms,
)

# The server's documented default max_k (README, "Configuration"): how deep rank and
# closer_than look, until the server refuses it with its own figure.
DOCUMENTED_MAX_K = 1000
NEEDS_ALL_SCORES = (
    "{method} needs a score for every row of the table; the service has no endpoint that "
    "answers them (docs/client.md, 'What needs the server': POST .../cosines)"
)


class RemoteKeyedVectors(KeyedRows):
    """A served table with gensim's KeyedVectors methods."""

    def __init__(
        self,
        url: str | Client,
        table: str,
        api_key: str | None = None,
        *,
        exact: bool = True,
        **client_options: Any,
    ) -> None:
        """`url` is the server (or a Client to share); `exact` searches every row as gensim
        does even where the table has an approximate index (False: the index's speed)."""
        client = url if isinstance(url, Client) else Client(url, api_key, **client_options)
        super().__init__(client, table)
        self.exact = exact
        self._depth = DOCUMENTED_MAX_K

    def __repr__(self) -> str:
        return f"<RemoteKeyedVectors {self.table!r} at {self.client.url}: {len(self)} keys>"

    # Neighbours.

    def most_similar(
        self,
        positive: Any = None,
        negative: Any = None,
        topn: int | None = 10,
        clip_start: int = 0,
        clip_end: int | None = None,
        restrict_vocab: int | None = None,
        indexer: Any = None,
    ) -> list[tuple[str, float]]:
        """The topn keys nearest the weighted mean of positive minus negative keys (3CosAdd)."""
        if isinstance(topn, Integral) and topn < 1:
            return []
        if indexer is not None:
            raise NotImplementedError("an indexer searches in this process; the service searches")
        restrict = restrict_of(clip_start, clip_end, restrict_vocab, len(self))
        terms = self._keyed_terms(weighted_terms(ensure_list(positive), ensure_list(negative)))
        if not topn:
            raise NotImplementedError(NEEDS_ALL_SCORES.format(method="most_similar(topn=None)"))
        return self._analogy(terms, int(topn), restrict, "add")

    def similar_by_word(
        self, word: Any, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]]:
        """The topn keys nearest `word`."""
        return self.most_similar(positive=[word], topn=topn, restrict_vocab=restrict_vocab)

    similar_by_key = similar_by_word

    def similar_by_vector(
        self, vector: np.ndarray, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> list[tuple[str, float]]:
        """The topn keys nearest a vector."""
        return self.most_similar(positive=[vector], topn=topn, restrict_vocab=restrict_vocab)

    def most_similar_cosmul(
        self,
        positive: Any = None,
        negative: Any = None,
        topn: int | None = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]]:
        """3CosMul (Levy and Goldberg): prod of shifted cosines to positive over negative keys.

        gensim 4.4 accepts restrict_vocab here and ignores it (it scores every row); so does
        this method, to give the same answers.
        """
        if isinstance(topn, Integral) and topn < 1:
            return []
        positive, negative = ensure_list(positive), ensure_list(negative)
        for key in (*positive, *negative):
            self._check_cosmul_term(key)
        if not positive:
            raise ValueError("cannot compute similarity with no input")
        terms = [Weighted(term, 1.0) for term in positive] + [
            Weighted(term, -1.0) for term in negative
        ]
        if not topn:
            raise NotImplementedError(
                NEEDS_ALL_SCORES.format(method="most_similar_cosmul(topn=None)")
            )
        return self._analogy(terms, int(topn), None, "mul")

    def _check_cosmul_term(self, term: Any) -> None:
        if isinstance(term, str):
            self.get_index(term)
        elif not isinstance(term, np.ndarray):
            raise ValueError(f"most_similar_cosmul takes keys (str) and vectors, not {term!r}")
        elif abs(float(np.linalg.norm(term)) - 1.0) > 1e-6:
            # gensim multiplies by a raw vector's cosines times its norm; the service's 3CosMul
            # scores every term at unit length, which gives other answers for other norms.
            raise NotImplementedError(
                "most_similar_cosmul with a vector of norm != 1: gensim scales its cosines by "
                "its norm, the service's 3CosMul unit-normalises every term (docs/client.md, "
                "'What needs the server')"
            )

    def _keyed_terms(self, terms: list[Weighted]) -> list[Weighted]:
        """Row numbers as their keys (the service names rows by key); KeyError if absent."""
        keyed = []
        for term in terms:
            item = term.term
            if isinstance(item, int | np.integer) and not isinstance(item, bool):
                self.get_index(item)
                item = self.index_to_key[int(item)]
            keyed.append(Weighted(item, term.weight))
        return keyed

    def _analogy(
        self, terms: list[Weighted], topn: int, restrict: int | None, method: Literal["add", "mul"]
    ) -> list[tuple[str, float]]:
        positive = [service_term(t.term, t.weight) for t in terms if t.weight > 0]
        negative = [service_term(t.term, -t.weight) for t in terms if t.weight < 0]
        unweighted = [t.term for t in terms if t.weight == 0 and isinstance(t.term, str)]
        if not positive:
            raise NotImplementedError(
                "most_similar with no positive weight: the service's analogies need a positive "
                "term (docs/client.md, 'What needs the server')"
            )
        try:
            answer = self.client.analogy(
                self.table,
                positive,
                negative,
                topn,
                method=method,
                exclude=unweighted,
                restrict=restrict,
                exact=self.exact,
            )
        except UnknownToken as error:
            raise first_unknown(error.tokens, terms) from None
        self._refuse_fallback(answer)
        return [(neighbor.token, neighbor.score) for neighbor in answer]

    def _refuse_fallback(self, answer: Neighbors) -> None:
        for asked, stored in answer.matched.items():
            if isinstance(stored, str):  # only a case fallback maps a key to another key
                raise KeyError(f"Key '{asked}' not present in vocabulary")

    # Similarity between given keys.

    def similarity(self, w1: Any, w2: Any) -> float:
        """The cosine of two keys' rows."""
        first, second = self._key(w1), self._key(w2)
        try:
            scores = self.client.similarity(self.table, [(first, second)])
        except UnknownToken as error:
            raise KeyError(f"Key '{error.tokens[0]}' not present") from None
        if scores.matched:
            raise KeyError(f"Key '{next(iter(scores.matched))}' not present")
        return float(scores.scores[0])

    def distance(self, w1: Any, w2: Any) -> float:
        """1 - similarity(w1, w2)."""
        return 1 - self.similarity(w1, w2)

    def n_similarity(self, ws1: Sequence[Any], ws2: Sequence[Any]) -> float:
        """The cosine of the means of two sets of keys' rows (unknown keys left out)."""
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError("At least one of the passed list is empty.")
        mean1 = self.get_mean_vector(ws1, pre_normalize=False)
        mean2 = self.get_mean_vector(ws2, pre_normalize=False)
        unit = vector_math.unit_vector
        return float(np.dot(unit(mean1), unit(mean2)))

    def distances(self, word_or_vector: Any, other_words: Sequence[Any] = ()) -> np.ndarray:
        """Cosine distances from a key or vector to each of `other_words`."""
        if isinstance(word_or_vector, str | int | np.integer):
            vector = self.get_vector(word_or_vector)
        else:
            vector = np.asarray(word_or_vector)
        if not other_words:
            raise NotImplementedError(NEEDS_ALL_SCORES.format(method="distances(other_words=())"))
        return 1 - vector_math.cosine_similarities(vector, self.rows(list(other_words)))

    def rank_by_centrality(
        self, words: Sequence[Any], use_norm: bool = True
    ) -> list[tuple[Any, Any]]:
        """The words (those present) by cosine to their centroid, most central first."""
        used = [word for word, found in zip(words, self._present(words), strict=True) if found]
        if not used:
            raise ValueError("cannot select a word from an empty list")
        rows = self.rows(used)
        vectors = (vector_math.unit_rows(rows) if use_norm else rows).astype(np.float32)
        mean = vector_math.mean_vector(list(vectors), normalize=True)
        return sorted(zip(np.dot(vectors, mean), used, strict=True), reverse=True)

    def doesnt_match(self, words: Sequence[Any]) -> Any:
        """The word furthest from the mean of the others."""
        return self.rank_by_centrality(words)[-1][1]

    def most_similar_to_given(self, key1: Any, keys_list: Sequence[Any]) -> Any:
        """The key of `keys_list` most similar to `key1`."""
        return keys_list[int(np.argmax([self.similarity(key1, key) for key in keys_list]))]

    # Ranks: exact within the server's deepest neighbour list (max_k).

    def closer_than(self, key1: Any, key2: Any) -> list[str]:
        """Every key closer to key1 than key2 is, in row order."""
        first, second = self._key(key1), self._key(key2)
        self.get_index(second)
        if first == second:
            return []
        neighbors = self._deepest_neighbors(first)
        scores = {neighbor.token: neighbor for neighbor in neighbors}
        if second not in scores:
            raise NotImplementedError(
                f"{second!r} is not among the {len(neighbors)} nearest rows of {first!r}, the "
                "most one neighbour query answers: its rank needs a server endpoint "
                "(docs/client.md, 'What needs the server': POST .../rank)"
            )
        bound = scores[second].score
        closer = sorted((n.id, n.token) for n in neighbors if n.score > bound)
        return [token for _, token in closer]

    def rank(self, key1: Any, key2: Any) -> int:
        """1 + the number of keys closer to key1 than key2 is."""
        return len(self.closer_than(key1, key2)) + 1

    def _deepest_neighbors(self, key: str) -> Neighbors:
        depth = min(self._depth, len(self) - 1)
        try:
            return self.client.neighbors(self.table, key, depth, exact=self.exact)
        except LimitExceeded as error:
            if error.got != depth or error.limit >= depth:
                raise
            self._depth = error.limit
            return self._deepest_neighbors(key)
        except UnknownToken:
            raise KeyError(f"Key '{key}' not present") from None

    # Evaluation (word_evaluation.py).

    def evaluate_word_analogies(
        self,
        analogies: str | os.PathLike[str],
        restrict_vocab: int = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
        similarity_function: str = "most_similar",
    ) -> tuple[float, list[dict[str, Any]]]:
        """gensim's analogy evaluation: (accuracy, sections with their correct and incorrect
        questions); the questions are answered by the server in batches."""
        return word_evaluation.evaluate_word_analogies(
            self, analogies, restrict_vocab, case_insensitive, dummy4unknown
        )

    def evaluate_word_pairs(
        self,
        pairs: str | os.PathLike[str],
        delimiter: str = "\t",
        encoding: str = "utf8",
        restrict_vocab: int = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
    ) -> tuple[word_evaluation.Correlation, word_evaluation.Correlation, float]:
        """gensim's word-pair evaluation: (pearson, spearman, oov percent), from the server."""
        return word_evaluation.evaluate_word_pairs(
            self, pairs, delimiter, encoding, restrict_vocab, case_insensitive, dummy4unknown
        )
