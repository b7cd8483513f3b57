"""The search: exact top-k cosine neighbours and analogies over a table's rows.

Per-query preparation (normalising, means) runs on the server's event loop and deliberately
avoids BLAS: OpenBLAS serialises calls from different threads, so a tiny dot product there would
wait for a batch's large matrix product to finish (seen as a convoy in the profile).

Zero rows (padding) have no direction, so they are left out of the index: they never appear as
cosine neighbours, and using one as a query raises ZeroVector.

A search runs in two steps. Candidates come from one pass over the float32 rows for the whole
batch (kernels.py: the compiled pass of dots.c or a BLAS matrix product over the raw rows divided
by their norms, or FAISS's exhaustive search over a unit copy); then each query's few
candidates are rescored in float64 from the raw rows (rescoring.py). The reported scores are
therefore the true cosines, and a query's answer is the same whether it ran alone or in a batch
of any size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NamedTuple, TypeVar

import numpy as np

from service.engine.search.among import among_candidates
from service.engine.search.analogies import plan_analogies, plan_analogy
from service.engine.search.approximate import ApproximateIndex
from service.engine.search.cosmul import cosmul
from service.engine.search.kernels import RESCORE_MARGIN, KernelName, make_kernel
from service.engine.search.queries import (
    Among,
    AnalogyMethod,
    AnalogyQuery,
    CosmulQuery,
    NeighborQuery,
    Neighbors,
    Plan,
    SearchOptions,
    Term,
)
from service.engine.search.rescoring import rescore
from service.engine.search.store import RowStore
from service.engine.search.terms import SHARED_BATCH, candidates_by_terms, shares_terms
from service.engine.tables.layout import row_norms
from service.engine.tables.table import EmbeddingTable

__all__ = ["AnalogyMethod", "AnalogyQuery", "CosineSearch", "NeighborQuery", "Neighbors", "Term"]

KernelName = KernelName
Query = TypeVar("Query")
Result = TypeVar("Result")
# With an approximate index, a `restrict` of at most this many rows is searched exhaustively:
# a pass over them is cheap, and an index filtered to a few rows finds few of them.
EXACT_RESTRICT_ROWS = 100_000


class CosineSearch:
    """Cosine search over one table's non-zero rows: exhaustive, or candidates from an
    approximate index (set when it is built or read), rescored exactly either way."""

    def __init__(
        self,
        table: EmbeddingTable,
        kernel: KernelName = "compiled",
        approximate: ApproximateIndex | None = None,
    ) -> None:
        self.table = table
        self.store = store = RowStore.of(table)
        self.max_norm = float(store.norms64.max(initial=0.0))
        # What bounds a logit: the largest norm of the rows that score (tied: the same rows).
        output = table.output
        self.scoring_max_norm = (
            self.max_norm if output is None else float(row_norms(output).max(initial=0.0))
        )
        self.kernel = make_kernel(kernel, store)
        # Replaced in one assignment when a background build finishes: a search reads it once.
        self.approximate = approximate

    @property
    def kind(self) -> str:
        """How the rows are held and searched."""
        if self.approximate is None:
            return self.kernel.description
        return f"approximate candidates from FAISS {self.approximate.kind}, rescored exactly"

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw rows, their norms, the vocabulary, the kernel and any
        approximate index."""
        held = self.store.nbytes + self.table.vocabulary.nbytes + self.kernel.nbytes
        return held + (0 if self.approximate is None else self.approximate.nbytes)

    @property
    def zero_rows(self) -> int:
        """Rows with no direction, left out of the index."""
        return int(self.store.zero.size)

    def plan(self, query: NeighborQuery) -> NeighborQuery:
        """Validate a neighbour query and make its vector a unit direction (a table row's with
        the row's stored norm)."""
        if query.row is not None:
            return replace(query, vector=self.store.directions(np.asarray([query.row]))[0])
        return replace(query, vector=self.store.direction(query.vector))

    def plan_analogy(self, query: AnalogyQuery) -> Plan:
        """Validate an analogy: `add` becomes a neighbour query of the mean direction, `mul` a
        3CosMul query (analogies.py)."""
        return plan_analogy(self.store, query)

    def plan_analogies(self, queries: Sequence[AnalogyQuery]) -> list[Plan]:
        """plan_analogy for many queries; `add` ones over table rows are planned at once."""
        return plan_analogies(self.store, queries)

    def neighbors(self, queries: Sequence[NeighborQuery]) -> list[Neighbors]:
        """Answer neighbour queries; every query is checked before any search runs."""
        return self.search([self.plan(query) for query in queries])

    def analogies(self, queries: Sequence[AnalogyQuery]) -> list[Neighbors]:
        """Answer analogy queries; every query is checked before any search runs."""
        return self.search(self.plan_analogies(queries))

    def search(self, prepared: Sequence[Plan]) -> list[Neighbors]:
        """Answer prepared queries of both kinds, each kind in one batched pass."""
        prepared = [self._unpadded(query) for query in prepared]
        nearest = [(i, q) for i, q in enumerate(prepared) if isinstance(q, NeighborQuery)]
        products = [(i, q) for i, q in enumerate(prepared) if isinstance(q, CosmulQuery)]
        results: dict[int, Neighbors] = {}
        if nearest:
            found = self._nearest([q for _, q in nearest])
            results.update(zip([i for i, _ in nearest], found, strict=True))
        if products:
            found = cosmul(self.store, self.kernel, [q for _, q in products])
            results.update(zip([i for i, _ in products], found, strict=True))
        return [results[i] for i in range(len(prepared))]

    def _unpadded(self, query: Plan) -> Plan:
        """A query that names no `restrict` searches the table's tokens: a model's padding
        rows (past its tokenizer's tokens) answer only a `restrict` that reaches them, or an
        `among` that names them."""
        unpadded = self.table.searchable_rows
        if query.restrict is not None or unpadded == self.table.rows or _among(query):
            return query
        return replace(query, restrict=unpadded)

    def similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Cosine of each pair (left[i], right[i]) of rows."""
        units = self.store.directions
        return pair_cosines(units(left), units(right))

    def _nearest(self, queries: Sequence[NeighborQuery]) -> list[Neighbors]:
        """Answer prepared neighbour queries; those sharing `restrict` (or `among`) and search
        options share one pass."""
        results: list[Neighbors | None] = [None] * len(queries)
        approximate = self.approximate
        groups: dict[tuple[int | None, SearchOptions | None, Among | None], list[int]] = {}
        for i, query in enumerate(queries):
            options = query.options if self._approximate(approximate, query) else None
            groups.setdefault((query.restrict, options, query.among), []).append(i)
        for (restrict, options, among), members in groups.items():
            batch = [queries[i] for i in members]
            if among is not None:
                found = self._among_pass(batch, among)
            elif approximate is not None and options is not None:
                found = self.approximate_search(approximate, batch, restrict, options)
            else:
                found = self._pass(batch, restrict)
            for i, result in zip(members, found, strict=True):
                results[i] = result
        return [result for result in results if result is not None]

    def _approximate(self, approximate: ApproximateIndex | None, query: NeighborQuery) -> bool:
        """Whether a query takes its candidates from the approximate index (never for a
        candidate set: a pass over its few rows is exact and cheap)."""
        if approximate is None or query.options.exact or query.among is not None:
            return False
        return query.restrict is None or query.restrict > EXACT_RESTRICT_ROWS

    def approximate_search(
        self,
        approximate: ApproximateIndex,
        queries: Sequence[NeighborQuery],
        restrict: int | None,
        options: SearchOptions,
    ) -> list[Neighbors]:
        """Candidates from the index, enough to leave k after the exclusions and zero rows,
        rescored exactly."""
        extra = max(len(q.exclude) for q in queries) + min(self.zero_rows, RESCORE_MARGIN)
        depth = max(q.k for q in queries) + extra + RESCORE_MARGIN
        directions = np.stack([q.vector for q in queries]).astype(np.float32)
        rows = approximate.candidates(directions, depth, restrict, options)
        return rescore(self.store, queries, rows, self.kernel.compiled)

    def _pass(self, queries: Sequence[NeighborQuery], restrict: int | None) -> list[Neighbors]:
        """One candidate pass for queries sharing `restrict`, then the exact rescoring."""
        searchable = self.store.searchable(restrict)
        directional = self.store.directional(restrict)
        # Slack-selected candidates hold every row that can be in the exact top k, so no margin
        # is needed here (FAISS's fixed cut adds its own). Excluded rows are left out of the
        # selection itself, so k candidates suffice, not k plus every exclusion (256 queries
        # with 1,000 exclusions each rescored 1,144 candidates apiece).
        masked = self.kernel.masks_exclusions
        extra = 0 if masked else max(len(q.exclude) for q in queries)
        depth = min(directional, max(q.k for q in queries) + extra)
        if depth == 0:
            return [_empty() for _ in queries]
        excluded = [self.store.positions_of(q.exclude) for q in queries]
        positions: Sequence[np.ndarray] | np.ndarray
        if len(queries) >= SHARED_BATCH and shares_terms(queries, searchable):
            positions = candidates_by_terms(
                self.store, self.kernel, queries, depth, searchable, excluded
            )
        else:
            directions = np.stack([q.vector for q in queries]).astype(np.float32)
            positions = self.kernel.candidates(
                directions, depth, searchable, excluded if masked else None
            )
        return rescore(self.store, queries, positions, self.kernel.compiled)

    def _among_pass(self, queries: Sequence[NeighborQuery], among: Among) -> list[Neighbors]:
        """One candidate pass over a candidate set's rows for queries sharing it, then the
        exact rescoring."""
        rows = among.rows
        directional = int(np.count_nonzero(self.store.norms64[rows] > 0))
        depth = min(directional, max(q.k for q in queries))
        if depth == 0:
            return [_empty() for _ in queries]
        excluded = [self.store.positions_of(q.exclude) for q in queries]
        directions = np.stack([q.vector for q in queries]).astype(np.float32)
        positions = among_candidates(self.kernel, directions, depth, rows, excluded)
        return rescore(self.store, queries, positions, self.kernel.compiled)


def pair_cosines(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cosine of each pair (left[i], right[i]) of unit directions."""
    return np.einsum("ij,ij->i", left, right)


def cosine_matrix(units: np.ndarray) -> np.ndarray:
    """Cosine of every pair of unit directions, as a square matrix."""
    return units @ units.T


def directions(query: Plan) -> int:
    """The work of a prepared query in directions scored against every row: a neighbour or
    3CosAdd query has one, a 3CosMul query one per term."""
    return len(query.terms) if isinstance(query, CosmulQuery) else 1


def _empty() -> Neighbors:
    return Neighbors(ids=np.empty(0, dtype=np.int64), scores=np.empty(0, dtype=np.float64))


def _among(query: Plan) -> bool:
    return isinstance(query, NeighborQuery) and query.among is not None


class SearchItem(NamedTuple):
    """A planned query, the search that answers it, and its work: the directions it scores
    against every row (a neighbour or 3CosAdd query one, a 3CosMul query one per term),
    counted once when the item is made (the request's limit and the batcher both read it)."""

    search: CosineSearch
    plan: Plan
    cost: int

    @classmethod
    def of(cls, search: CosineSearch, plan: Plan) -> SearchItem:
        """The item of `plan` on `search`."""
        return cls(search, plan, directions(plan))


def search_items(items: Sequence[SearchItem]) -> list[Neighbors]:
    """Items that may belong to different tables (a batcher's batch): one pass per table."""
    return per_search([(item.search, item.plan) for item in items], CosineSearch.search)


def per_search(
    items: Sequence[tuple[CosineSearch, Query]],
    run: Callable[[CosineSearch, list[Query]], list[Result]],
) -> list[Result]:
    """`run` once per search over its items, the results back in the items' order."""
    groups: dict[int, list[int]] = {}
    for i, (search, _) in enumerate(items):
        groups.setdefault(id(search), []).append(i)
    results: list[Result | None] = [None] * len(items)
    for members in groups.values():
        search = items[members[0]][0]
        for i, result in zip(members, run(search, [items[i][1] for i in members]), strict=True):
            results[i] = result
    return [result for result in results if result is not None]
