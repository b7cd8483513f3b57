"""The search: L2-normalised rows in a FAISS inner-product index, top-k cosine, analogies, scoring.

Zero rows (padding) have no direction, so they are left out of the index: they never appear as
cosine neighbours, and using one as a query raises ZeroVector.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import faiss
import numpy as np

from service.engine.errors import DimensionMismatch, InvalidQuery, ZeroVector
from service.engine.table import EmbeddingTable

# gensim's most_similar_cosmul adds this to the denominator to avoid dividing by zero.
COSMUL_EPSILON = 1e-6

AnalogyMethod = Literal["add", "mul"]


@dataclass(frozen=True)
class Neighbors:
    """Result rows in descending score order."""

    ids: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True)
class Term:
    """One analogy term: a table row (unit-normalised) or a raw vector (used as given)."""

    row: int | None = None
    vector: np.ndarray | None = None
    weight: float = 1.0


@dataclass(frozen=True)
class NeighborQuery:
    """Top-k cosine neighbours of a direction, minus excluded rows, within the first `restrict`."""

    vector: np.ndarray
    k: int
    exclude: frozenset[int] = field(default_factory=frozenset)
    restrict: int | None = None


@dataclass(frozen=True)
class AnalogyQuery:
    """gensim most_similar (`add`) or most_similar_cosmul (`mul`) over weighted terms."""

    positive: tuple[Term, ...]
    negative: tuple[Term, ...] = ()
    k: int = 10
    method: AnalogyMethod = "add"
    exclude: frozenset[int] = field(default_factory=frozenset)
    restrict: int | None = None

    def input_rows(self) -> frozenset[int]:
        """Rows named as terms: never part of the answer."""
        terms = self.positive + self.negative
        return frozenset(t.row for t in terms if t.row is not None) | self.exclude


@dataclass(frozen=True)
class Scores:
    """Output-layer scoring: top-k rows by raw dot product, optional probabilities and target."""

    ids: np.ndarray
    logits: np.ndarray
    probabilities: np.ndarray | None
    log_partition: float | None
    target_rank: int | None = None
    target_logit: float | None = None
    target_probability: float | None = None


class SimilarityIndex:
    """Exact cosine search over one table's unit-normalised non-zero rows."""

    kind = "IndexFlatIP"

    def __init__(self, table: EmbeddingTable) -> None:
        self.table = table
        norms = table.norms
        self.indexed_rows = np.flatnonzero(norms > 0).astype(np.int64)
        self.positions = np.full(table.rows, -1, dtype=np.int64)
        self.positions[self.indexed_rows] = np.arange(self.indexed_rows.size)
        unit = table.vectors[self.indexed_rows] / norms[self.indexed_rows, None]
        self.faiss_index = faiss.IndexFlatIP(table.width)
        self.faiss_index.add(np.ascontiguousarray(unit, dtype=np.float32))
        # A read-only view of FAISS's own copy, so the unit rows are held once.
        size = self.faiss_index.ntotal * table.width
        self.unit = faiss.rev_swig_ptr(self.faiss_index.get_xb(), size).reshape(-1, table.width)
        self.unit.flags.writeable = False

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw rows, the normalised index and the row maps."""
        maps = self.indexed_rows.nbytes + self.positions.nbytes
        return self.table.vectors.nbytes + self.unit.nbytes + maps

    @property
    def zero_rows(self) -> int:
        """Rows with no direction, left out of the index."""
        return self.table.rows - int(self.indexed_rows.size)

    def unit_rows(self, rows: np.ndarray) -> np.ndarray:
        """Unit-normalised copies of `rows`; raises ZeroVector for a row with no direction."""
        positions = self.positions[rows]
        if (positions < 0).any():
            row = int(rows[int(np.argmax(positions < 0))])
            raise ZeroVector(f"row {row} ({self.table.tokens[row]!r})")
        return self.unit[positions]

    def check_vector(self, vector: np.ndarray) -> np.ndarray:
        """`vector` as float32 of the table's width; raises DimensionMismatch otherwise."""
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vector.size != self.table.width:
            raise DimensionMismatch(self.table.width, vector.size)
        return vector

    def neighbors(self, queries: Sequence[NeighborQuery]) -> list[Neighbors]:
        """Answer many neighbour queries; queries sharing a `restrict` share one FAISS search."""
        results: list[Neighbors | None] = [None] * len(queries)
        for restrict, members in _group_by_restrict(queries).items():
            batch = [queries[i] for i in members]
            for i, result in zip(members, self._search(batch, restrict), strict=True):
                results[i] = result
        return [r for r in results if r is not None]

    def analogies(self, queries: Sequence[AnalogyQuery]) -> list[Neighbors]:
        """Answer many analogy queries; `add` ones go through one batched search."""
        results: list[Neighbors | None] = [None] * len(queries)
        add = [i for i, q in enumerate(queries) if q.method == "add"]
        searches = [self._mean_direction(queries[i]) for i in add]
        for i, result in zip(add, self.neighbors(searches), strict=True):
            results[i] = result
        for i, query in enumerate(queries):
            if query.method == "mul":
                results[i] = self._cosmul(query)
        return [r for r in results if r is not None]

    def similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Cosine of each pair (left[i], right[i]) of rows."""
        a, b = self.unit_rows(left), self.unit_rows(right)
        return np.einsum("ij,ij->i", a, b)

    def similarity_matrix(self, rows: np.ndarray) -> np.ndarray:
        """Cosine of every pair of `rows`, as a square matrix."""
        unit = self.unit_rows(rows)
        return unit @ unit.T

    def score(
        self,
        vector: np.ndarray,
        k: int,
        *,
        softmax: bool = False,
        temperature: float = 1.0,
        target: int | None = None,
    ) -> Scores:
        """Raw dot product of `vector` with every row (a tied output layer): top-k and target."""
        if temperature <= 0:
            raise InvalidQuery("temperature must be positive", temperature=temperature)
        logits = self.table.vectors @ self.check_vector(vector)
        top = _top_k(logits, k)
        log_z = _log_partition(logits, temperature) if softmax else None
        scores = Scores(
            ids=top,
            logits=logits[top],
            probabilities=None
            if log_z is None
            else _probabilities(logits[top], temperature, log_z),
            log_partition=log_z,
        )
        return scores if target is None else _with_target(scores, logits, target, temperature)

    def _search(self, queries: Sequence[NeighborQuery], restrict: int | None) -> list[Neighbors]:
        searchable = self._searchable(restrict)
        if searchable == 0:
            return [_empty() for _ in queries]
        directions = np.stack([self._unit_query(q.vector) for q in queries])
        depth = min(searchable, max(q.k + len(q.exclude) for q in queries))
        params = None
        if searchable < self.faiss_index.ntotal:
            params = faiss.SearchParameters(sel=faiss.IDSelectorRange(0, searchable))  # type: ignore[call-arg]
        scores, positions = self.faiss_index.search(directions, depth, params=params)
        return [self._finish(q, p, s) for q, p, s in zip(queries, positions, scores, strict=True)]

    def _finish(self, query: NeighborQuery, positions: np.ndarray, scores: np.ndarray) -> Neighbors:
        found = positions >= 0
        ids = self.indexed_rows[positions[found]]
        scores = scores[found]
        if query.exclude:
            keep = ~np.isin(ids, np.fromiter(query.exclude, dtype=np.int64))
            ids, scores = ids[keep], scores[keep]
        return Neighbors(ids=ids[: query.k], scores=scores[: query.k])

    def _searchable(self, restrict: int | None) -> int:
        """How many index positions lie within the first `restrict` table rows."""
        if restrict is None:
            return int(self.faiss_index.ntotal)
        return int(np.searchsorted(self.indexed_rows, restrict))

    def _unit_query(self, vector: np.ndarray) -> np.ndarray:
        vector = self.check_vector(vector).astype(np.float64)
        norm = np.linalg.norm(vector)
        if norm == 0:
            raise ZeroVector("the query vector")
        return (vector / norm).astype(np.float32)

    def _term_vectors(self, terms: Sequence[Term], unit: bool = False) -> np.ndarray:
        """Each term as a vector: table rows unit-normalised, raw vectors as given or unit."""
        raw = self._unit_query if unit else self.check_vector
        return np.stack([self._term_vector(term, raw) for term in terms]).astype(np.float32)

    def _term_vector(self, term: Term, raw: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        if term.vector is not None:
            return raw(term.vector)
        if term.row is None:
            raise InvalidQuery("an analogy term needs a row or a vector")
        return self.unit_rows(np.asarray([term.row], dtype=np.int64))[0]

    def _mean_direction(self, query: AnalogyQuery) -> NeighborQuery:
        """gensim's weighted mean of the terms (positive +w, negative -w), as a neighbour query."""
        if not query.positive and not query.negative:
            raise InvalidQuery("an analogy needs at least one term")
        terms = query.positive + query.negative
        signs = [1.0] * len(query.positive) + [-1.0] * len(query.negative)
        weights = np.asarray([s * t.weight for s, t in zip(signs, terms, strict=True)])
        mean = weights.astype(np.float32) @ self._term_vectors(terms)
        if not np.any(mean):
            raise ZeroVector("the weighted mean of the analogy terms")
        return NeighborQuery(mean, query.k, query.input_rows(), query.restrict)

    def _cosmul(self, query: AnalogyQuery) -> Neighbors:
        """Levy & Goldberg's 3CosMul with gensim's shift of cosines to [0, 1].

        Unlike gensim, raw vector terms are unit-normalised too, so that every factor is a
        shifted cosine in [0, 1] (weights act as exponents) and the product stays finite.
        """
        if not query.positive:
            raise InvalidQuery("3CosMul needs at least one positive term")
        searchable = self._searchable(query.restrict)
        unit = self.unit[:searchable]
        positive = (1 + unit @ self._term_vectors(query.positive, unit=True).T) / 2
        product = np.prod(positive ** _weights(query.positive), axis=1)
        if query.negative:
            negative = (1 + unit @ self._term_vectors(query.negative, unit=True).T) / 2
            product = product / (
                np.prod(negative ** _weights(query.negative), axis=1) + COSMUL_EPSILON
            )
        ids = self.indexed_rows[:searchable]
        excluded = np.isin(ids, np.fromiter(query.input_rows(), dtype=np.int64))
        product[excluded] = -np.inf
        top = _top_k(product, min(query.k, int((~excluded).sum())))
        return Neighbors(ids=ids[top], scores=product[top].astype(np.float32))


def _weights(terms: Sequence[Term]) -> np.ndarray:
    return np.asarray([t.weight for t in terms], dtype=np.float32)


def _group_by_restrict(queries: Sequence[NeighborQuery]) -> dict[int | None, list[int]]:
    groups: dict[int | None, list[int]] = {}
    for i, query in enumerate(queries):
        groups.setdefault(query.restrict, []).append(i)
    return groups


def _empty() -> Neighbors:
    return Neighbors(ids=np.empty(0, dtype=np.int64), scores=np.empty(0, dtype=np.float32))


def _top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, largest first (ties: lower index first)."""
    k = min(k, values.size)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    candidates = np.argpartition(-values, k - 1)[:k] if k < values.size else np.arange(values.size)
    order = np.lexsort((candidates, -values[candidates]))
    return candidates[order].astype(np.int64)


def _log_partition(logits: np.ndarray, temperature: float) -> float:
    scaled = logits.astype(np.float64) / temperature
    peak = scaled.max()
    return float(peak + np.log(np.exp(scaled - peak).sum()))


def _probabilities(logits: np.ndarray, temperature: float, log_z: float) -> np.ndarray:
    return np.exp(logits.astype(np.float64) / temperature - log_z)


def _with_target(scores: Scores, logits: np.ndarray, target: int, temperature: float) -> Scores:
    target_logit = logits[target]
    rank = 1 + int((logits > target_logit).sum())
    probability = None
    if scores.log_partition is not None:
        probability = float(np.exp(float(target_logit) / temperature - scores.log_partition))
    return Scores(
        ids=scores.ids,
        logits=scores.logits,
        probabilities=scores.probabilities,
        log_partition=scores.log_partition,
        target_rank=rank,
        target_logit=float(target_logit),
        target_probability=probability,
    )
