"""The search: L2-normalised rows, exact top-k cosine neighbours and analogies.

Per-query preparation (normalising, means) runs on the server's event loop and deliberately
avoids BLAS: OpenBLAS serialises calls from different threads, so a tiny dot product there would
wait for a batch's large matrix product to finish (seen as a convoy in the profile).

Zero rows (padding) have no direction, so they are left out of the index: they never appear as
cosine neighbours, and using one as a query raises ZeroVector.

A search runs in two steps. Candidates come from one pass over the float32 unit rows for the
whole batch (kernels.py: a BLAS matrix product, or FAISS's IndexFlatIP); then each query's few
candidates are
rescored in float64 from the raw rows. The reported scores are therefore the true cosines, and
a query's answer is the same whether it ran alone or in a batch of any size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from service.engine.errors import DimensionMismatch, InvalidQuery, ZeroVector
from service.engine.kernels import RESCORE_MARGIN, KernelName, make_kernel
from service.engine.queries import (
    AnalogyMethod,
    AnalogyQuery,
    CosmulQuery,
    NeighborQuery,
    Neighbors,
    Term,
)
from service.engine.rescoring import rescore
from service.engine.table import EmbeddingTable
from service.engine.terms import candidates_by_terms, mean_directions, shares_terms
from service.engine.topk import candidate_rows

__all__ = ["AnalogyMethod", "AnalogyQuery", "NeighborQuery", "Neighbors", "SimilarityIndex", "Term"]

# gensim's most_similar_cosmul adds this to the denominator to avoid dividing by zero.
COSMUL_EPSILON = 1e-6
# Relative slack for 3CosMul candidates, far above the float32 error of its factors.
COSMUL_SLACK = 1e-4

SearchKernel = KernelName
Prepared = NeighborQuery | CosmulQuery


class SimilarityIndex:
    """Exact cosine search over one table's unit-normalised non-zero rows."""

    def __init__(self, table: EmbeddingTable, kernel: KernelName = "blas") -> None:
        self.table = table
        vectors = table.vectors
        self.norms64 = np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64))
        self.indexed_rows = np.flatnonzero(self.norms64 > 0).astype(np.int64)
        self.positions = np.full(table.rows, -1, dtype=np.int64)
        self.positions[self.indexed_rows] = np.arange(self.indexed_rows.size)
        self.max_norm = float(self.norms64.max())
        norms = self.norms64[self.indexed_rows, None].astype(np.float32)
        self.kernel = make_kernel(kernel, vectors[self.indexed_rows] / norms)

    @property
    def kind(self) -> str:
        """How the unit rows are held and searched."""
        return self.kernel.description

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw rows, the unit rows and the row maps."""
        extras = self.indexed_rows.nbytes + self.positions.nbytes + self.norms64.nbytes
        return self.table.vectors.nbytes + self.kernel.nbytes + extras

    @property
    def zero_rows(self) -> int:
        """Rows with no direction, left out of the index."""
        return self.table.rows - int(self.indexed_rows.size)

    def check_vector(self, vector: np.ndarray) -> np.ndarray:
        """`vector` as a flat array of the table's width; DimensionMismatch otherwise."""
        vector = np.asarray(vector).reshape(-1)
        if vector.size != self.table.width:
            raise DimensionMismatch(self.table.width, vector.size)
        return vector

    def direction(self, vector: np.ndarray, what: str = "the query vector") -> np.ndarray:
        """`vector` scaled to unit length in float64; ZeroVector when it has no direction."""
        vector = self.check_vector(vector).astype(np.float64)
        norm = np.sqrt(np.sum(vector * vector))
        if not norm > 0:
            raise ZeroVector(what)
        return vector / norm

    def row_directions(self, rows: np.ndarray) -> np.ndarray:
        """Unit float64 directions of table rows; ZeroVector for a row with no direction."""
        rows = np.asarray(rows, dtype=np.int64)
        zero = self.norms64[rows] == 0
        if zero.any():
            row = int(rows[int(np.argmax(zero))])
            raise ZeroVector(f"row {row} ({self.table.tokens[row]!r})")
        return self.table.vectors[rows].astype(np.float64) / self.norms64[rows, None]

    def cosines(self, rows: np.ndarray, directions: np.ndarray) -> np.ndarray:
        """Cosines of raw `rows` (axis 0) with unit `directions` (axis 1), in float64.

        Each dot product is summed on its own (not by a matrix product whose blocking depends on
        how many rows there are), so a row's score never depends on the other candidates.
        """
        raw = self.table.vectors[rows].astype(np.float64)
        dots = np.sum(raw[:, None, :] * directions[None, :, :], axis=2)
        return dots / self.norms64[rows, None]

    def prepare(self, query: NeighborQuery) -> NeighborQuery:
        """Validate a neighbour query and make its vector a unit direction."""
        return replace(query, vector=self.direction(query.vector))

    def prepare_analogy(self, query: AnalogyQuery) -> Prepared:
        """Validate an analogy: `add` becomes a neighbour query of the mean direction."""
        if query.method == "mul":
            return self._prepare_cosmul(query)
        if _rows_only_add(query):
            return mean_directions(self, [query])[0]
        return self._mean_direction(query)

    def neighbors(self, queries: Sequence[NeighborQuery]) -> list[Neighbors]:
        """Answer neighbour queries; every query is checked before any search runs."""
        return self.search([self.prepare(query) for query in queries])

    def analogies(self, queries: Sequence[AnalogyQuery]) -> list[Neighbors]:
        """Answer analogy queries; every query is checked before any search runs."""
        return self.answer(self.prepare_analogies(queries))

    def prepare_analogies(self, queries: Sequence[AnalogyQuery]) -> list[Prepared]:
        """prepare_analogy for many queries; `add` ones over table rows are prepared at once."""
        together = [i for i, query in enumerate(queries) if _rows_only_add(query)]
        prepared: dict[int, Prepared] = {}
        if together:
            directions = mean_directions(self, [queries[i] for i in together])
            prepared.update(zip(together, directions, strict=True))
        return [
            prepared[i] if i in prepared else self.prepare_analogy(q) for i, q in enumerate(queries)
        ]

    def answer(self, prepared: Sequence[Prepared]) -> list[Neighbors]:
        """Answer prepared queries of both kinds, each kind in one batched pass."""
        nearest = [(i, q) for i, q in enumerate(prepared) if isinstance(q, NeighborQuery)]
        cosmul = [(i, q) for i, q in enumerate(prepared) if isinstance(q, CosmulQuery)]
        results: dict[int, Neighbors] = {}
        if nearest:
            found = self.search([q for _, q in nearest])
            results.update(zip([i for i, _ in nearest], found, strict=True))
        if cosmul:
            found = self._cosmul([q for _, q in cosmul])
            results.update(zip([i for i, _ in cosmul], found, strict=True))
        return [results[i] for i in range(len(prepared))]

    def search(self, queries: Sequence[NeighborQuery]) -> list[Neighbors]:
        """Answer prepared neighbour queries; those sharing a `restrict` share one pass."""
        results: list[Neighbors | None] = [None] * len(queries)
        groups: dict[int | None, list[int]] = {}
        for i, query in enumerate(queries):
            groups.setdefault(query.restrict, []).append(i)
        for restrict, members in groups.items():
            batch = [queries[i] for i in members]
            for i, result in zip(members, self._search(batch, restrict), strict=True):
                results[i] = result
        return [result for result in results if result is not None]

    def similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Cosine of each pair (left[i], right[i]) of rows."""
        return np.einsum("ij,ij->i", self.row_directions(left), self.row_directions(right))

    def similarity_matrix(self, rows: np.ndarray) -> np.ndarray:
        """Cosine of every pair of `rows`, as a square matrix."""
        directions = self.row_directions(rows)
        return directions @ directions.T

    def searchable(self, restrict: int | None) -> int:
        """How many index positions lie within the first `restrict` table rows."""
        if restrict is None:
            return int(self.indexed_rows.size)
        return int(np.searchsorted(self.indexed_rows, restrict))

    def _search(self, queries: Sequence[NeighborQuery], restrict: int | None) -> list[Neighbors]:
        searchable = self.searchable(restrict)
        # Slack-selected candidates hold every row that can be in the exact top k, so no margin
        # is needed here (FAISS's fixed cut adds its own).
        depth = min(searchable, max(q.k + len(q.exclude) for q in queries))
        if depth == 0:
            return [_empty() for _ in queries]
        positions: Sequence[np.ndarray] | np.ndarray
        if shares_terms(queries):
            positions = candidates_by_terms(self, queries, depth, searchable)
        else:
            directions = np.stack([q.vector for q in queries]).astype(np.float32)
            positions = self.kernel.candidates(directions, depth, searchable)
        return rescore(self, queries, positions)

    def _term_vectors(self, terms: Sequence[Term], unit: bool) -> np.ndarray:
        """Terms as float64 rows: table rows unit-normalised; raw vectors as given, or unit."""
        return np.stack([self._term_vector(term, unit) for term in terms])

    def _term_vector(self, term: Term, unit: bool) -> np.ndarray:
        if term.vector is not None:
            if unit:
                return self.direction(term.vector, "an analogy vector term")
            return self.check_vector(term.vector).astype(np.float64)
        if term.row is None:
            raise InvalidQuery("an analogy term needs a row or a vector")
        return self.row_directions(np.asarray([term.row]))[0]

    def _mean_direction(self, query: AnalogyQuery) -> NeighborQuery:
        """gensim's weighted mean of terms that include raw vectors, as a neighbour query.

        Analogies over table rows only go through terms.mean_directions instead.
        """
        terms = query.positive + query.negative
        if not terms:
            raise InvalidQuery("an analogy needs at least one term")
        signs = [1.0] * len(query.positive) + [-1.0] * len(query.negative)
        weights = np.asarray([s * t.weight for s, t in zip(signs, terms, strict=True)])
        mean = np.sum(weights[:, None] * self._term_vectors(terms, unit=False), axis=0)
        direction = self.direction(mean, "the weighted mean of the analogy terms")
        return NeighborQuery(direction, query.k, query.input_rows(), query.restrict)

    def _prepare_cosmul(self, query: AnalogyQuery) -> CosmulQuery:
        """3CosMul terms as unit vectors, so every factor is a shifted cosine in [0, 1]."""
        if not query.positive:
            raise InvalidQuery("3CosMul needs at least one positive term")
        terms = query.positive + query.negative
        return CosmulQuery(
            terms=self._term_vectors(terms, unit=True),
            exponents=np.asarray([t.weight for t in terms], dtype=np.float64),
            positives=len(query.positive),
            k=query.k,
            exclude=query.input_rows(),
            restrict=query.restrict,
        )

    def _cosmul(self, queries: Sequence[CosmulQuery]) -> list[Neighbors]:
        """Levy & Goldberg's 3CosMul with gensim's shift of cosines to [0, 1]."""
        terms = np.concatenate([q.terms for q in queries]).astype(np.float32)
        cosines = self.kernel.scores(terms, self.searchable(None)).T
        results, start = [], 0
        for query in queries:
            columns = cosines[:, start : start + len(query.terms)]
            start += len(query.terms)
            results.append(self._cosmul_one(query, columns))
        return results

    def _cosmul_one(self, query: CosmulQuery, cosines: np.ndarray) -> Neighbors:
        searchable = self.searchable(query.restrict)
        objective = cosmul_objective(cosines[:searchable], query)
        ids = self.indexed_rows[:searchable]
        objective[np.isin(ids, np.fromiter(query.exclude, dtype=np.int64))] = -np.inf
        depth = min(query.k + RESCORE_MARGIN, searchable)
        # The objective is a product of float32-derived factors; keep near-ties for rescoring.
        slack = COSMUL_SLACK * np.abs(objective).max(initial=0.0)
        candidates = candidate_rows(objective[None, :], depth, slack)[0] if depth else ids[:0]
        candidates = candidates[objective[candidates] > -np.inf]
        exact = cosmul_objective(self.cosines(ids[candidates], query.terms), query)
        order = np.lexsort((ids[candidates], -exact))[: query.k]
        return Neighbors(ids=ids[candidates][order], scores=exact[order])


def cosmul_objective(cosines: np.ndarray, query: CosmulQuery) -> np.ndarray:
    """Product of shifted positive cosines over (product of shifted negatives + epsilon)."""
    shifted = (1 + cosines.astype(np.float64)) / 2
    powered = shifted**query.exponents
    objective = np.prod(powered[:, : query.positives], axis=1)
    if query.positives < len(query.exponents):
        objective /= np.prod(powered[:, query.positives :], axis=1) + COSMUL_EPSILON
    return objective


def _empty() -> Neighbors:
    return Neighbors(ids=np.empty(0, dtype=np.int64), scores=np.empty(0, dtype=np.float64))


def _rows_only_add(query: AnalogyQuery) -> bool:
    terms = query.positive + query.negative
    return query.method == "add" and bool(terms) and all(t.vector is None for t in terms)
