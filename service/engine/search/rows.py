"""The rows a search reads, and the exact second step of every search: candidates rescored in
float64 from them.

RowStore: a table's raw float32 rows with what every search step needs from them. The candidate
pass, the float64 rescoring and the analogy term sums all work from these arrays, so each of them
takes a RowStore rather than the search that owns it. There is one copy of the rows: the table's
own (memory-mapped for a prepared table). Every pass scores the raw rows and divides by their
norms; positions in a pass are row numbers.

Rescoring: all queries of a batch are rescored in a few array operations. Each score is one dot
product summed on its own (never a matrix product whose blocking depends on how many candidates
there are), so a query's answer is the same whatever else was in its batch. A batch of one query
(an approximate search serves one query per call) takes a shorter road to the same answer, bit
for bit: one sort of its candidates, one gather, one product and one sum (about 15 numpy calls
against about 30; the path around FAISS was half of a fast-scan query: BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from service.engine.errors import DimensionMismatch, ZeroVector
from service.engine.search.queries import NeighborQuery, Neighbors
from service.engine.tables.table import EmbeddingTable


@dataclass(frozen=True, eq=False)
class RowStore:
    """Raw rows, their float64 norms, and which rows have a direction.

    Zero rows (padding) have no direction: they are never candidates. `indexed` lists the rows
    with a norm, in row order.
    """

    table: EmbeddingTable
    norms64: np.ndarray
    indexed: np.ndarray
    zero: np.ndarray

    @classmethod
    def of(cls, table: EmbeddingTable) -> RowStore:
        """The store of `table`'s rows."""
        norms64 = table.norms64
        positive = norms64 > 0
        indexed = np.flatnonzero(positive).astype(np.int64)
        zero = np.flatnonzero(~positive).astype(np.int64)
        return cls(table, norms64, indexed, zero)

    @property
    def vectors(self) -> np.ndarray:
        """The raw float32 rows."""
        return self.table.vectors

    @property
    def width(self) -> int:
        """Components per row."""
        return self.table.width

    @property
    def rows(self) -> int:
        """Rows in the table."""
        return self.table.rows

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw rows, their norms and the row lists."""
        return int(self.vectors.nbytes + self.norms64.nbytes + self.indexed.nbytes) + int(
            self.zero.nbytes
        )

    def check_vector(self, vector: np.ndarray) -> np.ndarray:
        """`vector` as a flat array of the table's width; DimensionMismatch otherwise."""
        vector = np.asarray(vector).reshape(-1)
        if vector.size != self.width:
            raise DimensionMismatch(self.width, vector.size)
        return vector

    def direction(self, vector: np.ndarray, what: str = "the query vector") -> np.ndarray:
        """`vector` scaled to unit length in float64; ZeroVector when it has no direction."""
        vector = self.check_vector(vector).astype(np.float64)
        norm = np.sqrt(np.sum(vector * vector))
        if not norm > 0:
            raise ZeroVector(what)
        return vector / norm

    def directions(self, rows: np.ndarray) -> np.ndarray:
        """Unit float64 directions of table rows; ZeroVector for a row with no direction."""
        rows = np.asarray(rows, dtype=np.int64)
        zero = self.norms64[rows] == 0
        if zero.any():
            row = int(rows[int(np.argmax(zero))])
            raise ZeroVector(f"row {row} ({self.table.tokens[row]!r})")
        return self.vectors[rows].astype(np.float64) / self.norms64[rows, None]

    def positions_of(self, rows: frozenset[int]) -> np.ndarray:
        """`rows` as a sorted array (the positions a pass masks)."""
        if not rows:
            return np.empty(0, dtype=np.int64)
        return np.sort(np.fromiter(rows, dtype=np.int64, count=len(rows)))

    def searchable(self, restrict: int | None) -> int:
        """How many rows a pass scans: the first `restrict` rows, or all."""
        return self.rows if restrict is None else min(restrict, self.rows)

    def directional(self, restrict: int | None) -> int:
        """How many rows with a direction lie within the first `restrict` rows."""
        if restrict is None:
            return int(self.indexed.size)
        return int(np.searchsorted(self.indexed, restrict))


# Candidates rescored together: 512 rows of 384 float64 are 1.5 MB per temporary.
CHUNK = 512
# Queries rescored together: their candidate and exclusion arrays are the other temporaries
# (256 queries with k=1000 and 1,000 exclusions each held 25 MB of them at once).
QUERY_CHUNK = 32
# The most bytes of candidate rows stored by columns gathered at once for a batch's rescoring
# (10,922 rows of the default table's 384 float32): see _groups.
GATHER_BUDGET = 16 * 2**20
# Candidates of a batch are gathered together when there is at least one in this many rows of
# the table (about every other cache line of a column): the default table's 30,522 rows, from
# 954 candidates on (a batch of about 96 queries with k=10). See _groups.
SHARING = 32
# Candidate-exclusion pairs compared directly (a boolean matrix of this many cells, 64 KiB)
# rather than through np.isin.
SMALL_EXCLUSION_PRODUCT = 65_536


def rescore(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
) -> list[Neighbors]:
    """Each query's candidates scored in float64 from the raw rows, best k first (ties: id)."""
    if len(queries) == 1 and len(positions[0]) <= CHUNK:
        return [rescore_one(store, queries[0], np.asarray(positions[0], dtype=np.int64))]
    return rescore_batch(store, queries, positions)


def rescore_batch(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
) -> list[Neighbors]:
    """rescore() for any number of queries, QUERY_CHUNK at a time."""
    results: list[Neighbors] = []
    for group, gather in _groups(store, positions, len(queries)):
        results.extend(_rescore_group(store, queries[group], positions[group], gather))
    return results


# Rows of a table for ids: (len(ids), width), laid out as gather_rows lays them out.
Source = Callable[[np.ndarray], np.ndarray]


def _groups(
    store: RowStore, positions: Sequence[np.ndarray] | np.ndarray, queries: int
) -> list[tuple[slice, bool]]:
    """Consecutive queries, and whether their candidate rows are gathered together first.

    A row stored by columns is read from `width` places, one cache line each; rows gathered
    together share those lines once they are dense enough, at least one row in SHARING of the
    table. So the candidates of many queries are gathered together, at most GATHER_BUDGET
    bytes of them, when they are that dense (the default table: the rescoring of a batch of 256
    queries 1.3-1.6x as fast, of 128 1.05-1.2x; BENCHMARKS.md). The scores are the same to the
    bit: the same float32 values, summed the same way, only read from a smaller copy. Rows
    stored row after row, sparse candidates, or one query's candidates beyond the budget are
    read from the table itself.
    """
    rows = store.table.rows
    if not stored_by_columns(store.vectors) or sum(map(len, positions)) * SHARING < rows:
        return [(slice(0, queries), False)]
    most = max(1, GATHER_BUDGET // (4 * store.vectors.shape[1]))
    groups: list[tuple[slice, bool]] = []
    start, held = 0, 0
    for query, candidates in enumerate(positions):
        if query > start and held + len(candidates) > most:
            groups.append((slice(start, query), held <= most and held * SHARING >= rows))
            start, held = query, 0
        held += len(candidates)
    groups.append((slice(start, queries), held <= most and held * SHARING >= rows))
    return groups


def _rescore_group(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    gather: bool,
) -> list[Neighbors]:
    """rescore() of one group, QUERY_CHUNK queries at a time (its gathered rows, if any, are
    freed on return: one group's at a time)."""
    source = _gathered(store, positions) if gather else partial(gather_rows, store.vectors)
    results: list[Neighbors] = []
    for start in range(0, len(queries), QUERY_CHUNK):
        part = slice(start, start + QUERY_CHUNK)
        results.extend(_rescore(store, source, queries[part], positions[part]))
    return results


def _gathered(store: RowStore, positions: Sequence[np.ndarray] | np.ndarray) -> Source:
    """Some queries' candidate rows gathered in one pass, then taken from by table id."""
    flat = np.unique(np.concatenate([np.asarray(p, dtype=np.int64) for p in positions]))
    ids = flat[flat.searchsorted(0) :]
    rows = gather_rows(store.vectors, ids)
    return lambda wanted: gather_rows(rows, ids.searchsorted(wanted))


def _rescore(
    store: RowStore,
    source: Source,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
) -> list[Neighbors]:
    counts = [len(p) for p in positions]
    flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in positions])
    owner = np.repeat(np.arange(len(queries)), counts)
    valid = flat >= 0
    ids, owner = flat[valid], owner[valid]
    # Zero rows have no direction (a pass can keep them when it keeps every row).
    keep = (store.norms64[ids] > 0) & ~_excluded(queries, owner, ids, store.table.rows)
    ids, owner = ids[keep], owner[keep]
    scores = _dots(source, ids, np.stack([q.vector for q in queries]), owner)
    scores /= store.norms64[ids]
    order = np.lexsort((ids, -scores, owner))
    ids, scores, owner = ids[order], scores[order], owner[order]
    bounds = np.searchsorted(owner, np.arange(len(queries) + 1))
    starts, ends = bounds[:-1], bounds[1:]
    return [
        Neighbors(ids=ids[start:stop], scores=scores[start:stop])
        for query, start, end in zip(queries, starts, ends, strict=True)
        for stop in [min(start + query.k, end)]
    ]


def rescore_one(store: RowStore, query: NeighborQuery, positions: np.ndarray) -> Neighbors:
    """One query's candidates (-1 pads; at most CHUNK, for the temporaries) rescored: the same
    answer as rescore_batch's, ids and scores to the last bit (tests/engine/test_rescoring.py)."""
    ids = np.sort(positions)  # row order for the gather; ties then fall to the lower id
    ids = ids[ids.searchsorted(0) :]
    norms = store.norms64[ids]
    keep = _kept_one(store, query, ids, norms)
    if keep is not None:
        ids, norms = ids[keep], norms[keep]
    # Summed as _dots sums, to the last bit: float64 products laid out row by row, each row's
    # summed along it (numpy's pairwise sum; summed down the columns, the last bits differ).
    products = np.multiply(gather_rows(store.vectors, ids), query.vector, dtype=np.float64,
                           order="C")  # fmt: skip
    scores = np.add.reduce(products, axis=1) / norms
    best = np.argsort(-scores, kind="stable")[: query.k]
    return Neighbors(ids=ids[best], scores=scores[best])


def _kept_one(
    store: RowStore, query: NeighborQuery, ids: np.ndarray, norms: np.ndarray
) -> np.ndarray | None:
    """Which of one query's candidates are neither zero rows nor excluded; None: all are."""
    keep = None if store.zero.size == 0 else norms > 0
    if not query.exclude:
        return keep
    excluded = np.fromiter(query.exclude, dtype=np.int64, count=len(query.exclude))
    if ids.size * excluded.size <= SMALL_EXCLUSION_PRODUCT:
        kept = (ids[:, None] != excluded[None, :]).all(axis=1)
    else:
        kept = ~np.isin(ids, excluded)
    return kept if keep is None else kept & keep


def _dots(source: Source, ids: np.ndarray, directions: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Float64 dot products of rows `ids` with their owners' directions, CHUNK rows at a time.

    Each dot product is summed on its own, so a score never depends on the other candidates;
    the chunks only keep the float64 temporaries in cache.
    """
    dots = np.empty(ids.size)
    for start in range(0, ids.size, CHUNK):
        # Gathered in row order: rows stored by columns (tables/layout.py) are read from
        # `width` places each, and in order those reads share cache lines (2x faster).
        order = start + np.argsort(ids[start : start + CHUNK], kind="stable")
        raw = source(ids[order]).astype(np.float64)
        dots[order] = np.sum(raw * directions[owner[order]], axis=1)
    return dots


def gather_rows(vectors: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Rows `ids` of `vectors` as a (len(ids), width) array, whatever the layout.

    Rows stored by columns are taken column by column (np.take on the transposed view): each
    column's reads then run forward through one contiguous column. On a 1M x 300 table, 240
    rows took 2.0 ms against 6.1 ms by plain fancy indexing, which walks row by row across
    every column.
    """
    if stored_by_columns(vectors):
        return np.take(vectors.T, ids, axis=1).T
    return vectors[ids]


def stored_by_columns(vectors: np.ndarray) -> bool:
    """Whether `vectors` are stored by columns (their transpose is C order)."""
    return bool(vectors.flags.f_contiguous and not vectors.flags.c_contiguous)


def _excluded(
    queries: Sequence[NeighborQuery], owner: np.ndarray, ids: np.ndarray, rows: int
) -> np.ndarray:
    """Which (query, row) candidate pairs name a row the query excludes."""
    parts = [
        i * rows + np.fromiter(query.exclude, dtype=np.int64, count=len(query.exclude))
        for i, query in enumerate(queries)
        if query.exclude
    ]
    if not parts:
        return np.zeros(ids.size, dtype=bool)
    pairs, excluded = owner * rows + ids, np.concatenate(parts)
    if pairs.size * excluded.size <= SMALL_EXCLUSION_PRODUCT:
        # np.isin sorts both sides: for one query's few exclusions that cost more than the
        # rest of its rescoring (70 us of a 500 us fast-scan query).
        return (pairs[:, None] == excluded[None, :]).any(axis=1)
    return np.isin(pairs, excluded)
