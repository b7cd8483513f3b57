"""RemoteKeyedVectors: gensim's KeyedVectors API over HTTP, for scripts that switch one line.

    kv = KeyedVectors.load_word2vec_format("vectors.bin", binary=True)   # before
    kv = RemoteKeyedVectors("http://127.0.0.1:8000", "w2v")              # after

Same method names, signatures, return shapes and exceptions (KeyError for an unknown key).
The searches run on the server (exhaustively by default, as gensim's do); the methods that
need only a few rows (distances to given keys, n_similarity, doesnt_match) look those rows up
and compute with gensim's own arithmetic (vector_math.py); a score for every row (topn=None,
distances(key)) and ranks come from the server's /cosines and /rank (keyed_ranking.py). What
the endpoints cannot answer exactly raises NotImplementedError saying why (docs/client.md,
"Not answered").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from numbers import Integral
from typing import Any, Literal

import numpy as np

from embedding_service import vector_math, word_evaluation
from embedding_service.client import Client
from embedding_service.errors import UnknownToken, ZeroVector
from embedding_service.keyed_rows import refuse_fallback
from embedding_service.keyed_table import KeyedTable
from embedding_service.models.search import Analogy
from embedding_service.terms import (
    Weighted,
    clip_range,
    ensure_list,
    first_unknown,
    restrict_of,
    service_term,
    weighted_terms,
)


class RemoteKeyedVectors(KeyedTable):
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
    ) -> Any:
        """The topn keys nearest the weighted mean of positive minus negative keys (3CosAdd);
        topn=None: the cosine of every row (of gensim's clip range) with that mean."""
        if isinstance(topn, Integral) and topn < 1:
            return []
        if indexer is not None:
            raise NotImplementedError("an indexer searches in this process; the service searches")
        if not topn:
            terms = self._keyed_terms(weighted_terms(ensure_list(positive), ensure_list(negative)))
            start, stop = clip_range(clip_start, clip_end, restrict_vocab, len(self))
            return self.every_score(self._query(terms), "add", start, stop)
        restrict = restrict_of(clip_start, clip_end, restrict_vocab, len(self))
        terms = self._keyed_terms(weighted_terms(ensure_list(positive), ensure_list(negative)))
        return self._analogy(terms, int(topn), restrict, "add")

    def similar_by_word(
        self, word: Any, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> Any:
        """The topn keys nearest `word`."""
        return self.most_similar(positive=[word], topn=topn, restrict_vocab=restrict_vocab)

    similar_by_key = similar_by_word

    def similar_by_vector(
        self, vector: np.ndarray, topn: int | None = 10, restrict_vocab: int | None = None
    ) -> Any:
        """The topn keys nearest a vector."""
        return self.most_similar(positive=[vector], topn=topn, restrict_vocab=restrict_vocab)

    def most_similar_cosmul(
        self,
        positive: Any = None,
        negative: Any = None,
        topn: int | None = 10,
        restrict_vocab: int | None = None,
    ) -> Any:
        """3CosMul (Levy and Goldberg): prod of shifted cosines to positive over negative keys;
        topn=None: that objective for every row.

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
        # gensim scores a raw vector as given: its cosines times its norm.
        raw = any(isinstance(term, np.ndarray) for term in (*positive, *negative))
        given: Literal["as_given"] | None = "as_given" if raw else None
        if not topn:
            scores = self.every_score(self._query(terms), "mul", vector_terms=given)
            return scores.astype(_cosmul_dtype(positive, negative), copy=False)
        return self._analogy(terms, int(topn), None, "mul", given)

    def _check_cosmul_term(self, term: Any) -> None:
        if isinstance(term, str):
            self.get_index(term)
        elif not isinstance(term, np.ndarray):
            raise ValueError(f"most_similar_cosmul takes keys (str) and vectors, not {term!r}")

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

    def _query(self, terms: list[Weighted]) -> Analogy:
        """The service's analogy of gensim's weighted terms (terms of weight 0 left out)."""
        if not terms:
            raise ValueError("cannot compute mean with no input")
        positive = [service_term(t.term, t.weight) for t in terms if t.weight > 0]
        negative = [service_term(t.term, -t.weight) for t in terms if t.weight < 0]
        if not positive and not negative:  # gensim's mean is then 0: every cosine 0 (or NaN)
            raise ZeroVector("every term has weight 0: their mean has no direction", status=422)
        return Analogy(positive, negative)

    def _analogy(
        self,
        terms: list[Weighted],
        topn: int,
        restrict: int | None,
        method: Literal["add", "mul"],
        vector_terms: Literal["as_given"] | None = None,
    ) -> list[tuple[str, float]]:
        query = self._query(terms)
        unweighted = [t.term for t in terms if t.weight == 0 and isinstance(t.term, str)]
        given: dict[str, Any] = {"vector_terms": vector_terms} if vector_terms else {}
        try:
            answer = self.client.analogy(
                self.table,
                query.positive,
                query.negative,
                topn,
                method=method,
                exclude=unweighted,
                restrict=restrict,
                exact=self.exact,
                **given,
            )
        except UnknownToken as error:
            raise first_unknown(error.tokens, terms) from None
        refuse_fallback(answer.matched)
        return [(neighbor.token, neighbor.score) for neighbor in answer]

    # Similarity between given keys.

    def similarity(self, w1: Any, w2: Any) -> np.float32:
        """The cosine of two keys' rows (a float32, as gensim's)."""
        first, second = self.rows([w1, w2])
        unit = vector_math.unit_vector
        return np.dot(unit(first), unit(second))

    def distance(self, w1: Any, w2: Any) -> np.float32:
        """1 - similarity(w1, w2)."""
        return 1 - self.similarity(w1, w2)

    def n_similarity(self, ws1: Sequence[Any], ws2: Sequence[Any]) -> np.float32:
        """The cosine of the means of two sets of keys' rows (unknown keys left out)."""
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError("At least one of the passed list is empty.")
        mean1 = self.get_mean_vector(ws1, pre_normalize=False)
        mean2 = self.get_mean_vector(ws2, pre_normalize=False)
        unit = vector_math.unit_vector
        return np.dot(unit(mean1), unit(mean2))

    def distances(self, word_or_vector: Any, other_words: Sequence[Any] = ()) -> np.ndarray:
        """Cosine distances from a key or vector to each of `other_words` (none: every row)."""
        if not other_words:
            return self.all_distances(word_or_vector)
        if isinstance(word_or_vector, str | int | np.integer):
            vector = self.get_vector(word_or_vector)
        else:
            vector = np.asarray(word_or_vector)
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


def _cosmul_dtype(positive: list[Any], negative: list[Any]) -> np.dtype:
    """gensim's dtype for these 3CosMul terms' every-row scores (a key stands as float32)."""
    float32 = np.dtype(np.float32)

    def dtypes(terms: list[Any]) -> list[np.dtype]:
        return [term.dtype if isinstance(term, np.ndarray) else float32 for term in terms]

    return vector_math.cosmul_dtype(dtypes(positive), dtypes(negative))
